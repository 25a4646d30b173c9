/**
 * Cosigners answering at once, PSBTs changing under their readers, and replacements of transactions the
 * service broadcast, over HTTP against the JSON-RPC test node at the timeline's last snapshot: on SQLite, on
 * PostgreSQL, and with two instances on one PostgreSQL schema (requests split between them).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DescriptorDeriver, parseDescriptor } from '../../src/core/descriptor/index.js';
import { NETWORKS } from '../../src/core/network.js';
import { parsePsbt, serializePsbt } from '../../src/core/psbt/index.js';
import { signAsCosigner } from '../unit/services/psbt-fixture-wallets.js';
import { request, startTestServer, type TestServer } from '../support/server.js';
import { nodeEnv, startWalletWorld, timeline, walletDetails, wallets, type WalletWorld } from './wallet-helpers.js';

const LAST = timeline.snapshots.length - 1;
const external = new DescriptorDeriver(parseDescriptor(wallets.w_tr!.recv_descriptor, NETWORKS.regtest)).derive(77).address;
const ALIAS = 'w_wsh2of3'; // 2-of-3: three cosigners may all sign
const MAX_PENDING = 3;

const setups = [
  { name: 'sqlite', database: 'sqlite' as const, twoInstances: false },
  { name: 'postgres', database: 'postgres' as const, twoInstances: false },
  { name: 'two instances on postgres', database: 'postgres' as const, twoInstances: true },
];

describe.each(setups)('PSBTs under concurrency: $name', ({ database, twoInstances }) => {
  let world: WalletWorld;
  let other: TestServer;
  /** The instance for the i-th request: alternating when there are two. */
  const at = (i: number) => (i % 2 === 1 ? other : world.server);
  const psbtUrl = (i: number, rest = '') => `${at(i).api}/wallets/${ALIAS}/psbt${rest}`;
  const sync = async () => expect((await world.server.running.runtime.services.sync.runOnce()).ran).toBe(true);

  const create = async (json: Record<string, unknown>) => {
    const created = await request(psbtUrl(0), { method: 'POST', headers: world.auth, json: { recipients: [{ address: external, amount: '0.001' }], fee_rate: 2, ...json } });
    expect(created.status, created.text).toBe(201);
    return created.body.result as { tx: { txid: string; vin: { txid: string; vout: number }[] }; base64: string; sigs_count: number; inputs: any[]; outputs: any[]; address: string[]; fee: number };
  };
  const put = (i: number, txid: string, psbt: string) => request(psbtUrl(i, `/${txid}`), { method: 'PUT', headers: world.auth, json: { psbt } });

  beforeAll(async () => {
    const env = { SERVICE_MAX_PENDING_PSBTS: String(MAX_PENDING) };
    world = await startWalletWorld({ snapshot: LAST }, { database, env });
    other = twoInstances
      ? await startTestServer({ dataFolder: world.server.dataFolder, env: { ...nodeEnv(world.node), ...env }, database, postgresSchema: world.server.postgresSchema! })
      : world.server;
    const w = wallets[ALIAS]!;
    const imported = await request(`${world.server.api}/wallets`, {
      method: 'POST',
      headers: world.auth,
      json: { name: 'Vault', alias: ALIAS, recv_descriptor: w.recv_descriptor, change_descriptor: w.change_descriptor, birthday: 0 },
    });
    expect(imported.status, imported.text).toBe(201);
    await sync();
  }, 120_000);
  afterAll(async () => {
    if (other !== world?.server) await other?.stop();
    await world?.close();
  });

  it('three cosigners sending their copies at the same moment: every answer 200 and every signature kept', async () => {
    for (let round = 0; round < 5; round++) {
      const record = await create({});
      const txid = record.tx.txid;
      const copies = [0, 1, 2].map((k) => signAsCosigner(record.base64, ALIAS, k));
      const answers = await Promise.all(copies.map((copy, k) => put(round + k, txid, copy)));
      for (const answer of answers) expect(answer.status, answer.text).toBe(200);
      const stored = await request(psbtUrl(round + 1, `/${txid}`), { headers: world.auth });
      expect(stored.body.result.sigs_count, `round ${round}`).toBe(3);
      for (const input of stored.body.result.inputs) expect(Object.keys(input.partial_signatures)).toHaveLength(3);
      const deleted = await request(psbtUrl(round, `/${txid}`), { method: 'DELETE', headers: world.auth });
      expect(deleted.status).toBe(200);
    }
  }, 120_000);

  it('a copy sent for a PSBT deleted meanwhile answers 404, never 200, and brings nothing back', async () => {
    const record = await create({});
    const txid = record.tx.txid;
    const copy = signAsCosigner(record.base64, ALIAS, 0);
    const [signed, deleted] = await Promise.all([put(1, txid, copy), request(psbtUrl(0, `/${txid}`), { method: 'DELETE', headers: world.auth })]);
    expect(deleted.status).toBe(200);
    expect([200, 404]).toContain(signed.status);
    expect((await put(1, txid, copy)).status).toBe(404);
    expect((await request(psbtUrl(0, `/${txid}`), { headers: world.auth })).status).toBe(404);
    const details = await walletDetails({ server: at(1), auth: world.auth }, ALIAS);
    expect(details.pending_psbts).toBe(0);
    expect(details.utxo.every((u: any) => u.reserved_by === null)).toBe(true);
  });

  it('a transaction broadcast through the service is replaced without anyone reading the PSBT list first', async () => {
    const record = await create({ rbf: true });
    const txid = record.tx.txid;
    for (const k of [0, 1]) expect((await put(k, txid, signAsCosigner(record.base64, ALIAS, k))).status).toBe(200);
    const sent = await request(psbtUrl(1, `/${txid}/broadcast`), { method: 'POST', headers: world.auth });
    expect(sent.status, sent.text).toBe(200);
    await sync();
    const seen = await walletDetails({ server: at(1), auth: world.auth }, ALIAS);
    expect(seen.txlist.map((t: any) => t.txid)).toContain(sent.body.txid);
    // The sync settled the broadcast PSBT with the transaction: nothing pending, no coin reserved.
    expect(seen.pending_psbts).toBe(0);
    expect(seen.utxo.every((u: any) => u.reserved_by === null)).toBe(true);

    const replacement = await create({ rbf_tx_id: sent.body.txid, fee_rate: 10 });
    expect(replacement.tx.vin.map((i) => `${i.txid}:${i.vout}`)).toEqual(expect.arrayContaining(record.tx.vin.map((i) => `${i.txid}:${i.vout}`)));
    const list = await request(psbtUrl(1), { headers: world.auth });
    expect(Object.keys(list.body.result)).toEqual([replacement.tx.txid]);
    expect((await walletDetails(world, ALIAS)).pending_psbts).toBe(1);
    expect((await request(psbtUrl(0, `/${replacement.tx.txid}`), { method: 'DELETE', headers: world.auth })).status).toBe(200);
  });

  it('keeps only signatures from a copy: unknown fields a cosigner adds never grow the stored PSBT', async () => {
    const record = await create({});
    const copy = parsePsbt(signAsCosigner(record.base64, ALIAS, 0));
    const padding = { key: Uint8Array.of(0xfc, 0x01), value: new Uint8Array(200_000).fill(7) };
    copy.inputs[0]!.unknown.push(padding);
    copy.unknown.push(padding);
    const answer = await put(1, record.tx.txid, Buffer.from(serializePsbt(copy)).toString('base64'));
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.result.sigs_count).toBe(1);
    const stored = await request(psbtUrl(0, `/${record.tx.txid}?format=base64`), { headers: world.auth });
    expect(stored.text.length).toBeLessThan(record.base64.length + 200);
    expect((await request(psbtUrl(0, `/${record.tx.txid}`), { method: 'DELETE', headers: world.auth })).status).toBe(200);
  });

  it(`holds at most ${MAX_PENDING} pending PSBTs per wallet, also when creations race`, async () => {
    const attempts = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        request(psbtUrl(i), { method: 'POST', headers: world.auth, json: { recipients: [{ address: external, amount: '0.0002' }], fee_rate: 2 } }),
      ),
    );
    const made = attempts.filter((a) => a.status === 201);
    expect(made).toHaveLength(MAX_PENDING);
    for (const refused of attempts.filter((a) => a.status !== 201)) {
      expect(refused.status, refused.text).toBe(422);
      expect(refused.body.code).toBe('too_many_pending_psbts');
    }
    expect((await walletDetails(world, ALIAS)).pending_psbts).toBe(MAX_PENDING);
    for (const m of made) expect((await request(psbtUrl(1, `/${m.body.result.tx.txid}`), { method: 'DELETE', headers: world.auth })).status).toBe(200);
  });

  it('change goes only to an address of the wallet, with its derivation; any other address is refused', async () => {
    const otherWallets = new DescriptorDeriver(parseDescriptor(wallets.w_wpkh!.recv_descriptor, NETWORKS.regtest)).derive(3).address;
    const before = await walletDetails(world, ALIAS);
    const refused = await request(psbtUrl(0), {
      method: 'POST',
      headers: world.auth,
      json: { recipients: [{ address: external, amount: '0.0001' }], fee_rate: 2, change_address: otherWallets },
    });
    expect(refused.status, refused.text).toBe(422);
    expect(refused.body).toMatchObject({ code: 'change_address_not_owned', errors: [{ path: '/change_address' }] });
    expect((await walletDetails(world, ALIAS)).pending_psbts).toBe(before.pending_psbts);

    const own = (await request(`${world.server.api}/wallets/${ALIAS}/addresses?branch=receive&from=5&count=1`, { headers: world.auth })).body.addresses[0].address;
    const record = await create({ change_address: own, recipients: [{ address: external, amount: '0.0001' }] });
    expect(record.address).toEqual([external]);
    const change = record.tx as any;
    const changeIndex = change.vout.findIndex((o: any) => o.scriptPubKey.addresses?.[0] === own);
    expect(changeIndex).toBeGreaterThanOrEqual(0);
    expect(record.outputs[changeIndex].bip32_derivs).toHaveLength(3);
    expect((await request(psbtUrl(0, `/${record.tx.txid}`), { method: 'DELETE', headers: world.auth })).status).toBe(200);
  });
});
