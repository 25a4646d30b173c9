// What a new block costs through an Electrum server, read two ways, against a real Fulcrum over a real regtest node:
// (a) the block's own transactions (`readBlocks`: txids by position, the merkle check, the transactions, none held
// before) and (b) one `get_history` per watched script (unused scripts, as most of a wallet's are), in the client's
// batches. Gives wall time and the CPU of this process and of Fulcrum per transaction and per script: the ratio
// behind SCRIPTS_PER_FETCHED_TRANSACTION in src/chain/electrum/follower.ts. Also the block's transactions read alone
// (`blockchain.transaction.get`) in pages of several sizes: TRANSACTIONS_PER_PAGE in transactions.ts.
//
//   npm run build && node bench/electrum/block-reads.bench.mjs [--transactions 300] [--scripts 40000] [--runs 3]
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ElectrumClient } from '../../dist/chain/electrum/client.js';
import { listBlockTxids, readBlocks } from '../../dist/chain/electrum/block-reads.js';
import { parseHeader } from '../../dist/chain/electrum/headers.js';
import { TransactionReader } from '../../dist/chain/electrum/transactions.js';
import { fromHex } from '../../dist/core/bytes.js';
import { locateBitcoind, startBitcoind } from '../bitcoind-support.mjs';
import { locateFulcrum, startFulcrum } from '../fulcrum-support.mjs';
import { cpuSeconds, numberArg } from '../support.mjs';

const root = resolve(import.meta.dirname, '..', '..');
const TRANSACTIONS = numberArg('transactions', 300);
const SCRIPTS = numberArg('scripts', 40_000);
const RUNS = numberArg('runs', 3);

const chainDir = mkdtempSync(join(tmpdir(), 'wcs-bench-block-reads-'));
const node = await startBitcoind(locateBitcoind(root), chainDir, ['-txindex=1']);
let fulcrum;
let client;
try {
  await node.rpc.call('createwallet', ['miner']);
  const miner = await node.rpc.call('getnewaddress', [], 'miner');
  await node.rpc.call('generatetoaddress', [110, miner]);
  // A confirmed coin for each payment: no payment waits on another's change.
  const coins = {};
  for (let i = 0; i < TRANSACTIONS; i++) coins[await node.rpc.call('getnewaddress', [], 'miner')] = 0.01;
  await node.rpc.call('sendmany', ['', coins], 'miner');
  await node.rpc.call('generatetoaddress', [1, miner]);
  // TRANSACTIONS - 1 payments of two outputs each (payee and change), mined in one block with the coinbase.
  for (let sent = 0; sent < TRANSACTIONS - 1; sent++) {
    await node.rpc.call('sendmany', ['', { [await node.rpc.call('getnewaddress', [], 'miner')]: 0.001 }], 'miner');
  }
  await node.rpc.call('generatetoaddress', [1, miner]);
  fulcrum = await startFulcrum(locateFulcrum(root), node);
  const height = await node.rpc.call('getblockcount');
  const headerHex = await node.rpc.call('getblockheader', [await node.rpc.call('getblockhash', [height]), false]);
  const header = parseHeader(fromHex(headerHex), height);
  client = new ElectrumClient({ url: fulcrum.url });
  await client.connect();
  const scripthashes = Array.from({ length: SCRIPTS }, () => randomBytes(32).toString('hex'));
  const measure = async (work) => {
    const [mine, theirs, started] = [process.cpuUsage(), cpuSeconds(fulcrum.pid), performance.now()];
    const result = await work();
    const used = process.cpuUsage(mine);
    return { result, wall: (performance.now() - started) / 1000, cpu: (used.user + used.system) / 1e6, fulcrumCpu: cpuSeconds(fulcrum.pid) - theirs };
  };
  console.log(`${TRANSACTIONS} transactions in block ${height}, ${SCRIPTS} scripts; load ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  for (let run = 0; run < RUNS; run++) {
    // A new reader each run: nothing cached.
    const listed = await measure(() => listBlockTxids(client, height, Infinity));
    const pages = [];
    for (const pageSize of [1, 2, 3, 5, 8, 10, 20, 64]) {
      const got = await measure(() => client.batch(listed.result.map((txid) => ({ method: 'blockchain.transaction.get', params: [txid, false] })), { maxCallsPerPage: pageSize }));
      pages.push(`${pageSize}: ${got.wall.toFixed(2)} s`);
    }
    console.log(`run ${run + 1}: txids listed in ${listed.wall.toFixed(3)} s; the transactions alone, by page size: ${pages.join(', ')}`);
    const block = await measure(() => readBlocks(client, new TransactionReader(client), [header], { listed: Infinity, fetched: Infinity }));
    if (!block.result.ok) throw new Error(`the block did not read: ${JSON.stringify(block.result)}`);
    const histories = await measure(() => client.batch(scripthashes.map((hash) => ({ method: 'blockchain.scripthash.get_history', params: [hash] }))));
    const per = (m, n) => `${((m.wall / n) * 1e6).toFixed(1)} µs wall, ${((m.cpu / n) * 1e6).toFixed(1)} µs here, ${((m.fulcrumCpu / n) * 1e6).toFixed(1)} µs Fulcrum`;
    console.log(`run ${run + 1}: block ${block.wall.toFixed(3)} s (a transaction: ${per(block, TRANSACTIONS)}); histories ${histories.wall.toFixed(3)} s (a script: ${per(histories, SCRIPTS)}); ratio wall ${(block.wall / TRANSACTIONS / (histories.wall / SCRIPTS)).toFixed(1)}; load ${loadavg()[0].toFixed(1)}`);
  }
} finally {
  await client?.close();
  await fulcrum?.stop();
  await node.stop();
  rmSync(chainDir, { recursive: true, force: true });
}
