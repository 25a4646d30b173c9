/**
 * Names and labels from every source are clean text, on SQLite and PostgreSQL: control and bidirectional
 * characters and private keys answer 400 naming the field (or the file's line), never 500, never stored,
 * and no answer quotes a private key. GET /service shows a token narrowed to service:read no wallet names.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuth, bearer, request, TEST_ADMIN_PASSWORD } from '../support/server.js';
import { ensureWebAssets, WebClient } from '../support/web-client.js';
import { startWalletWorld, wallets, type WalletWorld } from './wallet-helpers.js';

const w = wallets.w_wsh2of3!;
const tprv = w.keys[0].tprv as string;
/** The parts of a key an error could quote: long enough to be the key, not its common `tprv8Zgx` start. */
const keyParts = (key: string) => [key.slice(8, 24), key.slice(-16)];

const coldcardFile = (derivation: string, keyOf: (k: any) => string = (k) => k.tpub) =>
  ['# Coldcard multisig setup', 'Name: Tprv test', 'Policy: 2 of 3', 'Format: P2WSH', `Derivation: ${derivation}`, ...w.keys.map((k: any) => `${k.fingerprint.toUpperCase()}: ${keyOf(k)}`)].join('\n');

describe.each(['sqlite', 'postgres'] as const)('clean text: %s', (database) => {
  let world: WalletWorld;
  const api = () => world.server.api;
  const post = (json: unknown) => request(`${api()}/wallets`, { method: 'POST', headers: world.auth, json });
  const names = async () => ((await request(`${api()}/wallets`, { headers: world.auth })).body.wallets as any[]).map((x) => x.name);

  beforeAll(async () => {
    ensureWebAssets();
    world = await startWalletWorld({ snapshot: 5 }, { database });
    const created = await post({ name: 'Vault', alias: 'vault', recv_descriptor: w.recv_descriptor, change_descriptor: w.change_descriptor, birthday: 0 });
    expect(created.status, created.text).toBe(201);
  }, 60_000);
  afterAll(() => world?.close());

  it.each([
    ['ESC sequence', 'Vault\u001b[2J', 'U+001B'],
    ['line break', 'Vault\nforged row', 'U+000A'],
    ['carriage return', 'Vault\rX', 'U+000D'],
    ['BEL', 'Vault\u0007', 'U+0007'],
    ['right-to-left override', 'Vault\u202egpj.exe', 'U+202E'],
    ['isolate', 'Vault\u2067x', 'U+2067'],
    ['C1 control', 'Vault\u009b31m', 'U+009B'],
  ])('a wallet name with a %s: 400 naming /name, nothing stored', async (_what, name, codePoint) => {
    const response = await post({ name, recv_descriptor: w.recv_descriptor, change_descriptor: w.change_descriptor, birthday: 0 });
    expect(response.status, response.text).toBe(400);
    expect(response.body.errors).toEqual([{ path: '/name', message: expect.stringContaining(codePoint) }]);
    const renamed = await request(`${api()}/wallets/vault`, { method: 'PATCH', headers: world.auth, json: { name } });
    expect(renamed.status, renamed.text).toBe(400);
    expect(await names()).toEqual(['Vault']);
  });

  it('a key label holding a tprv: 400 naming the label, the key not in the answer; a label that only starts like one is fine', async () => {
    const response = await request(`${api()}/wallets/vault`, {
      method: 'PATCH',
      headers: world.auth,
      json: { labels: [{ fingerprint: w.keys[0].fingerprint, label: `backup ${tprv}` }] },
    });
    expect(response.status, response.text).toBe(400);
    expect(response.body.errors[0].path).toBe('/labels/0/label');
    expect(response.body.errors[0].message).toMatch(/private key/);
    for (const part of keyParts(tprv)) expect(response.text).not.toContain(part);
    const fine = await request(`${api()}/wallets/vault`, { method: 'PATCH', headers: world.auth, json: { labels: [{ fingerprint: w.keys[0].fingerprint, label: 'tprv is the prefix' }] } });
    expect(fine.status, fine.text).toBe(200);
  });

  it('a label file line with NUL, or with an ESC, or with a tprv: 400 invalid_labels naming each line, never 500', async () => {
    const txid = 'ab'.repeat(32);
    const file = [
      JSON.stringify({ type: 'tx', ref: txid, label: 'fine' }),
      JSON.stringify({ type: 'tx', ref: txid, label: 'a\u0000b' }),
      JSON.stringify({ type: 'tx', ref: txid, label: '\u001b]0;owned\u0007' }),
      JSON.stringify({ type: 'tx', ref: txid, label: tprv }),
    ].join('\n');
    const response = await request(`${api()}/wallets/vault/labels`, { method: 'POST', headers: { ...world.auth, 'content-type': 'application/jsonl' }, body: file });
    expect(response.status, response.text).toBe(400);
    expect(response.body.code).toBe('invalid_labels');
    expect(response.body.errors.map((e: any) => e.path)).toEqual(['/2', '/3', '/4']);
    expect(response.body.errors[0].message).toMatch(/^line 2: label must not contain .*U\+0000/);
    for (const part of keyParts(tprv)) expect(response.text).not.toContain(part);
  });

  it('a Specter file whose device label holds NUL: 400 invalid_wallet_file naming the field; nothing stored', async () => {
    const specter = { label: 'Specter vault', blockheight: 0, descriptor: w.recv_descriptor, devices: w.keys.map((_k: any, i: number) => ({ type: 'other', label: i === 1 ? 'Bob\u0000' : `Key ${i}` })) };
    const response = await post({ import: JSON.stringify(specter) });
    expect(response.status, response.text).toBe(400);
    expect(response.body.code).toBe('invalid_wallet_file');
    expect(response.body.errors[0]).toMatchObject({ path: '/import', message: expect.stringContaining('devices[1].label') });
    const named = await post({ import: JSON.stringify({ ...specter, label: 'Evil\u202eName', devices: [] }) });
    expect(named.status, named.text).toBe(400);
    expect(named.body.errors[0].message).toMatch(/"label" must not contain .*U\+202E/);
    expect(await names()).toEqual(['Vault']);
  });

  it('a Coldcard file with a tprv, as the derivation or as a key: 400, and no answer quotes the key', async () => {
    const asDerivation = await post({ import: coldcardFile(tprv), birthday: 0 });
    expect(asDerivation.status, asDerivation.text).toBe(400);
    expect(asDerivation.body.code).toBe('invalid_wallet_file');
    expect(asDerivation.body.message).toMatch(/Line 5: invalid derivation/);
    const asKey = await post({ import: coldcardFile(w.keys[0].derivation, (k) => k.tprv), birthday: 0 });
    expect(asKey.status, asKey.text).toBe(400);
    expect(asKey.body.message).toMatch(/private keys are not accepted/i);
    const asField = await post({ import: `${coldcardFile(w.keys[0].derivation)}\n${tprv}: x`, birthday: 0 });
    expect(asField.status, asField.text).toBe(400);
    for (const response of [asDerivation, asKey, asField]) {
      for (const key of w.keys.map((k: any) => k.tprv as string)) for (const part of keyParts(key)) expect(response.text).not.toContain(part);
      for (const part of keyParts(tprv.toLowerCase())) expect(response.text).not.toContain(part);
    }
    const named = await post({ import: coldcardFile(w.keys[0].derivation).replace('Name: Tprv test', 'Name: Tprv\u001b[8m'), birthday: 0 });
    expect(named.status, named.text).toBe(400);
    expect(named.body.message).toMatch(/Line 2: the name must not contain .*U\+001B/);
    expect(await names()).toEqual(['Vault']);
  });

  it('the web forms refuse the same: a new wallet named with an override keeps the form with the refusal; an address label with ESC stores nothing', async () => {
    const client = new WebClient(world.server.url);
    await client.signIn('admin', TEST_ADMIN_PASSWORD);
    const descriptor = wallets.w_wpkh!.recv_descriptor.replace('/0/*', '/<0;1>/*').replace(/#.*$/, '');
    const page = await client.post('/wallets/new', { mode: 'descriptor', name: 'Web\u202evault', descriptor, birthday: '0' });
    expect(page.status).toBe(400);
    expect(page.text).toContain('id="name-error"');
    expect(page.text).toContain('U+202E');
    const address = (await request(`${api()}/wallets/vault`, { headers: world.auth })).body.address as string;
    const label = await client.post('/wallets/vault/labels', { address, label: 'x\u001b[2J', back: '/wallets/vault' });
    expect(label.status).toBe(400);
    const labels = await request(`${api()}/wallets/vault/labels`, { headers: world.auth });
    expect(labels.text).not.toContain('"type":"addr"');
    expect(await names()).toEqual(['Vault']);
  });

  it('GET /service: a token narrowed to service:read sees the service and no wallet names; with wallets:read too, the names', async () => {
    const narrow = async (permissions: string[]) => {
      const created = await request(`${api()}/token`, {
        method: 'POST',
        headers: { authorization: basicAuth('admin', world.server.adminPassword) },
        json: { jwt_token_description: `narrow ${permissions.join(' ')}`, jwt_token_life: '1 hours', permissions },
      });
      expect(created.status, created.text).toBe(201);
      return { authorization: bearer(created.body.jwt_token) };
    };
    const serviceOnly = await request(`${api()}/service`, { headers: await narrow(['service:read']) });
    expect(serviceOnly.status, serviceOnly.text).toBe(200);
    expect(serviceOnly.body).toMatchObject({ network: 'regtest', wallets_names: [], alias_name: {}, name_alias: {}, wallets_alias: [] });
    const withWallets = await request(`${api()}/service`, { headers: await narrow(['service:read', 'wallets:read']) });
    expect(withWallets.body.wallets_names).toEqual(['Vault']);
    const full = await request(`${api()}/service`, { headers: world.auth });
    expect(full.body.wallets_alias).toEqual(['vault']);
  });
});
