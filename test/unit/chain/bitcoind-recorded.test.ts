/**
 * The chain source against Bitcoin Core's own recorded answers (rpc.json), replayed verbatim by a
 * small HTTP server with Core's status codes: every recorded answer, errors included, maps to
 * the expected result or typed error.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BitcoindChainSource, RpcClient } from '../../../src/chain/bitcoind/index.js';
import { toHex } from '../../../src/core/bytes.js';
import { loadFixture } from '../../support/fixtures.js';
import { chainFailure } from '../../support/chain-error.js';

type Sample = { method: string; params: unknown[]; result?: any; error?: { code: number; message: string } };
const rpc = loadFixture('rpc');
const blocks = loadFixture('blocks');
const samples = (rpc.samples as Sample[]).filter((s) => s.method);
const recorded = (method: string, params?: unknown[]) =>
  samples.find((s) => s.method === method && (params === undefined || JSON.stringify(s.params) === JSON.stringify(params)))!;

const chainInfo = recorded('getblockchaininfo').result;
const best = chainInfo.bestblockhash as string;
const mempoolTx = recorded('getrawtransaction', [Object.keys(recorded('getrawmempool', [true]).result)[0], true]).result;
const PASSWORD = 'recorded-node-password';

/** Looks a request up in the recording; a few are derived from recorded data (raw forms). */
function replay(method: string, params: unknown[]): { result?: unknown; error?: { code: number; message: string } } {
  const exact = samples.find((s) => s.method === method && JSON.stringify(s.params) === JSON.stringify(params));
  if (exact) return exact;
  if (method === 'getrawtransaction' && params[1] === false) {
    const verbose = samples.find((s) => s.method === method && s.params[0] === params[0]);
    if (verbose) return verbose.error ? verbose : { result: verbose.result.hex };
  }
  if (method === 'getblock' && params[1] === 0 && blocks[params[0] as string]) return { result: blocks[params[0] as string].hex };
  if (method === 'getblockchaininfo') return recorded('getblockchaininfo');
  return { error: { code: -32603, message: `not in the recording: ${method} ${JSON.stringify(params)}` } };
}

