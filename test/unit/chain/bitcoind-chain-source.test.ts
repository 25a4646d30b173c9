/**
 * The Bitcoin Core chain source driven against the JSON-RPC test node: through every timeline
 * snapshot, and through the node conditions the service must survive (down, starting, syncing,
 * wrong credentials or network, no filters, slow, a broadcast whose answer is lost).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BitcoindChainSource, type BitcoindChainSourceOptions } from '../../../src/chain/bitcoind/index.js';
import { ChainError } from '../../../src/chain/types.js';
import { toHex } from '../../../src/core/bytes.js';
import { txid } from '../../../src/core/tx.js';
import { loadFixture } from '../../support/fixtures.js';
import { startRpcTestServer, type RpcTestServer, type RpcTestServerOptions } from '../../support/rpc-server.js';
import { chainFailure } from '../../support/chain-error.js';

const timeline = loadFixture('timeline');
const blocks = loadFixture('blocks');
const snapshots = timeline.snapshots as Array<{ tip: { height: number; hash: string }; chain: string[]; mempool: any[] }>;

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

async function nodeAndSource(nodeOptions: RpcTestServerOptions = {}, sourceOptions: Partial<BitcoindChainSourceOptions> = {}) {
  const node = await startRpcTestServer(nodeOptions);
  const source = new BitcoindChainSource({ url: node.url, ...node.credentials, network: 'regtest', retries: 0, retryDelayMs: 20, ...sourceOptions });
  open.push(node, source);
  return { node, source };
}

const failure = chainFailure;

describe('following the timeline', () => {
  let node: RpcTestServer;
  let source: BitcoindChainSource;
  beforeAll(async () => {
    node = await startRpcTestServer();
    source = new BitcoindChainSource({ url: node.url, ...node.credentials, network: 'regtest' });
  });
  afterAll(async () => {
    await source.close();
    await node.close();
  });

  it('tip, blocks, headers, filters and mempool match every snapshot', async () => {
    for (let i = 0; i < snapshots.length; i++) {
      const snap = snapshots[i]!;
      node.setSnapshot(i);
      expect(await source.getTip()).toEqual(snap.tip);
      for (let h = 0; h < snap.chain.length; h++) expect(await source.getBlockHash(h)).toBe(snap.chain[h]);
      expect((await failure(source.getBlockHash(snap.chain.length))).code).toBe('not_found');

      const tip = await source.getBlock(snap.tip.hash);
      expect(tip.hash).toBe(snap.tip.hash);
      expect(tip.prevHash).toBe(snap.chain[snap.chain.length - 2]);
      const header = await source.getBlockHeader(snap.tip.hash);
      expect(header).toMatchObject({ hash: snap.tip.hash, height: snap.tip.height, prevHash: tip.prevHash, time: blocks[snap.tip.hash].time, inActiveChain: true, confirmations: 1 });
      const filter = await source.getBlockFilter(snap.tip.hash);
      expect(filter && toHex(filter.filter)).toBe(blocks[snap.tip.hash].filter);
      expect(filter?.header).toBe(blocks[snap.tip.hash].filter_header);

      const byTxid = (a: { txid: string }, b: { txid: string }) => a.txid.localeCompare(b.txid);
      expect((await source.getMempoolTxids()).sort(byTxid)).toEqual(snap.mempool.map((m) => ({ txid: m.txid, time: m.time })).sort(byTxid));
      const mempool = (await source.getMempool()).sort(byTxid);
      expect(mempool.map((m) => ({ txid: m.txid, hex: m.hex, feeSat: m.feeSat, vsize: m.vsize, time: m.time }))).toEqual(
        snap.mempool.map((m) => ({ txid: m.txid, hex: m.hex, feeSat: BigInt(m.fee_sat), vsize: m.vsize, time: m.time })).sort(byTxid),
      );
      for (const m of mempool) expect(txid(m.tx)).toBe(m.txid);
    }
  });

  it('every block of every snapshot parses and hashes to the hash asked for', async () => {
    node.setSnapshot(snapshots.length - 1);
    for (const hash of snapshots.at(-1)!.chain) expect((await source.getBlock(hash)).hash).toBe(hash);
  });

  it('a reorged-out block is still readable and reported as not in the active chain', async () => {
    const stale = timeline.events.find((e: any) => e.stale_block).stale_block as string;
    node.setSnapshot(6);
    expect(await source.getBlockHeader(stale)).toMatchObject({ inActiveChain: true, confirmations: 1 });
    node.setSnapshot(7);
    expect(await source.getBlockHeader(stale)).toMatchObject({ inActiveChain: false, confirmations: -1, height: blocks[stale].height });
    expect((await source.getBlock(stale)).hash).toBe(stale);
    expect(await source.getBlockHash(blocks[stale].height)).not.toBe(stale);
  });

  it('summaries of a height range: hashes, headers and filters in two requests, shorter past the tip', async () => {
    const snap = snapshots.at(-1)!;
    node.setSnapshot(snapshots.length - 1);
    const requestsBefore = node.httpRequests;
    const summaries = await source.getBlockSummaries(1, snap.tip.height + 5);
    expect(node.httpRequests - requestsBefore).toBe(2);
    expect(summaries.map((s) => s.height)).toEqual(snap.chain.slice(1).map((_, i) => i + 1));
    for (const s of summaries) {
      expect(s).toEqual({ height: s.height, hash: snap.chain[s.height], prevHash: snap.chain[s.height - 1], time: blocks[s.hash].time, filter: expect.any(Uint8Array) });
      expect(toHex(s.filter!)).toBe(blocks[s.hash].filter);
    }
    expect(await source.getBlockSummaries(snap.tip.height + 1, snap.tip.height + 3)).toEqual([]);
    expect((await failure(source.getBlockSummaries(5, 4))).code).toBe('invalid_argument');
  });

  it('summaries stop before a block that left the active chain between the reads', async () => {
    const stale = timeline.events.find((e: any) => e.stale_block).stale_block as string;
    const height = blocks[stale].height as number;
    node.setSnapshot(6);
    node.afterCall = (call) => {
      if (call.method === 'getblockhash' && call.params[0] === height) node.setSnapshot(7);
    };
    try {
      const summaries = await source.getBlockSummaries(height - 2, height + 1);
      expect(summaries.map((s) => s.height)).toEqual([height - 2, height - 1]);
    } finally {
      node.afterCall = undefined;
    }
  });

  it('a transaction leaving the mempool between getrawmempool and getrawtransaction is left out', async () => {
    node.setSnapshot(8);
    const original = snapshots[8]!.mempool[0].txid;
    // The replacement evicts the original right after getrawmempool listed it.
    node.afterCall = (call) => {
      if (call.method === 'getrawmempool') node.setSnapshot(9);
    };
    const reading = source.getMempool();
    expect(await reading).toEqual([]);
    node.afterCall = undefined;
    expect(node.calls.filter((c) => c.method === 'getrawtransaction').at(-1)?.params[0]).toBe(original);
    expect((await source.getMempool()).map((m) => m.txid)).toEqual([snapshots[9]!.mempool[0].txid]);
  });

  it('reads a large mempool in several JSON-RPC batches', async () => {
    node.setSnapshot(1);
    const batched = new BitcoindChainSource({ url: node.url, ...node.credentials, network: 'regtest', mempoolBatchSize: 3 });
    const before = node.calls.length;
    const requestsBefore = node.httpRequests;
    const mempool = await batched.getMempool();
    await batched.close();
    expect(mempool.map((m) => m.txid).sort()).toEqual(snapshots[1]!.mempool.map((m) => m.txid).sort());
    // getblockchaininfo (network check), getrawmempool, then 8 getrawtransaction in batches of 3.
    expect(node.calls.slice(before).map((c) => c.method)).toEqual(['getblockchaininfo', 'getrawmempool', ...Array(8).fill('getrawtransaction')]);
    expect(node.httpRequests - requestsBefore).toBe(2 + 3);
  });

  it('keeps its connection alive across calls', async () => {
    const { node: fresh, source: client } = await nodeAndSource({ snapshot: 2 });
    for (let i = 0; i < 5; i++) await client.getBlockHash(i);
    await client.getMempool();
    expect(fresh.httpRequests).toBe(7);
    expect(fresh.connections).toBe(1);
  });

  it('bad arguments and unknown blocks are typed errors', async () => {
    expect((await failure(source.getBlockHash(-1))).code).toBe('invalid_argument');
    expect((await failure(source.getBlock('xyz'))).code).toBe('invalid_argument');
    expect((await failure(source.getBlock('00'.repeat(32)))).code).toBe('not_found');
    expect((await failure(source.getBlockHeader('00'.repeat(32)))).code).toBe('not_found');
    expect((await failure(source.getBlockFilter('00'.repeat(32)))).code).toBe('not_found');
    expect(await source.getMempoolEntry('00'.repeat(32))).toBeNull();
    expect((await failure(source.estimateFee(0))).code).toBe('invalid_argument');
  });
});

describe('health of the node', () => {
  it('a healthy node: network, tip, filters, version', async () => {
    const { source } = await nodeAndSource({ snapshot: 3 });
    expect(await source.checkHealth()).toEqual({ ok: true, network: 'regtest', tip: snapshots[3]!.tip, filters: true, nodeVersion: '/Satoshi:31.99.0/' });
  });

  it('wrong credentials: HTTP 401 from the node', async () => {
    const { source } = await nodeAndSource({ auth: { user: 'wcs', password: 'right' } }, { password: 'wrong' });
    const health = await source.checkHealth();
    expect(health).toEqual({ ok: false, code: 'unauthorized', reason: 'Bitcoin Core rejected the RPC credentials (HTTP 401): check rpcuser/rpcpassword or the cookie file' });
    expect(JSON.stringify(health)).not.toContain('wrong');
  });

  it('a refused connection', async () => {
    const node = await startRpcTestServer();
    const url = node.url;
    await node.close();
    const source = new BitcoindChainSource({ url, user: 'u', password: 'p', network: 'regtest', retries: 0 });
    open.push(source);
    expect(await source.checkHealth()).toEqual({ ok: false, code: 'connection_refused', reason: 'Connection to Bitcoin Core refused: is bitcoind running with its RPC server on the configured port?' });
    expect((await failure(source.getTip())).code).toBe('connection_refused');
  });

  it('many calls against a down node fail cleanly and leave no unhandled rejection', async () => {
    const node = await startRpcTestServer();
    const url = node.url;
    await node.close();
    const source = new BitcoindChainSource({ url, user: 'u', password: 'p', network: 'regtest', retries: 1, retryDelayMs: 10 });
    open.push(source);
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const outcomes = await Promise.allSettled([
        source.getTip(),
        source.getBlockHash(1),
        source.getBlockFilter('00'.repeat(32)),
        source.getMempool(),
        source.estimateFee(6),
        source.broadcast('00'),
      ]);
      for (const o of outcomes) {
        expect(o.status).toBe('rejected');
        expect(o.status === 'rejected' && (o.reason as ChainError).code).toBe('connection_refused');
      }
      expect(await source.checkHealth()).toMatchObject({ ok: false, code: 'connection_refused' });
      await new Promise((r) => setTimeout(r, 50));
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    expect(unhandled).toEqual([]);
  });

  it('a timeout', async () => {
    const { source } = await nodeAndSource({ delayMs: 400 }, { timeoutMs: 100 });
    expect(await source.checkHealth()).toEqual({ ok: false, code: 'timeout', reason: 'No answer from Bitcoin Core within 100 ms' });
    expect((await failure(source.getTip())).code).toBe('timeout');
  });

  it('a health check uses its own, shorter deadline', async () => {
    const { source } = await nodeAndSource({ delayMs: 300 }, { timeoutMs: 2_000, healthTimeoutMs: 100 });
    expect(await source.checkHealth()).toMatchObject({ ok: false, code: 'timeout', reason: expect.stringContaining('within 100 ms') });
    expect(await source.getTip()).toEqual(snapshots[0]!.tip);
  });

  it('a node warming up (-28)', async () => {
    const { source } = await nodeAndSource({ warmingUp: 'Loading block index…' });
    expect(await source.checkHealth()).toEqual({ ok: false, code: 'warming_up', reason: 'Bitcoin Core is starting up: Loading block index…' });
    const error = await failure(source.getTip());
    expect([error.code, error.rpcCode, error.retryable]).toEqual(['warming_up', -28, true]);
  });

  it('a node in initial block download', async () => {
    const { source } = await nodeAndSource({ initialBlockDownload: true, snapshot: 2 });
    expect(await source.checkHealth()).toEqual({
      ok: false,
      code: 'initial_block_download',
      reason: 'Bitcoin Core is in initial block download at block 121 of 121 headers (50.00% verified)',
    });
  });

  it('a node restarted on another network is refused from the next check on', async () => {
    const { source, node } = await nodeAndSource({});
    await source.verifyNetwork();
    expect(await source.getTip()).toEqual(snapshots[0]!.tip);
    node.behaviour.chain = 'signet';
    expect((await failure(source.verifyNetwork())).message).toBe('Bitcoin Core follows signet but the service is configured for regtest');
    expect((await failure(source.getTip())).code).toBe('wrong_network');
    node.behaviour.chain = 'regtest';
    await source.verifyNetwork();
    expect(await source.getTip()).toEqual(snapshots[0]!.tip);
  });

  it('a node on another network', async () => {
    const { source } = await nodeAndSource({ chain: 'main' });
    expect(await source.checkHealth()).toEqual({
      ok: false,
      code: 'wrong_network',
      reason: 'Bitcoin Core follows mainnet but the service is configured for regtest',
      nodeNetwork: 'mainnet',
    });
    expect((await failure(source.getBlockHash(0))).code).toBe('wrong_network');
    expect((await failure(source.verifyNetwork())).code).toBe('wrong_network');
    const { source: testnet4 } = await nodeAndSource({ chain: 'testnet4' }, { network: 'testnet' });
    expect((await failure(testnet4.getTip())).message).toBe('Bitcoin Core follows testnet4 but the service is configured for testnet');
  });

  it('a node without the filter index: filters false, getBlockFilter null', async () => {
    const { source, node } = await nodeAndSource({ filters: false });
    expect(await source.checkHealth()).toMatchObject({ ok: true, filters: false });
    expect(await source.getBlockFilter(snapshots[0]!.tip.hash)).toBeNull();
    expect(node.calls.filter((c) => c.method === 'getblockfilter')).toHaveLength(2);
    const summaries = await source.getBlockSummaries(0, snapshots[0]!.tip.height);
    expect(summaries).toHaveLength(snapshots[0]!.tip.height + 1);
    expect(summaries.every((s) => s.filter === null)).toBe(true);
  });

  it('leaves filters out of summaries for a minute after a read found none, then asks again', async () => {
    let now = 1_000_000;
    const { source, node } = await nodeAndSource({ filters: false }, { now: () => now });
    const height = snapshots[0]!.tip.height;
    const filterCalls = () => node.count('getblockfilter');
    expect((await source.getBlockSummaries(0, height)).every((s) => s.filter === null)).toBe(true);
    expect(filterCalls()).toBe(height + 1);
    // The node gets its index back: summaries leave the filters out until the minute is over.
    node.behaviour.filters = true;
    now += 59_000;
    const paused = await source.getBlockSummaries(0, height);
    expect(paused.map((s) => s.hash)).toEqual(snapshots[0]!.chain.slice(0, height + 1));
    expect(paused.every((s) => s.filter === null)).toBe(true);
    expect(filterCalls()).toBe(height + 1);
    now += 1_000;
    const again = await source.getBlockSummaries(0, height);
    expect(filterCalls()).toBe(2 * (height + 1));
    expect(again.every((s) => s.filter !== null && toHex(s.filter) === blocks[s.hash].filter)).toBe(true);
  });

  it('a node that comes back: idempotent reads retry with backoff until it answers', async () => {
    const { node, source } = await nodeAndSource({ warmingUp: 'Verifying blocks…' }, { retries: 5, retryDelayMs: 40 });
    setTimeout(() => (node.behaviour.warmingUp = null), 100);
    expect(await source.getTip()).toEqual(snapshots[0]!.tip);
    expect(node.count('getblockchaininfo')).toBeGreaterThan(2);
  });
});

describe('cookie authentication', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wcs-cookie-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads the cookie file, and re-reads it when the node restarts with a new one', async () => {
    const cookieFile = join(dir, '.cookie');
    const { node, source } = await nodeAndSource({ auth: { cookieFile } });
    expect(await source.getTip()).toEqual(snapshots[0]!.tip);
    node.rotateCookie();
    node.setSnapshot(2);
    expect(await source.getTip()).toEqual(snapshots[2]!.tip);
    expect((await source.checkHealth()).ok).toBe(true);
  });

  it('a missing cookie file is a configuration error, its path left out (messages may reach API users)', async () => {
    const cookieFile = join(dir, 'absent', '.cookie');
    const source = new BitcoindChainSource({ url: 'http://127.0.0.1:1', cookieFile, network: 'regtest', retries: 0 });
    open.push(source);
    expect(await source.checkHealth()).toEqual({ ok: false, code: 'bad_config', reason: 'Cannot read the Bitcoin Core cookie file (ENOENT)' });
  });

  it('no credentials at all is refused at construction', () => {
    expect(() => new BitcoindChainSource({ url: 'http://127.0.0.1:1', network: 'regtest' })).toThrow(/No Bitcoin Core RPC credentials/);
    expect(() => new BitcoindChainSource({ url: 'ftp://x', user: 'a', password: 'b', network: 'regtest' })).toThrow(ChainError);
  });
});

describe('broadcast', () => {
  const payment = snapshots[8]!.mempool[0];
  const replacement = snapshots[9]!.mempool[0];

  it('a valid transaction is accepted once and appears in the mempool', async () => {
    const { node, source } = await nodeAndSource({ snapshot: 7 });
    expect(await source.broadcast(payment.hex)).toBe(payment.txid);
    expect(node.broadcasts).toEqual([{ hex: payment.hex, outcome: { txid: payment.txid } }]);
    expect(await source.getMempoolEntry(payment.txid)).toMatchObject({ txid: payment.txid, feeSat: BigInt(payment.fee_sat), vsize: payment.vsize });
  });

  it('a fee bump replaces the original in the mempool', async () => {
    const { source } = await nodeAndSource({ snapshot: 8 });
    expect(await source.broadcast(replacement.hex)).toBe(replacement.txid);
    expect((await source.getMempoolTxids()).map((m) => m.txid)).toEqual([replacement.txid]);
    expect(await source.getMempoolEntry(payment.txid)).toBeNull();
  });

  it('rejections keep the node code and reason: -26 fee too low, -25 spent inputs, -27 confirmed, -22 undecodable', async () => {
    const { node, source } = await nodeAndSource({ snapshot: 9 });
    const lowFee = await failure(source.broadcast(payment.hex));
    expect([lowFee.code, lowFee.rpcCode]).toEqual(['tx_rejected', -26]);
    expect(lowFee.reason).toMatch(/^insufficient fee, rejecting replacement/);
    expect(lowFee.message).toBe(`The node rejected the transaction: ${lowFee.reason}`);

    node.setSnapshot(10);
    const spent = await failure(source.broadcast(payment.hex));
    expect([spent.code, spent.rpcCode, spent.reason]).toEqual(['tx_missing_inputs', -25, 'bad-txns-inputs-missingorspent']);

    const confirmed = await failure(source.broadcast(replacement.hex));
    expect([confirmed.code, confirmed.rpcCode, confirmed.reason]).toEqual(['tx_already_confirmed', -27, 'Transaction outputs already in utxo set']);

    const garbage = await failure(source.broadcast('0100'));
    expect([garbage.code, garbage.rpcCode]).toEqual(['tx_decode_failed', -22]);
    expect(node.count('sendrawtransaction')).toBe(4);
  });

  it('is never resent: a node warming up answers once, and the error says so', async () => {
    const { node, source } = await nodeAndSource({ snapshot: 7 }, { retries: 5 });
    await source.getTip(); // network confirmed first
    node.behaviour.warmingUp = 'Loading block index…';
    expect((await failure(source.broadcast(payment.hex))).code).toBe('warming_up');
    expect(node.count('sendrawtransaction')).toBe(1);
  });

  it('a lost answer is resolved by looking at the mempool, not by sending again', async () => {
    const { node, source } = await nodeAndSource({ snapshot: 7, methodDelayMs: { sendrawtransaction: 1_200 } }, { timeoutMs: 400, retries: 3 });
    expect(await source.broadcast(payment.hex)).toBe(payment.txid);
    expect(node.count('sendrawtransaction')).toBe(1);
    expect(node.count('getmempoolentry')).toBeGreaterThanOrEqual(1);
  });

  it('a lost answer for a transaction the node did not take is broadcast_unknown, never success', async () => {
    const { node, source } = await nodeAndSource({ snapshot: 9, methodDelayMs: { sendrawtransaction: 1_200 } }, { timeoutMs: 400 });
    const error = await failure(source.broadcast(payment.hex));
    expect([error.code, error.retryable]).toEqual(['broadcast_unknown', true]);
    expect(node.count('sendrawtransaction')).toBe(1);
  });
});

describe('fees', () => {
  it('estimates in sat/vB, and null when the node has no estimate', async () => {
    const { node, source } = await nodeAndSource();
    expect(await source.estimateFee(6, 'conservative')).toEqual({ satPerKvb: 2001, satPerVb: 2.001, blocks: 6 });
    node.behaviour.feeRate = null;
    expect(await source.estimateFee(6)).toBeNull();
    expect(await source.getRelayFees()).toEqual({ minRelaySatPerVb: 0.1, incrementalSatPerVb: 0.1, mempoolMinSatPerVb: 0.1 });
  });
});
