// Runs every benchmark one after the other (after `npm run build`), each in its own process so one
// does not warm or slow the next. Each benchmark writes its own results; see bench/README.md.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BENCHMARKS = [
  'core/derive.mjs',
  'core/coinselect.bench.mjs',
  'bip158/filter-match.bench.mjs',
  'psbt/psbt.bench.mjs',
  'engine/apply-block.bench.mjs',
  'sync/sync.bench.mjs',
  'sync/mempool-pass.bench.mjs',
  'http/run.mjs',
  'psbt-http/run.mjs',
  'web/run.mjs',
  'rescan/run.mjs',
  'rescan/first-read.bench.mjs',
  'miniscript/miniscript.bench.mjs',
  'electrum/batch.bench.mjs',
  'electrum/run.mjs',
];

const only = process.argv.slice(2);
let failed = 0;
for (const script of BENCHMARKS) {
  if (only.length > 0 && !only.some((name) => script.startsWith(name))) continue;
  console.log(`\n=== bench/${script}`);
  const result = spawnSync(process.execPath, [fileURLToPath(new URL(script, import.meta.url))], { stdio: 'inherit' });
  if (result.status !== 0) {
    failed += 1;
    console.error(`bench/${script} exited with ${result.status ?? result.signal}`);
  }
}
process.exitCode = failed === 0 ? 0 : 1;
