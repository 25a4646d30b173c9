/**
 * The JSON-RPC test server must answer like the real node did: at the final snapshot, every
 * request recorded in rpc.json gets the recorded answer (or error) back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadFixture } from '../../support/fixtures.js';
import { startRpcTestServer, type RpcTestServer } from '../../support/rpc-server.js';

const rpc = loadFixture('rpc');
const timeline = loadFixture('timeline');
const finalSnapshot = timeline.snapshots.length - 1;
type Sample = { method: string; params: unknown[]; result?: any; error?: { code: number; message: string } };
const samples = (rpc.samples as Sample[]).filter((s) => s.method);
const wrongPassword = (rpc.samples as any[]).find((s) => 'http_status_with_wrong_password' in s);

let node: RpcTestServer;
const auth = (user = 'wcs', password = 'wcs-test-password') => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

async function post(body: unknown, authorization = auth()): Promise<{ status: number; text: string; json: any }> {
  const response = await fetch(node.url, { method: 'POST', headers: { authorization, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, text, json: text ? JSON.parse(text) : undefined };
}

beforeAll(async () => {
  node = await startRpcTestServer({ snapshot: finalSnapshot });
});
afterAll(() => node.close());

/** Fields the test node computes the same way Core does; the rest (sizes on disk, v31 cluster data) differ by design. */
const comparable: Record<string, string[] | undefined> = {
  getblockchaininfo: ['chain', 'blocks', 'headers', 'bestblockhash', 'bits', 'target', 'difficulty', 'time', 'mediantime', 'verificationprogress', 'initialblockdownload', 'chainwork', 'pruned'],
  getblockheader: undefined,
  getblock: ['hash', 'confirmations', 'height', 'version', 'versionHex', 'merkleroot', 'time', 'mediantime', 'nonce', 'bits', 'target', 'difficulty', 'chainwork', 'nTx', 'previousblockhash', 'strippedsize', 'size', 'weight', 'tx'],
  getrawmempool: undefined,
  getmempoolinfo: ['loaded', 'size', 'bytes', 'total_fee', 'maxmempool', 'mempoolminfee', 'minrelaytxfee', 'incrementalrelayfee'],
  getmempoolentry: ['vsize', 'weight', 'time', 'height', 'descendantcount', 'descendantsize', 'ancestorcount', 'ancestorsize', 'wtxid', 'depends', 'spentby'],
  getrawtransaction: ['txid', 'hash', 'version', 'size', 'vsize', 'weight', 'locktime', 'hex'],
  testmempoolaccept: undefined,
  // The horizon Core answers with depends on its estimator's history; the test node says max(2, target).
  estimatesmartfee: ['feerate'],
};

