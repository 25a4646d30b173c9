/**
 * Wallet setup files over HTTP: `import` on wallet creation (format detected or named), the export route in
 * every format, and each export imported back as the same wallet. Files of the tools' own test data
 * (test/vectors/<format>/) and files built from the regtest fixture keys.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createToken, request } from '../support/server.js';
import { startWalletWorld, wallets, type WalletWorld } from './wallet-helpers.js';

const vector = (path: string): string => readFileSync(new URL(`../vectors/${path}`, import.meta.url), 'utf8');
const FORMATS = ['descriptor', 'bsms', 'coldcard', 'specter', 'caravan'] as const;

let world: WalletWorld;
let bob: { authorization: string };
const post = (json: unknown) => request(`${world.server.api}/wallets`, { method: 'POST', headers: world.auth, json });
const walletCount = async () => (await request(`${world.server.api}/wallets`, { headers: world.auth })).body.wallets.length as number;
const addressesOf = async (alias: string) => {
  const list = await request(`${world.server.api}/wallets/${alias}/addresses?limit=5`, { headers: world.auth });
  return list.body;
};

beforeAll(async () => {
  world = await startWalletWorld({ snapshot: 5 });
  await world.server.running.runtime.services.users.addUser('bob', 'bob-password-123', { admin: false });
  bob = { authorization: bearer((await createToken(world.server, 'bob', 'bob-password-123', 'bob')).jwt_token) };
  const w = wallets.w_wsh2of3!;
  const policy = {
    type: 'wsh-sortedmulti',
    threshold: 2,
    keys: w.keys.map((k: any, i: number) => ({ key: `[${k.fingerprint}/${k.derivation.slice(2)}]${k.tpub}`, label: `Signer ${i + 1}` })),
  };
  const created = await post({ name: 'Family vault', alias: 'vault', policy, birthday: 3 });
  expect(created.status, created.text).toBe(201);
}, 60_000);
afterAll(() => world?.close());

describe('import on wallet creation', () => {
  it('creates a wallet from the Coldcard firmware export, taking its name', async () => {
    const response = await post({ import: vector('coldcard/firmware-export-p2wsh-myself.txt'), birthday: 0 });
    expect(response.status, response.text).toBe(201);
    expect(response.body).toMatchObject({ alias: 'cc-2-of-4', name: 'CC-2-of-4', network: 'regtest', address_type: 'bech32', sigs_required: 2, sigs_total: 4 });
    expect(response.body.keys.map((k: any) => k.fingerprint)).toEqual(['0f056943', '6ba6cfd0', '747b698e', '7bb026be']);
  });

  it('the request names and labels win over the file; the format may be named', async () => {
    const response = await post({
      import: vector('coldcard/caravan-wc-p2wsh_t.txt'),
      import_format: 'coldcard',
      name: 'Given name',
      alias: 'given',
      key_labels: [{ fingerprint: 'f57ec65d', label: 'Mine' }],
      birthday: 0,
    });
    expect(response.status, response.text).toBe(201);
    expect(response.body.name).toBe('Given name');
    expect(response.body.keys.find((k: any) => k.fingerprint === 'f57ec65d').label).toBe('Mine');
  });

  it('refuses faulty files with the right status, naming the fault, and writes nothing', async () => {
    const before = await walletCount();
    const cases: [unknown, number, string][] = [
      [{ import: 'not a wallet file' }, 400, 'unknown_wallet_file'],
      [{ import: vector('coldcard/firmware-export-p2wsh-myself.txt').replace('Policy: 2 of 4', 'Policy: 5 of 4') }, 422, 'invalid_threshold'],
      [{ import: vector('caravan/caravan-bitcoin-2-of-2-P2WSH_MAINNET.json') }, 422, 'wrong_network'],
      [{ import: vector('caravan/caravan-bitcoin-2-of-2-P2WSH_TESTNET.json') }, 422, 'wrong_network'],
      [{ import: vector('descriptor/sparrow-descriptor-multipath.txt'), name: 'x' }, 422, 'wrong_network'],
      [{ import: vector('coldcard/firmware-export-p2wsh-myself.txt'), import_format: 'caravan' }, 400, 'invalid_wallet_file'],
      [{ import: vector('coldcard/firmware-export-p2wsh-myself.txt'), import_format: 'electrum' }, 400, 'invalid_request'],
      [{ import: vector('coldcard/firmware-export-p2wsh-myself.txt'), descriptor: wallets.w_wpkh!.recv_descriptor }, 400, 'invalid_request'],
      [{ import: vector('specter/sparrow-specter-wallet.json') }, 422, 'wrong_network'],
    ];
    for (const [json, status, code] of cases) {
      const response = await post(json);
      expect(response.status, response.text).toBe(status);
      expect(response.body.code, response.text).toBe(code);
      expect(response.body.message).not.toMatch(/at .*\.ts|stack/i);
    }
    // A BSMS record whose first address is not the descriptor's: built from a regtest export, one address changed.
    const bsms = (await request(`${world.server.api}/wallets/vault/export?format=bsms`, { headers: world.auth })).text.split('\n');
    bsms[3] = (await addressesOf('vault'))[1]?.address ?? 'bcrt1qxxxx';
    const mismatch = await post({ import: bsms.join('\n'), name: 'Mismatch' });
    expect(mismatch.status, mismatch.text).toBe(422);
    expect(mismatch.body.code).toBe('address_mismatch');
    expect(await walletCount()).toBe(before);
  });
});

describe('export', () => {
  it.each(FORMATS)('%s: a named file that imports back as the same wallet', async (format) => {
    const original = await request(`${world.server.api}/wallets/vault`, { headers: world.auth });
    const exported = await request(`${world.server.api}/wallets/vault/export?format=${format}`, { headers: world.auth });
    expect(exported.status, exported.text).toBe(200);
    const json = format === 'specter' || format === 'caravan';
    expect(exported.headers.get('content-type')).toMatch(json ? /^application\/json/ : /^text\/plain/);
    expect(exported.headers.get('content-disposition')).toBe(`attachment; filename="vault-${format}.${json ? 'json' : format === 'bsms' ? 'bsms' : 'txt'}"`);
    const back = await post({ import: exported.text, alias: `back-${format}`, ...(json || format === 'coldcard' ? {} : { name: 'Back' }), ...(format === 'specter' ? {} : { birthday: 0 }) });
    expect(back.status, back.text).toBe(201);
    expect(back.body.recv_descriptor).toBe(original.body.recv_descriptor);
    expect(back.body.change_descriptor).toBe(original.body.change_descriptor);
    expect(back.body.address).toBe(original.body.address);
    expect(await addressesOf(`back-${format}`)).toEqual(await addressesOf('vault'));
    if (format !== 'descriptor' && format !== 'bsms') expect(back.body.name).toBe('Family vault');
    if (json) expect(back.body.keys.map((k: any) => k.label)).toEqual(['Signer 1', 'Signer 2', 'Signer 3']);
    if (format === 'specter') {
      // The file's blockheight is the birthday when the request gives none.
      const birthdayOf = (alias: string) => world.server.running.runtime.store.wallets.findByAlias(alias).then((w) => w?.birthday);
      expect(await birthdayOf('back-specter')).toBe(3);
    }
  });

  it('a descriptor or BSMS file, which carries no name, imports back under its alias, or else its kind with a suffix when taken', async () => {
    const fileOf = async (format: string) => (await request(`${world.server.api}/wallets/vault/export?format=${format}`, { headers: world.auth })).text;
    const first = await post({ import: await fileOf('descriptor'), birthday: 0 });
    expect(first.status, first.text).toBe(201);
    expect(first.body).toMatchObject({ name: '2-of-3 wsh-sortedmulti', alias: '2-of-3-wsh-sortedmulti' });
    const second = await post({ import: await fileOf('bsms'), birthday: 0 });
    expect(second.status, second.text).toBe(201);
    expect(second.body.name).toBe('2-of-3 wsh-sortedmulti (2)');
    const aliased = await post({ import: await fileOf('bsms'), alias: 'vault-copy', birthday: 0 });
    expect(aliased.status, aliased.text).toBe(201);
    expect(aliased.body).toMatchObject({ name: 'vault-copy', alias: 'vault-copy' });
    // A name given wins; an empty one is still refused.
    expect((await post({ import: await fileOf('descriptor'), name: '', birthday: 0 })).status).toBe(400);
    const w = wallets.w_wpkh!;
    const single = await post({ import: `${w.recv_descriptor}\n${w.change_descriptor}\n`, birthday: 0 });
    expect(single.status, single.text).toBe(201);
    expect(single.body.name).toBe('single-key wpkh');
  });

  it('refuses a format that cannot describe the wallet, an unknown format, and a wallet the caller cannot see', async () => {
    const w = wallets.w_wpkh!;
    expect((await post({ name: 'Single', alias: 'single', recv_descriptor: w.recv_descriptor, change_descriptor: w.change_descriptor, birthday: 0 })).status).toBe(201);
    const coldcard = await request(`${world.server.api}/wallets/single/export?format=coldcard`, { headers: world.auth });
    expect(coldcard.status).toBe(422);
    expect(coldcard.body.code).toBe('export_unsupported');
    const unknown = await request(`${world.server.api}/wallets/vault/export?format=electrum`, { headers: world.auth });
    expect(unknown.status).toBe(400);
    const hidden = await request(`${world.server.api}/wallets/vault/export?format=descriptor`, { headers: bob });
    expect(hidden.status).toBe(404);
  });
});
