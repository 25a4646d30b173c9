/**
 * BIP329 labels over HTTP on SQLite and PostgreSQL, with a wallet synced from the regtest fixtures: export,
 * import (merge newer-wins, unknown references counted, freezing), all-or-nothing refusal naming the faulty
 * lines (BIP329's own example, of mainnet, on a regtest service), a lossless round trip into a second wallet,
 * imports at once (on two instances sharing one PostgreSQL schema too), key labels the owner's alone, and the
 * limits: 100,000 lines with the final newline an export writes, 32 MiB.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createToken, request, startTestServer, type TestServer } from '../support/server.js';
import { nodeEnv, startWalletWorld, timeline, wallets, type WalletWorld } from './wallet-helpers.js';

const LAST = timeline.snapshots.length - 1;
const ALIAS = 'w_wsh2of3';
const bip329Example = readFileSync(new URL('../vectors/bip329/bip329-example.jsonl', import.meta.url), 'utf8');
const jsonl = (records: unknown[]) => records.map((r) => JSON.stringify(r)).join('\n') + '\n';

const setups = [
  { name: 'sqlite', database: 'sqlite' as const, twoInstances: false },
  { name: 'postgres', database: 'postgres' as const, twoInstances: false },
  { name: 'two instances on postgres', database: 'postgres' as const, twoInstances: true },
];

describe.each(setups)('BIP329 labels: $name', ({ database, twoInstances }) => {
  let world: WalletWorld;
  let other: TestServer;
  let details: any;
  const labelsUrl = (alias = ALIAS, server: TestServer = world.server) => `${server.api}/wallets/${alias}/labels`;
  const importLabels = (body: string, alias = ALIAS, server: TestServer = world.server) =>
    request(labelsUrl(alias, server), { method: 'POST', headers: { ...world.auth, 'content-type': 'application/jsonl' }, body });
  const exportLabels = async (alias = ALIAS) => {
    const response = await request(labelsUrl(alias), { headers: world.auth });
    expect(response.status, response.text).toBe(200);
    return response;
  };
  const lines = (text: string) => text.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));

  beforeAll(async () => {
    world = await startWalletWorld({ snapshot: LAST }, { database });
    other = twoInstances
      ? await startTestServer({ dataFolder: world.server.dataFolder, env: nodeEnv(world.node), database, postgresSchema: world.server.postgresSchema! })
      : world.server;
    const w = wallets[ALIAS]!;
    for (const alias of [ALIAS, 'copy']) {
      const created = await request(`${world.server.api}/wallets`, {
        method: 'POST',
        headers: world.auth,
        json: { name: alias, alias, recv_descriptor: w.recv_descriptor, change_descriptor: w.change_descriptor, birthday: 0 },
      });
      expect(created.status, created.text).toBe(201);
    }
    expect((await world.server.running.runtime.services.sync.runOnce()).ran).toBe(true);
    details = (await request(`${world.server.api}/wallets/${ALIAS}`, { headers: world.auth })).body;
    expect(details.utxo.length).toBeGreaterThan(1);
  }, 120_000);
  afterAll(async () => {
    if (other !== world?.server) await other?.stop();
    await world?.close();
  });

  it('refuses BIP329’s own example on a regtest wallet, naming its mainnet lines, and imports nothing', async () => {
    const response = await importLabels(bip329Example);
    expect(response.status, response.text).toBe(400);
    expect(response.body.code).toBe('invalid_labels');
    expect(response.body.errors.map((e: any) => e.path)).toEqual(['/2', '/6']);
    expect(response.body.errors[0].message).toMatch(/^line 2: /);
    expect((await exportLabels()).text).toBe('');
  });

  it('imports labels of every kind, counts what it skips, freezes a coin, and exports them back', async () => {
    const [coin, other] = details.utxo as any[];
    const tx = details.txlist[0];
    const key = details.keys[0];
    const file = jsonl([
      { type: 'tx', ref: tx.txid, label: 'Salary' },
      { type: 'addr', ref: coin.address, label: 'Deposit address' },
      { type: 'output', ref: `${coin.txid}:${coin.vout}`, label: 'Cold coin', spendable: false },
      { type: 'output', ref: `${other.txid}:${other.vout}`, label: 'Spend me' },
      { type: 'xpub', ref: key.xpub, label: 'Alice' },
      { type: 'tx', ref: 'ab'.repeat(32), label: 'Not ours' },
      { type: 'input', ref: `${tx.txid}:0`, label: 'An input' },
      { type: 'pubkey', ref: '02' + '11'.repeat(32), label: 'A key' },
    ]);
    const response = await importLabels(file);
    expect(response.status, response.text).toBe(200);
    expect(response.body).toEqual({ imported: 5, skipped: { unknown_reference: 1, unsupported_type: 2, older: 0, owner_only: 0 } });

    const utxo = (await request(`${world.server.api}/wallets/${ALIAS}/utxo`, { headers: world.auth })).body.utxo as any[];
    expect(utxo.find((u) => u.txid === coin.txid && u.vout === coin.vout)).toMatchObject({ frozen: true, label: 'Cold coin' });
    expect(utxo.find((u) => u.txid === other.txid && u.vout === other.vout)).toMatchObject({ frozen: false, label: 'Spend me' });
    const wallet = (await request(`${world.server.api}/wallets/${ALIAS}`, { headers: world.auth })).body;
    expect(wallet.keys[0].label).toBe('Alice');
    // A transaction's own label shows in the transaction list.
    expect(wallet.txlist.find((t: any) => t.txid === tx.txid).label).toBe('Salary');

    const exported = await exportLabels();
    expect(exported.headers.get('content-type')).toMatch(/^application\/jsonl/);
    expect(exported.headers.get('content-disposition')).toBe(`attachment; filename="${ALIAS}-labels.jsonl"`);
    const records = lines(exported.text);
    expect(records.map((r) => [r.type, r.label])).toEqual([
      ['tx', 'Salary'],
      ['addr', 'Deposit address'],
      ['output', expect.any(String)],
      ['output', expect.any(String)],
      ['xpub', 'Alice'],
    ]);
    expect(records.find((r) => r.label === 'Cold coin').spendable).toBe(false);
    expect(records.find((r) => r.label === 'Spend me').spendable).toBeUndefined();
    for (const r of records) expect(r.modified).toMatch(/^\d{4}-\d{2}-\d{2}T/);
  });

  it('round trip: the export imported into a wallet of the same keys exports byte for byte the same', async () => {
    const original = (await exportLabels()).text;
    const imported = await importLabels(original, 'copy');
    expect(imported.status, imported.text).toBe(200);
    expect(imported.body.skipped).toEqual({ unknown_reference: 0, unsupported_type: 0, older: 0, owner_only: 0 });
    expect((await exportLabels('copy')).text).toBe(original);
  });

  it('newer wins: a line older than the stored label is skipped, a newer one applied', async () => {
    const tx = details.txlist[0].txid;
    const older = await importLabels(jsonl([{ type: 'tx', ref: tx, label: 'Stale', modified: '2001-01-01T00:00:00Z' }]));
    expect(older.body).toEqual({ imported: 0, skipped: { unknown_reference: 0, unsupported_type: 0, older: 1, owner_only: 0 } });
    const newer = await importLabels(jsonl([{ type: 'tx', ref: tx, label: 'Bonus', modified: '2999-01-01T00:00:00Z' }]));
    expect(newer.body.imported).toBe(1);
    expect(lines((await exportLabels()).text).find((r) => r.type === 'tx').label).toBe('Bonus');
    // An output line without spendable keeps the frozen flag; spendable: true unfreezes.
    const [coin] = details.utxo as any[];
    await importLabels(jsonl([{ type: 'output', ref: `${coin.txid}:${coin.vout}`, label: 'Renamed', modified: '2999-01-02T00:00:00Z' }]));
    let utxo = (await request(`${world.server.api}/wallets/${ALIAS}/utxo`, { headers: world.auth })).body.utxo as any[];
    expect(utxo.find((u) => u.txid === coin.txid && u.vout === coin.vout)).toMatchObject({ frozen: true, label: 'Renamed' });
    await importLabels(jsonl([{ type: 'output', ref: `${coin.txid}:${coin.vout}`, spendable: true, modified: '2999-01-03T00:00:00Z' }]));
    utxo = (await request(`${world.server.api}/wallets/${ALIAS}/utxo`, { headers: world.auth })).body.utxo as any[];
    expect(utxo.find((u) => u.txid === coin.txid && u.vout === coin.vout)).toMatchObject({ frozen: false, label: 'Renamed' });
  });

  it('one faulty line refuses the whole file; every faulty line is named', async () => {
    const before = (await exportLabels()).text;
    const tx = details.txlist[0].txid;
    const body = [
      JSON.stringify({ type: 'tx', ref: tx, label: 'Would change' }),
      '{not json',
      JSON.stringify({ type: 'output', ref: 'xyz', label: 'bad ref' }),
      '',
      JSON.stringify({ type: 'tx', ref: tx, spendable: false }),
      JSON.stringify({ type: 'addr', ref: details.address, label: 'x'.repeat(300) }),
    ].join('\n');
    const response = await importLabels(body);
    expect(response.status).toBe(400);
    expect(response.body.errors.map((e: any) => e.path)).toEqual(['/2', '/3', '/5', '/6']);
    expect((await exportLabels()).text).toBe(before);
    const notText = await request(labelsUrl(), { method: 'POST', headers: world.auth, json: { labels: [] } });
    expect(notText.status).toBe(400);
  });

  it('four imports at once: each answers 200, and each label is one of theirs', async () => {
    const tx = details.txlist[0].txid;
    const key = details.keys[1];
    // Later than every label written before (the earlier tests wrote times in 2999).
    const modified = '3000-01-01T00:00:00Z';
    const file = (n: number) => jsonl([{ type: 'tx', ref: tx, label: `Import ${n}`, modified }, { type: 'xpub', ref: key.xpub, label: `Signer ${n}`, modified }]);
    // Alternating between the instances when there are two.
    const answers = await Promise.all([1, 2, 3, 4].map((n) => importLabels(file(n), ALIAS, n % 2 === 0 ? other : world.server)));
    for (const answer of answers) {
      expect(answer.status, answer.text).toBe(200);
      expect(answer.body.imported).toBe(2);
    }
    const records = lines((await exportLabels()).text);
    const txLabel = records.find((r) => r.type === 'tx').label;
    expect(['Import 1', 'Import 2', 'Import 3', 'Import 4']).toContain(txLabel);
    expect(records.find((r) => r.type === 'xpub' && r.ref === key.xpub).label).toMatch(/^Signer [1-4]$/);
  });

  it('a spend-only user’s xpub lines leave the owner’s key labels alone, counted in owner_only; the rest is imported', async () => {
    const key = details.keys[0];
    const tx = details.txlist[0].txid;
    const ownerLabel = (await request(`${world.server.api}/wallets/${ALIAS}`, { headers: world.auth })).body.keys[0].label;
    await world.server.running.runtime.services.users.addUser(`spender-${database}`, 'spender-password-1', { admin: false });
    const shared = await request(`${world.server.api}/wallets/${ALIAS}`, { method: 'PATCH', headers: world.auth, json: { shared_with: [{ user: `spender-${database}`, access: 'spend' }] } });
    expect(shared.status, shared.text).toBe(200);
    const token = (await createToken(world.server, `spender-${database}`, 'spender-password-1', 'labels')).jwt_token as string;
    const modified = '3001-01-01T00:00:00Z';
    const response = await request(labelsUrl(), {
      method: 'POST',
      headers: { authorization: bearer(token), 'content-type': 'application/jsonl' },
      body: jsonl([
        { type: 'xpub', ref: key.xpub, label: 'Mallory signed this', modified },
        { type: 'tx', ref: tx, label: 'From the spender', modified },
      ]),
    });
    expect(response.status, response.text).toBe(200);
    expect(response.body).toEqual({ imported: 1, skipped: { unknown_reference: 0, unsupported_type: 0, older: 0, owner_only: 1 } });
    const wallet = (await request(`${world.server.api}/wallets/${ALIAS}`, { headers: world.auth })).body;
    expect(wallet.keys[0].label).toBe(ownerLabel);
    expect(wallet.txlist.find((t: any) => t.txid === tx).label).toBe('From the spender');
  });

  it('takes 100,000 lines ending in a newline, as an export ends; refuses the 100,001st line and names it', async () => {
    const line = (i: number) => JSON.stringify({ type: 'input', ref: `${'cd'.repeat(32)}:${i}`, label: 'x' });
    const lines100k = Array.from({ length: 100_000 }, (_, i) => line(i));
    const atLimit = await importLabels(lines100k.join('\n') + '\n');
    expect(atLimit.status, atLimit.text).toBe(200);
    expect(atLimit.body.skipped.unsupported_type).toBe(100_000);
    const overLimit = await importLabels([...lines100k, line(100_000)].join('\n') + '\n');
    expect(overLimit.status).toBe(400);
    expect(overLimit.body.errors.map((e: any) => e.path)).toEqual(['/100001']);
  }, 60_000);

  it('a body over 32 MiB: 413 naming the limit of this route, 32 MiB', async () => {
    const response = await importLabels('\n'.repeat(32 * 1024 * 1024 + 1));
    expect(response.status).toBe(413);
    expect(response.body).toEqual({ message: 'Request body too large (limit 32 MiB)', code: 'payload_too_large' });
  });
});