function pick(value: any, keys: string[] | undefined): any {
  if (!keys || typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(keys.map((k) => [k, value[k]]));
}

describe('the test node answers the requests of rpc.json as Bitcoin Core did', () => {
  for (const sample of samples) {
    const label = `${sample.method}(${JSON.stringify(sample.params).slice(0, 60)})`;
    if (sample.method === 'getblock' && sample.params[1] === 2) continue; // verbosity 2 is not served
    if (sample.method === 'uptime') continue; // depends on the clock
    it(label, async () => {
      const { status, json } = await post({ jsonrpc: '1.0', id: 7, method: sample.method, params: sample.params });
      expect(json.id).toBe(7);
      if (sample.error) {
        expect(json.error).toEqual(sample.error);
        expect(json.result).toBeNull();
        expect(status).toBe(sample.error.code === -32601 ? 404 : 500);
        return;
      }
      expect(status).toBe(200);
      expect(json.error).toBeNull();
      if (sample.method === 'getrawmempool' && sample.params[0] === true) {
        const txid = Object.keys(sample.result)[0]!;
        expect(Object.keys(json.result)).toEqual([txid]);
        expect(pick(json.result[txid], comparable.getmempoolentry)).toEqual(pick(sample.result[txid], comparable.getmempoolentry));
        expect(json.result[txid].fees.base).toBe(sample.result[txid].fees.base);
        return;
      }
      if (sample.method === 'testmempoolaccept') {
        // Later in the recording this transaction was confirmed; at the final snapshot it is known.
        expect(json.result[0].txid).toBe(sample.result[0].txid);
        return;
      }
      const keys = comparable[sample.method];
      expect(pick(json.result, keys)).toEqual(pick(sample.result, keys));
    });
  }

  it('uptime counts seconds since start', async () => {
    const { json } = await post({ id: 1, method: 'uptime', params: [] });
    expect(Number.isInteger(json.result)).toBe(true);
    expect(json.result).toBeGreaterThanOrEqual(0);
  });

  it(`answers wrong credentials with HTTP ${wrongPassword.http_status_with_wrong_password} and an empty body`, async () => {
    const { status, text } = await post({ id: 1, method: 'getblockcount', params: [] }, auth('wcs', 'wrong'));
    expect(status).toBe(wrongPassword.http_status_with_wrong_password);
    expect(text).toBe(wrongPassword.body);
  });

  it('answers JSON-RPC batches item by item', async () => {
    const { status, json } = await post([
      { id: 1, method: 'getblockcount', params: [] },
      { id: 2, method: 'getblockhash', params: [999999] },
    ]);
    expect(status).toBe(200);
    expect(json).toEqual([
      { result: finalSnapshot === 10 ? 132 : expect.any(Number), error: null, id: 1 },
      { result: null, error: { code: -8, message: 'Block height out of range' }, id: 2 },
    ]);
  });
});

describe('the test node follows the timeline', () => {
  it('serves each snapshot as the active chain, tip and mempool', async () => {
    for (let i = 0; i < timeline.snapshots.length; i++) {
      const snap = timeline.snapshots[i];
      node.setSnapshot(i);
      const info = (await post({ id: 1, method: 'getblockchaininfo', params: [] })).json.result;
      expect({ height: info.blocks, hash: info.bestblockhash }).toEqual(snap.tip);
      const mempool = (await post({ id: 1, method: 'getrawmempool', params: [] })).json.result;
      expect([...mempool].sort()).toEqual(snap.mempool.map((m: any) => m.txid).sort());
      const hashAt = (await post({ id: 1, method: 'getblockhash', params: [snap.tip.height] })).json.result;
      expect(hashAt).toBe(snap.tip.hash);
    }
    node.setSnapshot(finalSnapshot);
  });

  it('keeps stale blocks: a reorged-out block is still served, with -1 confirmations', async () => {
    const stale = timeline.events.find((e: any) => e.stale_block).stale_block;
    node.setSnapshot(6);
    expect((await post({ id: 1, method: 'getblockheader', params: [stale] })).json.result.confirmations).toBe(1);
    node.setSnapshot(7);
    expect((await post({ id: 1, method: 'getblockheader', params: [stale] })).json.result.confirmations).toBe(-1);
    node.setSnapshot(finalSnapshot);
  });

  it('accepts a transaction spending known outputs into the mempool and records it', async () => {
    // Snapshot 8 holds the low-fee payment; at snapshot 7 its inputs are unspent.
    const payment = timeline.snapshots[8].mempool[0];
    node.setSnapshot(7);
    const accepted = await post({ id: 1, method: 'sendrawtransaction', params: [payment.hex] });
    expect(accepted.json.result).toBe(payment.txid);
    expect((await post({ id: 1, method: 'getrawmempool', params: [] })).json.result).toContain(payment.txid);
    expect(node.broadcasts.at(-1)).toEqual({ hex: payment.hex, outcome: { txid: payment.txid } });
    // The fee bump replaces it (full RBF), as the node did between snapshots 8 and 9.
    const replacement = timeline.snapshots[9].mempool[0];
    expect((await post({ id: 1, method: 'sendrawtransaction', params: [replacement.hex] })).json.result).toBe(replacement.txid);
    expect((await post({ id: 1, method: 'getrawmempool', params: [] })).json.result).toEqual([replacement.txid]);
    const gone = await post({ id: 1, method: 'getrawtransaction', params: [payment.txid] });
    expect(gone.json.error.code).toBe(-5);
    // The original cannot come back: it pays less.
    const back = await post({ id: 1, method: 'sendrawtransaction', params: [payment.hex] });
    expect(back.json.error).toEqual({
      code: -26,
      message: `insufficient fee, rejecting replacement ${payment.txid}; new feerate 0.00001004 BTC/kvB <= old feerate 0.00006027 BTC/kvB`,
    });
    node.setSnapshot(finalSnapshot);
  });
});
