// `node bench/psbt-http/run.mjs --large [--runs 40] [--payments 99999] [--spends 99999] [--no-core]`:
// a wallet of 200,000 transactions and 100,000 UTXOs (NBXplorer's PostgreSQL target) on the real server in
// process (SQLite file), timed from request to parsed answer: PSBT creation (then DELETE), wallet details
// with paged lists, the UTXO list and the transaction list (first and a late page), then the sync of a new
// block paying the wallet (in process through the sync service, from a block source) and the first read
// after it. The wallet is written by another process (large-fill.mjs), so that the memory figures are those of
// a process that loads and serves it: heap and RSS once loaded, peak RSS before and after the unpaged list (whose
// answer this process, being the client too, also parses). Anchor in the same run: Bitcoin Core's `walletcreatefundedpsbt` on a watch-only wallet of as
// many UTXOs (core-anchor.mjs; the node's chain is built once and cached).
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { external, fixtures, numberArg, startBenchService, stats } from '../wallet-bench-support.mjs';
import { coreCreateFundedPsbt } from './core-anchor.mjs';
import { growingChain } from './large-wallet.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const RUNS = Math.min(numberArg('runs', 40), 500);
const PAYMENTS = numberArg('payments', 99_999);
const SPENDS = numberArg('spends', 99_999);
const WARMUP = 3;
const READS_AFTER_BLOCK = Math.max(1, numberArg('reads-after-block', 3));
const log = (...parts) => console.error(new Date().toISOString().slice(11, 19), ...parts);
const rssMb = () => Math.round(process.resourceUsage().maxRSS / 1024);
const currentRssMb = () => Math.round(process.memoryUsage().rss / 1024 / 1024);
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc');
/** The heap left once garbage is collected: what the process holds. */
const heldHeapMb = () => {
  collectGarbage();
  return Math.round(process.memoryUsage().heapUsed / 1e6);
};

/** Times `request` RUNS times after WARMUP untimed ones; `check` sees every answer. */
async function timed(runs, request) {
  const ms = [];
  for (let i = 0; i < runs + WARMUP; i++) {
    const started = performance.now();
    await request(i);
    if (i >= WARMUP) ms.push(performance.now() - started);
  }
  return stats(ms);
}

/**
 * After a long pause (loading the wallet holds the server for a second or two) the server may close the client's idle
 * keep-alive connection just as a request goes out: a GET is retried, and a POST series starts after one.
 */
/**
 * The longest time the process went without running a 10 ms timer while `work` ran: how long every other
 * request (of any user, any wallet, a health probe) would have waited.
 */
async function longestStall(work) {
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last - 10);
    last = now;
  }, 10);
  try {
    await work();
    await new Promise((resolve) => setTimeout(resolve, 30)); // the timer's turn after the work's last stretch
  } finally {
    clearInterval(timer);
  }
  return Math.max(0, Math.round(longest));
}

async function getJson(url, headers, attempts = 3) {
  try {
    return await getJsonOnce(url, headers);
  } catch (error) {
    if (attempts <= 1 || !(error instanceof TypeError)) throw error;
    return getJson(url, headers, attempts - 1);
  }
}

async function getJsonOnce(url, headers) {
  const answer = await fetch(url, { headers });
  const body = await answer.json();
  if (answer.status !== 200) throw new Error(`GET ${url}: ${answer.status} ${JSON.stringify(body)}`);
  return body;
}

/**
 * Reads a small wallet, which drops the large wallet's reads' state (budget 1), then measures the heap and RSS
 * given back (RSS again after a few seconds: V8 returns freed pages lazily), and the next read of the large wallet,
 * which loads it again from the store (same balance as before the drop).
 */
async function dropReadsState(running, api, auth, alias, results) {
  const states = running.runtime.services.wallets.states;
  const before = await getJson(`${api}/wallets/${alias}?limit=1&utxo_limit=1`, auth);
  results['heap held before the reads\' state is dropped (MB)'] = { mb: heldHeapMb() };
  results['RSS before the reads\' state is dropped (MB)'] = { mb: currentRssMb() };
  const created = await fetch(`${api}/wallets`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'small', alias: 'small', recv_descriptor: fixtures.w_tr.recv_descriptor, change_descriptor: fixtures.w_tr.change_descriptor, birthday: 0 }) });
  if (created.status !== 201) throw new Error(`create small: ${created.status} ${await created.text()}`);
  await getJson(`${api}/wallets/small`, auth);
  if (states.keptWallets().length !== 1) throw new Error(`reads keep ${states.keptWallets().length} states`);
  results['heap held after the reads\' state is dropped (MB)'] = { mb: heldHeapMb() };
  results['RSS after the reads\' state is dropped (MB)'] = { mb: currentRssMb() };
  await new Promise((resolve) => setTimeout(resolve, 5_000));
  heldHeapMb();
  results['RSS 5 s and a GC later (MB)'] = { mb: currentRssMb() };
  const started = performance.now();
  const again = await getJson(`${api}/wallets/${alias}?limit=1&utxo_limit=1`, auth);
  results['next read of the large wallet (loads it again)'] = { ms: +(performance.now() - started).toFixed(0) };
  if (JSON.stringify(again.balance) !== JSON.stringify(before.balance) || again.txlist[0]?.txid !== before.txlist[0]?.txid) throw new Error('the large wallet reads otherwise once loaded again');
  results['heap held with the reads\' state loaded again (MB)'] = { mb: heldHeapMb() };
  results['RSS with the reads\' state loaded again (MB)'] = { mb: currentRssMb() };
}

