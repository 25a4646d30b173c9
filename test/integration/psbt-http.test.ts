/**
 * The PSBT endpoints over real HTTP: a real server (SQLite file), the JSON-RPC test node on the
 * recorded fixtures, and the seven fixture wallets (spending state from the wallet engine fed with
 * the timeline). Each wallet's PSBT goes from creation to the node through the API alone.
 */
import { Value } from '@sinclair/typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PsbtList, PsbtResult } from '../../src/api/routes/psbt-schemas.js';
import { BitcoindChainSource } from '../../src/chain/bitcoind/index.js';
import { decodeAddress } from '../../src/core/address.js';
import { DescriptorDeriver, parseDescriptor } from '../../src/core/descriptor/index.js';
import { NETWORKS } from '../../src/core/network.js';
import { decodePsbt, parsePsbt, spentOutputs } from '../../src/core/psbt/index.js';
import { verifyTransaction } from '../../src/core/signing/verify.js';
import { parseTransaction, vsize } from '../../src/core/tx.js';
import { coinHistory, type MempoolEntry } from '../../src/engine/index.js';
import type { Runtime } from '../../src/main.js';
import { PsbtChainReconciler } from '../../src/services/psbts/chain-reconciler.js';
import { PsbtService } from '../../src/services/psbts/service.js';
import { applyAndPersist, timeline } from '../unit/engine/support/replay.js';
import { FIXTURE_WALLET_IDS, FixtureWalletReader, LAST_SNAPSHOT, signAsCosigner, storeFixtureWallets, wallets } from '../unit/services/psbt-fixture-wallets.js';
import { startRpcTestServer, type RpcTestServer } from '../support/rpc-server.js';
import { bearer, createToken, request, startTestServer, type TestServer } from '../support/server.js';

const reconciler = new PsbtChainReconciler(Date.now);

const regtest = NETWORKS.regtest;
const external = ['w_tr', 'w_shwpkh'].map((name) => new DescriptorDeriver(parseDescriptor(wallets[name].recv_descriptor, regtest)).derive(61).address);

interface Setup {
  node: RpcTestServer;
  chain: BitcoindChainSource;
  reader: FixtureWalletReader;
  server: TestServer;
  alice: string;
  bob: string;
  mempool: MempoolEntry[];
}

async function setUp(snapshot: number): Promise<Setup> {
  const node = await startRpcTestServer({ snapshot });
  const chain = new BitcoindChainSource({ url: node.url, ...node.credentials, network: 'regtest' });
  const reader = FixtureWalletReader.at(snapshot);
  const server = await startTestServer({
    env: { SERVICE_NETWORK: 'regtest' },
    extend: async (runtime: Runtime) => {
      await runtime.services.users.addUser('alice', 'alice-password', { admin: false });
      await runtime.services.users.addUser('bob', 'bob-password', { admin: false });
      // The fixture wallets' coins come from the recorded timeline rather than a sync.
      await storeFixtureWallets(runtime.store);
      runtime.services.psbts = new PsbtService({ store: runtime.store, access: reader, coins: reader, chain: () => chain, maxFeeRate: runtime.config.maxFeeRate, maxPending: runtime.config.maxPendingPsbts });
    },
  });
  const alice = (await createToken(server, 'alice', 'alice-password', 'psbt')).jwt_token;
  const bob = (await createToken(server, 'bob', 'bob-password', 'psbt')).jwt_token;
  const mempool = timeline.snapshots[snapshot].mempool.map((m: any) => ({ tx: parseTransaction(m.hex), txid: m.txid, time: m.time }));
  return { node, chain, reader, server, alice, bob, mempool };
}

async function tearDown(s: Setup | undefined): Promise<void> {
  await s?.server.running.close();
  await s?.chain.close();
  await s?.node.close();
}

const api = (s: Setup, path: string) => `${s.server.api}/wallets/${path}`;
const as = (token: string, init: RequestInit & { json?: unknown } = {}) => ({ ...init, headers: { authorization: bearer(token), ...(init.headers ?? {}) } });

