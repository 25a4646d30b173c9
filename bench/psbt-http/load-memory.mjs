// `node bench/psbt-http/load-memory.mjs [--payments 99999] [--spends 99999]` (after `npm run build`): the memory of a
// process loading the large wallet of `run.mjs --large` and nothing else, step by step: started on the stored wallet,
// the sync's load, the reads' load (first details read), 3 s later, settled 40 s after that. Each step: heap used after a
// forced GC (none at the last), heap total, RSS and peak RSS (MB). The wallet is written by another process
// (large-fill.mjs), as in large.mjs.
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { numberArg, startBenchService } from '../wallet-bench-support.mjs';
import { growingChain } from './large-wallet.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc');
const mb = (bytes) => Math.round(bytes / 1e6);
const steps = [];
const note = (step, ms) => {
  collectGarbage();
  const { heapUsed, heapTotal, rss } = process.memoryUsage();
  steps.push({ step, ...(ms === undefined ? {} : { ms: Math.round(ms) }), heapUsedMb: mb(heapUsed), heapTotalMb: mb(heapTotal), rssMb: mb(rss), peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024) });
};

const folder = mkdtempSync(join(tmpdir(), 'wcs-bench-load-memory-'));
const filled = execFileSync(process.execPath, [join(root, 'bench', 'psbt-http', 'large-fill.mjs'), folder, String(numberArg('payments', 99_999)), String(numberArg('spends', 99_999))], { encoding: 'utf8', maxBuffer: 1 << 20 });
const { tip, transactions } = JSON.parse(filled.trim().split('\n').at(-1));
const load = [loadavg()[0]];
const { running, api, bearer, close } = await startBenchService('', { chain: growingChain(tip), folder });
try {
  note('started on the stored wallet');
  let started = performance.now();
  await running.runtime.services.sync.runOnce();
  note('sync\'s load', performance.now() - started);
  started = performance.now();
  const answer = await fetch(`${api}/wallets/large?limit=1&utxo_limit=1`, { headers: bearer });
  if (answer.status !== 200) throw new Error(`details: ${answer.status} ${await answer.text()}`);
  await answer.json();
  note('reads\' load (first details read)', performance.now() - started);
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  note('3 s later');
  // V8 gives back the pages a load's peak grew the heap to only once allocation has been low for a while (its memory
  // reducer, about 8 s after a full collection, then in steps): what a process serving this wallet settles at.
  await new Promise((resolve) => setTimeout(resolve, 40_000));
  const { heapUsed, heapTotal, rss } = process.memoryUsage();
  steps.push({ step: 'settled (40 s later, no collection forced)', heapUsedMb: mb(heapUsed), heapTotalMb: mb(heapTotal), rssMb: mb(rss) });
} finally {
  await close();
}
load.push(loadavg()[0]);
console.log(JSON.stringify({ node: process.version, loadAverage1m: load.map((l) => +l.toFixed(2)), transactions, steps }, null, 2));