let server: http.Server;
let url: string;
const received: string[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const expected = `Basic ${Buffer.from(`user:${PASSWORD}`).toString('base64')}`;
      if (req.headers.authorization !== expected) {
        res.writeHead(rpc.samples.at(-1).http_status_with_wrong_password);
        res.end(rpc.samples.at(-1).body);
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const answer = (r: any) => {
        received.push(r.method);
        const a = replay(r.method, r.params ?? []);
        return { result: a.error ? null : a.result, error: a.error ?? null, id: r.id };
      };
      const reply = Array.isArray(body) ? body.map(answer) : answer(body);
      const status = Array.isArray(reply) || reply.error === null ? 200 : reply.error.code === -32601 ? 404 : 500;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const source = () => new BitcoindChainSource({ url, user: 'user', password: PASSWORD, network: 'regtest', retries: 0 });

const failure = chainFailure;

describe('recorded Bitcoin Core answers', () => {
  it('getblockchaininfo: tip and health', async () => {
    const s = source();
    expect(await s.getTip()).toEqual({ height: chainInfo.blocks, hash: best });
    expect(await s.checkHealth()).toEqual({
      ok: true,
      network: 'regtest',
      tip: { height: 132, hash: best },
      filters: true,
      nodeVersion: rpc.node,
    });
    await s.close();
  });

  it('getblockhash: a height, and -8 "Block height out of range" as not_found', async () => {
    const s = source();
    expect(await s.getBlockHash(1)).toBe(recorded('getblockhash', [1]).result);
    const error = await failure(s.getBlockHash(999999));
    expect(error.code).toBe('not_found');
    expect(error.rpcCode).toBe(-8);
    await s.close();
  });

  it('getblockheader: height, time, median time, previous hash', async () => {
    const header = recorded('getblockheader').result;
    const s = source();
    expect(await s.getBlockHeader(best)).toEqual({
      hash: best,
      height: header.height,
      time: header.time,
      medianTime: header.mediantime,
      prevHash: header.previousblockhash,
      confirmations: 1,
      inActiveChain: true,
    });
    await s.close();
  });

  it('getblock 0: the raw block, parsed, with the transactions getblock 1 lists', async () => {
    const s = source();
    const block = await s.getBlock(best);
    expect(block.hash).toBe(best);
    expect(block.prevHash).toBe(recorded('getblock', [best, 1]).result.previousblockhash);
    expect(block.transactions.length).toBe(recorded('getblock', [best, 1]).result.nTx);
    await s.close();
  });

  it('getblockfilter: the basic filter and its header', async () => {
    const answer = recorded('getblockfilter').result;
    const s = source();
    const filter = await s.getBlockFilter(best);
    expect(filter && toHex(filter.filter)).toBe(answer.filter);
    expect(filter?.header).toBe(answer.header);
    await s.close();
  });

  it('getrawmempool true + getrawtransaction: txids, entry time, fee and the transaction', async () => {
    const verbose = recorded('getrawmempool', [true]).result;
    const [txid, entry] = Object.entries(verbose)[0] as [string, any];
    const s = source();
    expect(await s.getMempoolTxids()).toEqual([{ txid, time: entry.time }]);
    const mempool = await s.getMempool();
    expect(mempool).toHaveLength(1);
    expect(mempool[0]).toMatchObject({ txid, time: entry.time, feeSat: 416n, vsize: entry.vsize, hex: mempoolTx.hex });
    expect(mempool[0]!.tx.outputs.map((o) => toHex(o.script))).toEqual(mempoolTx.vout.map((o: any) => o.scriptPubKey.hex));
    await s.close();
  });

  it('getmempoolentry: one transaction with its fee in satoshis', async () => {
    const s = source();
    const entry = await s.getMempoolEntry(mempoolTx.txid);
    expect(entry).toMatchObject({ txid: mempoolTx.txid, feeSat: 416n, vsize: 208, time: 1795315972 });
    await s.close();
  });

  it('estimatesmartfee: BTC/kvB as sat/vB, with the horizon the node used', async () => {
    const s = source();
    expect(await s.estimateFee(6)).toEqual({ satPerKvb: 2001, satPerVb: 2.001, blocks: 5 });
    expect(await s.estimateFee(2, 'economical')).toEqual({ satPerKvb: 2001, satPerVb: 2.001, blocks: 2 });
    await s.close();
  });

  it('getmempoolinfo: minimum relay, incremental and mempool minimum fees in sat/vB', async () => {
    const s = source();
    expect(await s.getRelayFees()).toEqual({ minRelaySatPerVb: 0.1, incrementalSatPerVb: 0.1, mempoolMinSatPerVb: 0.1 });
    await s.close();
  });

  it('sendrawtransaction: a txid, and -22 as tx_decode_failed with the node reason', async () => {
    const s = source();
    const sent = recorded('sendrawtransaction', [mempoolTx.hex]);
    expect(await s.broadcast(mempoolTx.hex)).toBe(sent.result);
    const error = await failure(s.broadcast('00'));
    expect(error.code).toBe('tx_decode_failed');
    expect(error.rpcCode).toBe(-22);
    expect(error.reason).toBe('TX decode failed. Make sure the tx has at least one input.');
    await s.close();
  });

  it('an unknown method (HTTP 404) and a wrong parameter type (-3) are rpc errors with the node text', async () => {
    const client = new RpcClient({ url, user: 'user', password: PASSWORD, retries: 0 });
    const unknown = await failure(client.call('nosuchmethod'));
    expect([unknown.code, unknown.rpcCode, unknown.reason]).toEqual(['rpc_error', -32601, 'Method not found']);
    const wrongType = await failure(client.call('getblockhash', ['x']));
    expect([wrongType.code, wrongType.rpcCode]).toEqual(['rpc_error', -3]);
    expect(wrongType.reason).toContain('Wrong type passed');
    expect(await client.call('uptime')).toBe(recorded('uptime').result);
    client.close();
  });

  it('getrawtransaction -5 for an unknown txid means "not in the mempool"', async () => {
    const client = new RpcClient({ url, user: 'user', password: PASSWORD, retries: 0 });
    const outcomes = await client.batch([{ method: 'getrawtransaction', params: ['0'.repeat(64), false] }]);
    expect(outcomes[0]!.ok).toBe(false);
    expect(!outcomes[0]!.ok && outcomes[0]!.error.rpcCode).toBe(-5);
    client.close();
  });

  it('a wrong password (HTTP 401, empty body) is unauthorized', async () => {
    const s = new BitcoindChainSource({ url, user: 'user', password: 'wrong', network: 'regtest', retries: 0 });
    const health = await s.checkHealth();
    expect(health).toEqual({ ok: false, code: 'unauthorized', reason: expect.stringContaining('HTTP 401') });
    expect((await failure(s.getTip())).code).toBe('unauthorized');
    await s.close();
  });

  it('credentials inside the url are used, and never shown in messages', async () => {
    const withCredentials = url.replace('http://', `http://user:${PASSWORD}@`);
    const s = new BitcoindChainSource({ url: withCredentials, network: 'regtest', retries: 0 });
    expect((await s.getTip()).height).toBe(132);
    await s.close();
    const wrong = new BitcoindChainSource({ url: url.replace('http://', 'http://user:secret-guess@'), network: 'regtest', retries: 0 });
    const health = await wrong.checkHealth();
    expect(health).toMatchObject({ ok: false, code: 'unauthorized' });
    expect(JSON.stringify(health)).not.toContain('secret-guess');
    await wrong.close();
  });

  it('the node on regtest is refused by a service configured for mainnet', async () => {
    const s = new BitcoindChainSource({ url, user: 'user', password: PASSWORD, network: 'mainnet', retries: 0 });
    const error = await failure(s.getTip());
    expect(error.code).toBe('wrong_network');
    expect(error.message).toBe('Bitcoin Core follows regtest but the service is configured for mainnet');
    expect(await s.checkHealth()).toMatchObject({ ok: false, code: 'wrong_network' });
    await s.close();
  });
});