describe('PSBT endpoints over HTTP at the final snapshot', () => {
  let s: Setup;
  beforeAll(async () => {
    s = await setUp(LAST_SNAPSHOT);
  }, 60_000);
  afterAll(() => tearDown(s));

  for (const name of FIXTURE_WALLET_IDS) {
    it(`${name}: create, export, sign per cosigner, broadcast`, async () => {
      const wallet = wallets[name];
      const created = await request(
        api(s, `${name}/psbt`),
        as(s.alice, {
          method: 'POST',
          json: {
            recipients: [
              { address: external[0], amount: 0.015, unit: 'btc', label: 'invoice 7' },
              { address: external[1], amount: '750000', unit: 'sat' },
            ],
            fee_rate: '7.5',
            rbf_tx_id: '',
            subtract_from: '0',
          },
        }),
      );
      expect(created.status).toBe(201);
      expect(Value.Check(PsbtResult, created.body)).toBe(true);
      const record = created.body.result;
      const txid: string = record.tx.txid;
      const decoded = decodePsbt(parsePsbt(record.base64), regtest);
      expect(record.tx).toEqual(JSON.parse(JSON.stringify(decoded.tx)));
      expect(record.inputs).toEqual(JSON.parse(JSON.stringify(decoded.inputs)));
      expect(record.outputs).toEqual(JSON.parse(JSON.stringify(decoded.outputs)));
      expect(Object.keys(record)).toEqual(['tx', 'unknown', 'inputs', 'outputs', 'fee', 'fee_rate', 'tx_full_size', 'base64', 'amount', 'address', 'time', 'sigs_count']);
      expect(record.amount).toEqual([0.015, 0.0075]);
      expect(record.address).toEqual(external);
      expect(Number(record.fee_rate)).toBeGreaterThanOrEqual(7.5);

      const list = await request(api(s, `${name}/psbt`), as(s.alice));
      expect(list.status).toBe(200);
      expect(Value.Check(PsbtList, list.body)).toBe(true);
      expect(list.body.result[txid]).toEqual(record);

      // Raw export for signers: the binary PSBT file and its base64 text.
      const binary = await fetch(api(s, `${name}/psbt/${txid}`), as(s.alice, { headers: { accept: 'application/octet-stream' } }));
      expect(binary.status).toBe(200);
      expect(binary.headers.get('content-type')).toBe('application/octet-stream');
      expect(Buffer.from(await binary.arrayBuffer()).toString('base64')).toBe(record.base64);
      const text = await request(api(s, `${name}/psbt/${txid}?format=base64`), as(s.alice));
      expect(text.text).toBe(record.base64);

      let current = record;
      for (let k = 0; k < wallet.sigs_required; k++) {
        const early = await request(api(s, `${name}/psbt/${txid}/broadcast`), as(s.alice, { method: 'POST' }));
        expect(early.status).toBe(422);
        expect(early.body.code).toBe('not_enough_signatures');
        const signed = signAsCosigner(current.base64, name, k);
        // The second copy comes as the binary PSBT file, as signers write it.
        const put =
          k === 1
            ? await request(api(s, `${name}/psbt/${txid}`), as(s.alice, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body: Uint8Array.from(Buffer.from(signed, 'base64')) }))
            : await request(api(s, `${name}/psbt/${txid}`), as(s.alice, { method: 'PUT', json: { psbt: signed } }));
        expect(put.status, put.text).toBe(200);
        expect(put.body.result.sigs_count).toBe(k + 1);
        current = put.body.result;
      }

      const sent = await request(api(s, `${name}/psbt/${txid}/broadcast`), as(s.alice, { method: 'POST' }));
      expect(sent.status).toBe(200);
      expect(Object.keys(sent.body)).toEqual(['txid', 'hex']);
      const received = s.node.broadcasts.at(-1)!;
      expect(received).toEqual({ hex: sent.body.hex, outcome: { txid: sent.body.txid } });
      const tx = parseTransaction(received.hex);
      const prevouts = spentOutputs(parsePsbt(current.base64)).map((o) => o!);
      expect(verifyTransaction(tx, prevouts)).toMatchObject({ valid: true });
      const paid = external.map((a) => tx.outputs.filter((o) => Buffer.from(o.script).equals(Buffer.from(decodeAddress(a, regtest)))).map((o) => o.value));
      expect(paid).toEqual([[1_500_000n], [750_000n]]);
      const fee = prevouts.reduce((n, o) => n + o.value, 0n) - tx.outputs.reduce((n, o) => n + o.value, 0n);
      expect(Number(fee) / vsize(tx)).toBeGreaterThanOrEqual(7.5);

      // Still pending until the wallet sees the transaction, then gone from the list.
      expect((await request(api(s, `${name}/psbt`), as(s.alice))).body.result[txid]).toBeDefined();
      s.mempool.push({ tx, txid: sent.body.txid, time: 1_800_000_000 });
      applyAndPersist(s.reader.state, s.reader.rows, { type: 'mempool', transactions: [...s.mempool] });
      const walletId = `id-${name}`;
      await s.server.running.runtime.store.transaction((repos) => reconciler.reconcile(repos, walletId, (t, v) => coinHistory(s.reader.state, name, t, v)));
      expect((await request(api(s, `${name}/psbt`), as(s.alice))).body.result[txid]).toBeUndefined();
      expect((await request(api(s, `${name}/psbt/${txid}`), as(s.alice))).status).toBe(404);
    });
  }

  it('answers every refused creation with its status and code, and changes nothing', async () => {
    const one = (json: unknown, token = s.alice, alias = 'w_wpkh') => request(api(s, `${alias}/psbt`), as(token, { method: 'POST', json }));
    const good = { address: external[0], amount: '0.001', label: 'must not be stored' };
    const labels = s.reader.labels.length;
    const cases: [Promise<Awaited<ReturnType<typeof request>>>, number, string][] = [
      [one({ recipients: [{ ...good, amount: '50' }], fee_rate: 2 }), 422, 'insufficient_funds'],
      [one({ recipients: [{ ...good, amount: 100, unit: 'sat' }], fee_rate: 2 }), 422, 'amount_below_dust'],
      [one({ recipients: [{ ...good, address: 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx' }], fee_rate: 2 }), 422, 'wrong_network'],
      [one({ recipients: [good], fee_rate: 0.01 }), 422, 'fee_rate_too_low'],
      [one({ recipients: [good], fee_rate: 5000 }), 422, 'fee_rate_too_high'],
      [one({ recipients: [good], fee_rate: 2 }, s.alice, 'no-such-wallet'), 404, 'wallet_not_found'],
      [one({ recipients: [good], fee_rate: 2 }, s.bob, 'w_pkh'), 404, 'wallet_not_found'],
      [one({ recipients: [good], fee_rate: 2 }, s.bob, 'w_wpkh'), 404, 'wallet_not_found'],
      [one({ recipients: 'everyone' }), 400, 'invalid_request'],
      [one({ recipients: [{ ...good, amount: true }] }), 400, 'invalid_request'],
      [one({ recipients: [good], subtract: true, subtract_from: 3, fee_rate: 2 }), 400, 'invalid_request'],
      [one({ recipients: [{ ...good, label: 'x'.repeat(257) }], fee_rate: 2 }), 400, 'invalid_request'],
    ];
    for (const [pending, status, code] of cases) {
      const response = await pending;
      expect({ status: response.status, code: response.body.code }).toEqual({ status, code });
    }
    const malformed = await fetch(api(s, 'w_wpkh/psbt'), { method: 'POST', headers: { authorization: bearer(s.alice), 'content-type': 'application/json' }, body: '{"recipients": [' });
    expect(malformed.status).toBe(400);
    expect(s.reader.labels.length).toBe(labels);
    expect((await request(api(s, 'w_wpkh/psbt'), as(s.alice))).body.result).toEqual({});
    // Read access lists but may not create.
    expect((await request(api(s, 'w_wpkh/psbt'), as(s.bob))).status).toBe(200);
  });

  it('parallel creation requests never reserve the same coin', async () => {
    const responses = await Promise.all(
      Array.from({ length: 8 }, () => request(api(s, 'w_shwpkh/psbt'), as(s.alice, { method: 'POST', json: { recipients: [{ address: external[0], amount: '0.01' }], fee_rate: 2 } }))),
    );
    const made = responses.filter((r) => r.status === 201);
    for (const r of responses.filter((x) => x.status !== 201)) expect({ status: r.status, code: r.body.code }).toEqual({ status: 422, code: 'insufficient_funds' });
    expect(made.length).toBeGreaterThan(1);
    const coins = made.flatMap((r) => r.body.result.tx.vin.map((i: any) => `${i.txid}:${i.vout}`));
    expect(new Set(coins).size).toBe(coins.length);
    for (const r of made) {
      const deleted = await request(api(s, `w_shwpkh/psbt/${r.body.result.tx.txid}`), as(s.alice, { method: 'DELETE' }));
      expect(deleted.status).toBe(200);
    }
    expect((await request(api(s, 'w_shwpkh/psbt'), as(s.alice))).body.result).toEqual({});
  });
});

describe('BIP125 replacement over HTTP (snapshot 8: a replaceable 1 sat/vB payment of w_wpkh)', () => {
  const original = timeline.snapshots[8].mempool[0];
  let s: Setup;
  beforeAll(async () => {
    s = await setUp(8);
  }, 60_000);
  afterAll(() => tearDown(s));

  it('refuses a fee rate that does not beat the original by the incremental relay fee', async () => {
    const response = await request(api(s, 'w_wpkh/psbt'), as(s.alice, { method: 'POST', json: { recipients: [{ address: external[0], amount: '0.2' }], fee_rate: '1.05', rbf_tx_id: original.txid } }));
    expect({ status: response.status, code: response.body.code }).toEqual({ status: 422, code: 'fee_rate_too_low_for_replacement' });
  });

  it('takes a binary PSBT body on PUT, refuses a broken one with 400, and keeps other routes to JSON (415); OpenAPI says so', async () => {
    const response = await request(api(s, 'w_wpkh/psbt'), as(s.alice, { method: 'POST', json: { recipients: [{ address: external[1], amount: '0.01' }], fee_rate: '5' } }));
    expect(response.status, response.text).toBe(201);
    const record = response.body.result;
    const url = api(s, `w_wpkh/psbt/${record.tx.txid}`);
    const binary = (body: Uint8Array<ArrayBuffer>) => as(s.alice, { method: 'PUT', headers: { 'content-type': 'application/octet-stream' }, body });
    const broken = await request(url, binary(new Uint8Array([0x70, 0x73, 0x62, 0x74, 0xff, 0x01])));
    expect({ status: broken.status, code: broken.body.code }).toEqual({ status: 400, code: 'invalid_psbt' });
    const signed = await request(url, binary(Uint8Array.from(Buffer.from(signAsCosigner(record.base64, 'w_wpkh', 0), 'base64'))));
    expect(signed.status, signed.text).toBe(200);
    expect(signed.body.result.sigs_count).toBe(1);
    const create = await request(api(s, 'w_wpkh/psbt'), as(s.alice, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array([1, 2, 3]) }));
    expect(create.status).toBe(415);
    const deleted = await request(url, as(s.alice, { method: 'DELETE' }));
    expect(deleted.status).toBe(200);
    const spec = await request(`${s.server.url}/docs/openapi.json`);
    const put = spec.body.paths['/api/v1alpha/wallets/{wallet_alias}/psbt/{txid}'].put;
    expect(Object.keys(put.requestBody.content)).toEqual(['application/json', 'application/octet-stream']);
    expect(put.requestBody.content['application/octet-stream'].schema).toMatchObject({ type: 'string', contentMediaType: 'application/octet-stream' });
  });

  it('builds, signs and broadcasts a replacement the node accepts', async () => {
    const response = await request(api(s, 'w_wpkh/psbt'), as(s.alice, { method: 'POST', json: { recipients: [{ address: external[0], amount: '0.2' }], fee_rate: '4', rbf_tx_id: original.txid } }));
    expect(response.status).toBe(201);
    const record = response.body.result;
    const replaced = parseTransaction(original.hex);
    const spent = new Set(record.tx.vin.map((i: any) => `${i.txid}:${i.vout}`));
    for (const input of replaced.inputs) expect(spent.has(`${input.txid}:${input.vout}`)).toBe(true);
    expect(Math.round(record.fee * 1e8)).toBeGreaterThan(original.fee_sat);
    const signed = await request(api(s, `w_wpkh/psbt/${record.tx.txid}`), as(s.alice, { method: 'PUT', json: { psbt: signAsCosigner(record.base64, 'w_wpkh', 0) } }));
    expect(signed.status).toBe(200);
    const sent = await request(api(s, `w_wpkh/psbt/${record.tx.txid}/broadcast`), as(s.alice, { method: 'POST' }));
    expect(sent.status).toBe(200);
    expect(s.node.broadcasts.at(-1)!.outcome).toEqual({ txid: sent.body.txid });
    // A second replacement of the same transaction while the first is pending: its coins are held.
    const again = await request(api(s, 'w_wpkh/psbt'), as(s.alice, { method: 'POST', json: { recipients: [{ address: external[1], amount: '0.1' }], fee_rate: '9', rbf_tx_id: original.txid } }));
    expect({ status: again.status, code: again.body.code }).toEqual({ status: 422, code: 'input_reserved' });
  });
});