async function main() {
  const folder = mkdtempSync(join(tmpdir(), 'wcs-bench-psbt-large-'));
  let started = performance.now();
  const filled = execFileSync(process.execPath, [join(root, 'bench', 'psbt-http', 'large-fill.mjs'), folder, String(PAYMENTS), String(SPENDS)], { encoding: 'utf8', maxBuffer: 1 << 20 });
  const { tip, transactions } = JSON.parse(filled.trim().split('\n').at(-1)); // the service may log before it
  log(`stored ${transactions} transactions in ${((performance.now() - started) / 1000).toFixed(1)} s (another process)`);
  const chain = growingChain(tip);
  // A budget of 1 keeps only the wallet read last: the large wallet's reads' state is kept while only it is read,
  // and dropped, as past any budget or after the idle time, once another wallet is read (the last step).
  const { running, api, bearer, close } = await startBenchService('', { chain, folder, env: { SERVICE_WALLET_STATES_BUDGET: '1' } });
  const results = {};
  const load = [loadavg()[0]];
  try {
    const auth = { ...bearer, 'content-type': 'application/json' };
    const alias = 'large';
    const utxoCount = PAYMENTS + 1;
    results['RSS of the service process started on the stored wallet (MB)'] = { mb: currentRssMb() };

    started = performance.now();
    let ms = 0;
    let stall = await longestStall(async () => {
      await running.runtime.services.sync.runOnce();
      ms = performance.now() - started;
    });
    results['sync: first pass, loading the stored wallet (once per process)'] = { ms: +ms.toFixed(0) };
    results['  of which the longest stretch answering nothing else'] = { ms: stall };
    results['heap held with the wallet loaded for the sync (MB)'] = { mb: heldHeapMb() };
    started = performance.now();
    let first;
    stall = await longestStall(async () => {
      first = await getJson(`${api}/wallets/${alias}?limit=1&utxo_limit=1`, bearer);
      ms = performance.now() - started;
    });
    results['first read after start (loads the wallet for reads)'] = { ms: +ms.toFixed(0) };
    results['  of which the longest stretch answering nothing else (read)'] = { ms: stall };
    if (first.balance === undefined || first.txlist.length !== 1) throw new Error('details: unexpected answer');
    log('loaded');
    results['heap held with the wallet loaded for the sync and for reads (MB)'] = { mb: heldHeapMb() };
    results['RSS with the wallet loaded for the sync and for reads (MB)'] = { mb: currentRssMb() };

    await getJson(`${api}/wallets/${alias}?limit=1&utxo_limit=1`, bearer);
    // PSBT creation over every coin, then DELETE so that the next one selects from the full set again.
    const body = JSON.stringify({ recipients: [{ address: external[0], amount: '0.004' }, { address: external[1], amount: 150_000, unit: 'sat' }], fee_rate: '5' });
    results['POST psbt (then DELETE)'] = await timed(RUNS, async () => {
      const answer = await fetch(`${api}/wallets/${alias}/psbt`, { method: 'POST', headers: auth, body });
      const record = await answer.json();
      if (answer.status !== 201) throw new Error(`create: ${answer.status} ${JSON.stringify(record)}`);
      const deleted = await fetch(`${api}/wallets/${alias}/psbt/${record.result.tx.txid}`, { method: 'DELETE', headers: bearer });
      if (deleted.status !== 200) throw new Error(`delete: ${deleted.status} ${await deleted.text()}`);
    });
    log('psbt done');
    results['heap held after PSBT creation (MB)'] = { mb: heldHeapMb() };

    const page = 50;
    const lateUtxo = utxoCount - page;
    const lateTx = transactions - page;
    const series = [
      ['GET wallet details, first pages (limit=50, utxo_limit=50)', `wallets/${alias}?limit=${page}&utxo_limit=${page}`, (b) => b.txlist.length === page && b.utxo.length === page],
      ['GET wallet details, late pages', `wallets/${alias}?limit=${page}&offset=${lateTx}&utxo_limit=${page}&utxo_offset=${lateUtxo}`, (b) => b.txlist.length === page && b.utxo.length === page],
      ['GET utxo, first page (limit=50)', `wallets/${alias}/utxo?limit=${page}`, (b) => b.utxo.length === page],
      ['GET utxo, late page', `wallets/${alias}/utxo?limit=${page}&offset=${lateUtxo}`, (b) => b.utxo.length === page],
      ['GET full_txlist, first page (limit=50)', `service/full_txlist?limit=${page}`, (b) => b.length === page],
      ['GET full_txlist, late page', `service/full_txlist?limit=${page}&offset=${lateTx}`, (b) => b.length === page],
    ];
    for (const [name, path, check] of series) {
      results[name] = await timed(RUNS, async () => {
        if (!check(await getJson(`${api}/${path}`, bearer))) throw new Error(`${name}: wrong page`);
      });
    }
    results['peak RSS before the unpaged list (MB)'] = { mb: rssMb() };
    // Unpaged, for scale: every UTXO in one answer.
    results['GET utxo, all 100,000 (unpaged)'] = await timed(Math.min(RUNS, 10), async () => {
      if ((await getJson(`${api}/wallets/${alias}/utxo`, bearer)).utxo.length !== utxoCount) throw new Error('utxo: wrong count');
    });
    log('reads done');
    load.push(loadavg()[0]);

    // New blocks paying the wallet: the sync pass that applies each (from the block source to the stored
    // change, events and settled PSBTs), then, on a few, the first read that shows it and the first PSBT
    // creation that can spend the new coin: both follow the rows written since the last read (ADR 0009).
    const sync = [];
    for (let i = 0; i < Math.min(RUNS, 20) + WARMUP; i++) {
      chain.mineBlock(i);
      const t0 = performance.now();
      const pass = await running.runtime.services.sync.runOnce();
      if (pass.blocksConnected !== 1) throw new Error(`sync pass connected ${pass.blocksConnected} blocks`);
      if (i >= WARMUP) sync.push(performance.now() - t0);
    }
    results['sync of a new block paying the wallet (pass: fetch, apply, store, events)'] = stats(sync);
    const readAfter = [];
    for (let i = 0; i < READS_AFTER_BLOCK; i++) {
      const mined = chain.mineBlock(1_000 + i);
      await running.runtime.services.sync.runOnce();
      const t1 = performance.now();
      const shown = await getJson(`${api}/wallets/${alias}?limit=1&utxo_limit=1`, bearer);
      readAfter.push(performance.now() - t1);
      if (shown.txlist[0]?.txid !== mined.paymentTxid) throw new Error('the new block\'s payment is not the newest transaction');
    }
    results[`first details read after a new block (${READS_AFTER_BLOCK} blocks)`] = stats(readAfter);
    const createAfter = [];
    for (let i = 0; i < READS_AFTER_BLOCK; i++) {
      chain.mineBlock(2_000 + i);
      await running.runtime.services.sync.runOnce();
      const t1 = performance.now();
      const answer = await fetch(`${api}/wallets/${alias}/psbt`, { method: 'POST', headers: auth, body });
      const record = await answer.json();
      createAfter.push(performance.now() - t1);
      if (answer.status !== 201) throw new Error(`create after a block: ${answer.status} ${JSON.stringify(record)}`);
      await fetch(`${api}/wallets/${alias}/psbt/${record.result.tx.txid}`, { method: 'DELETE', headers: bearer });
    }
    results[`first POST psbt after a new block (${READS_AFTER_BLOCK} blocks)`] = stats(createAfter);
    load.push(loadavg()[0]);
    results['peak RSS of the service process (MB)'] = { mb: rssMb() };
    await dropReadsState(running, api, auth, alias, results);
  } finally {
    await close();
  }

  if (!process.argv.includes('--no-core')) {
    log('Bitcoin Core anchor (first run builds and caches its chain)');
    const core = await coreCreateFundedPsbt({
      root,
      count: PAYMENTS + 1,
      runs: Math.min(RUNS, 10),
      fixture: fixtures.w_wpkh,
      recipients: [{ address: external[0], sat: 400_000 }, { address: external[1], sat: 150_000 }],
    });
    results['Core walletcreatefundedpsbt, same UTXO count (watch-only)'] = stats(core.ms);
    results['Core loadwallet (s)'] = { s: +core.loadSeconds.toFixed(1) };
    const ours = results['POST psbt (then DELETE)'];
    results['ratio POST psbt / Core (median)'] = { ratio: +(ours.p50 / results['Core walletcreatefundedpsbt, same UTXO count (watch-only)'].p50).toFixed(3) };
  }
  console.log(JSON.stringify({ machine: `${cpus().length} cores, ${cpus()[0]?.model}, Node ${process.version}`, loadAverage1m: load.map((l) => +l.toFixed(2)), transactions: PAYMENTS + SPENDS + 1, utxos: PAYMENTS + 1, results }, null, 2));
}

await main();
