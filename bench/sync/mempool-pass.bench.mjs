// The sync's mempool pass against a real Bitcoin Core (regtest) holding MEMPOOL_TXS transactions: the read the
// follower made before (`getMempool()`: `getrawmempool true`, then `getrawtransaction` of every txid, each
// parsed, at every pass) against the source's kept mempool (`mempoolTransactions()`: the txid list, then only the
// transactions not held yet). Also: the two ways of reading first-seen times of all of them.
// Run: npm run build && node --expose-gc bench/sync/mempool-pass.bench.mjs   (MEMPOOL_TXS=5000 NEW_TXS=50 RUNS=3;
// DIST=<folder> to run another build of the service)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { locateBitcoind, startBitcoind } from '../bitcoind-support.mjs';

const root = resolve(import.meta.dirname, '..', '..');
const DIST = resolve(process.env.DIST ?? join(root, 'dist'));
const MEMPOOL_TXS = Number(process.env.MEMPOOL_TXS ?? 5_000);
const NEW_TXS = Number(process.env.NEW_TXS ?? 50);
const RUNS = Number(process.env.RUNS ?? 3);
const OUTPUTS_PER_FANOUT = 1_250; // ~40 kvB, within the standard size of a transaction
const AMOUNT = 0.001;

const { BitcoindChainSource } = await import(join(DIST, 'chain/bitcoind/index.js'));

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x) => `${x.toFixed(0)} ms`;
async function timed(fn) {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const result = await fn();
  const used = process.cpuUsage(cpu);
  return { ms: performance.now() - started, cpuMs: (used.user + used.system) / 1000, result };
}
function heapMb() {
  globalThis.gc?.();
  return process.memoryUsage().heapUsed / 1e6;
}

async function ok(answers, what) {
  const bad = answers.find((a) => a.error);
  if (bad) throw new Error(`${what}: ${bad.error.message}`);
  return answers.map((a) => a.result);
}

/** Spends `coins` (one each) back to the miner, in batches: one mempool transaction per coin. */
async function spend(rpc, coins, address) {
  for (let i = 0; i < coins.length; i += 250) {
    const chunk = coins.slice(i, i + 250);
    const raws = await ok(
      await rpc.batch(chunk.map((c) => ({ method: 'createrawtransaction', params: [[{ txid: c.txid, vout: c.vout }], { [address]: Number((AMOUNT - 0.00001).toFixed(8)) }] }))),
      'createrawtransaction',
    );
    const signed = await ok(await rpc.batch(raws.map((hex) => ({ method: 'signrawtransactionwithwallet', params: [hex] })), 'spender'), 'sign');
    await ok(await rpc.batch(signed.map((s) => ({ method: 'sendrawtransaction', params: [s.hex] }))), 'sendrawtransaction');
  }
}

const datadir = mkdtempSync(join(tmpdir(), 'wcs-mempool-bench-'));
const node = await startBitcoind(locateBitcoind(root), datadir, ['-maxmempool=300']);
const { rpc } = node;
try {
  await rpc.call('createwallet', { wallet_name: 'miner', load_on_startup: false });
  const miner = await rpc.call('getnewaddress', [], 'miner');
  // The coins spent into the mempool are another wallet's: the miner's next fan-outs must not spend them.
  await rpc.call('createwallet', { wallet_name: 'spender', load_on_startup: false });
  const coinsNeeded = MEMPOOL_TXS + NEW_TXS;
  await rpc.call('generatetoaddress', [101 + Math.ceil((coinsNeeded * AMOUNT) / 50) + 1, miner]);
  const addresses = await ok(await rpc.batch(Array.from({ length: coinsNeeded }, () => ({ method: 'getnewaddress', params: [] })), 'spender'), 'getnewaddress');
  for (let i = 0; i < addresses.length; i += OUTPUTS_PER_FANOUT) {
    const amounts = Object.fromEntries(addresses.slice(i, i + OUTPUTS_PER_FANOUT).map((a) => [a, AMOUNT]));
    await rpc.call('sendmany', { dummy: '', amounts }, 'miner');
    await rpc.call('generatetoaddress', [1, miner]); // each on confirmed coins: the node caps unconfirmed clusters
  }
  const coins = (await rpc.call('listunspent', [1], 'spender')).filter((u) => u.amount === AMOUNT);
  if (coins.length < coinsNeeded) throw new Error(`only ${coins.length} coins of ${AMOUNT}`);
  const filling = await timed(() => spend(rpc, coins.slice(0, MEMPOOL_TXS), miner));
  const info = await rpc.call('getmempoolinfo');
  console.log(`mempool: ${info.size} transactions, ${(info.bytes / 1e6).toFixed(2)} MB (${(filling.ms / 1000).toFixed(1)} s to fill); load ${(await import('node:os')).loadavg().map((l) => l.toFixed(1)).join(' ')}`);

  const options = { url: node.url, cookieFile: node.cookieFile, network: 'regtest' };
  const before = [];
  const cold = [];
  const warm = [];
  for (let run = 0; run < RUNS; run++) {
    const whole = new BitcoindChainSource(options);
    const heapBefore = heapMb();
    const read = await timed(() => whole.getMempool());
    before.push({ ...read, held: heapMb() - heapBefore });
    await whole.close();
    const kept = new BitcoindChainSource(options);
    const heap = heapMb();
    cold.push(await timed(() => kept.mempoolTransactions()));
    const held = heapMb() - heap;
    warm.push({ ...(await timed(() => kept.mempoolTransactions())), held });
    await kept.close();
  }
  // A pass after NEW_TXS arrived, on a source that held the mempool before.
  const kept = new BitcoindChainSource(options);
  await kept.mempoolTransactions();
  await spend(rpc, coins.slice(MEMPOOL_TXS, MEMPOOL_TXS + NEW_TXS), miner);
  const afterNew = await timed(() => kept.mempoolTransactions());
  await kept.close();

  const txids = await rpc.call('getrawmempool', [false]);
  const verbose = await timed(() => rpc.call('getrawmempool', [true]));
  const entries = await timed(async () => {
    for (let i = 0; i < txids.length; i += 100) await rpc.batch(txids.slice(i, i + 100).map((t) => ({ method: 'getmempoolentry', params: [t] })));
  });

  const line = (name, xs) => console.log(`${name.padEnd(52)} ${ms(median(xs.map((x) => x.ms))).padStart(8)}  (runs ${xs.map((x) => ms(x.ms)).join(', ')}; CPU of the service ${ms(median(xs.map((x) => x.cpuMs)))})`);
  console.log(`\n${MEMPOOL_TXS} mempool transactions, ${RUNS} runs, medians:`);
  line('before: every pass (getMempool, everything)', before);
  line('after: first pass (nothing held)', cold);
  line('after: a pass with nothing new', warm);
  line(`after: a pass with ${NEW_TXS} new`, [afterNew]);
  const held = (xs) => `${median(xs.map((x) => x.held)).toFixed(1)} MB`;
  console.log(`heap: held between passes ${held(warm)}; a whole read's answer (before, until the pass ends) ${held(before)}${globalThis.gc ? '' : ' (run with --expose-gc)'}`);
  console.log(`first-seen times of all: getrawmempool true ${ms(verbose.ms)}, getmempoolentry batched by 100 ${ms(entries.ms)}`);
} finally {
  await node.stop();
  rmSync(datadir, { recursive: true, force: true });
}
