// When the port of `wcs serve` answers, on an idle and on a busy machine: N 2-of-3 wallets written straight into a
// SQLite store (as run.mjs does, at a regtest Bitcoin Core's tip), then `wcs serve` spawned again and again on it,
// timed from the spawn until `/healthz/live` first answers 200 and until `/healthz/ready` does, with the slowest
// liveness answer in between (asked every 50 ms). Each round runs every build given, in alternating order, once
// with no extra load and once with `--busy` busy-loop processes spinning through the start (the machine's other
// work adds its own load: the load average is printed).
//
//   npm run build && node bench/many-wallets/port-under-load.mjs [--wallets 10000] [--rounds 3] [--busy 4]
//     [--dist DIR] (repeatable: the builds to compare, e.g. a copy of dist before a change; default dist)
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { locateBitcoind, startBitcoind } from '../bitcoind-support.mjs';
import { freePort } from '../support.mjs';
import { writeWallets } from './wallets.mjs';

const root = resolve(import.meta.dirname, '..', '..');
const numberArg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const WALLETS = numberArg('wallets', 10_000);
const ROUNDS = numberArg('rounds', 3);
const BUSY = numberArg('busy', 4);
const DISTS = process.argv.flatMap((a, i) => (a === '--dist' ? [resolve(process.argv[i + 1])] : []));
if (DISTS.length === 0) DISTS.push(join(root, 'dist'));
const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const chainDir = mkdtempSync(join(tmpdir(), 'wcs-bench-port-node-'));
const dataFolder = mkdtempSync(join(tmpdir(), 'wcs-bench-port-'));
const node = await startBitcoind(locateBitcoind(root), chainDir);
const results = new Map(); // "dist busy" -> [{ live, ready }]
try {
  await node.rpc.call('generatetodescriptor', [1, 'raw(51)']);
  const tip = { height: await node.rpc.call('getblockcount'), hash: await node.rpc.call('getbestblockhash') };
  const env = {
    SERVICE_DATA_FOLDER: dataFolder, SERVICE_NETWORK: 'regtest', SERVICE_API_ACTIVE: 'True', SERVICE_ADMIN_PASSWORD: 'bench-admin-password',
    SERVICE_LOG_LEVEL: 'warn', SERVICE_BITCOIND_URL: node.url, SERVICE_BITCOIND_COOKIE: node.cookieFile, SERVICE_SYNC_INTERVAL: '5',
    SERVICE_HOST: '127.0.0.1', SERVICE_MAX_WALLETS_PER_USER: '100000',
  };
  const written = performance.now();
  await writeWallets(env, tip, WALLETS);
  console.log(`${WALLETS} 2-of-3 wallets written in ${((performance.now() - written) / 1000).toFixed(1)} s; builds: ${DISTS.join(', ')}`);
  for (let round = 1; round <= ROUNDS; round++) {
    for (const busy of [0, BUSY]) {
      // Alternating order, so that neither build always runs first in a quieter or busier moment.
      const order = round % 2 === 1 ? DISTS : [...DISTS].reverse();
      for (const dist of order) {
        const spinning = Array.from({ length: busy }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
        try {
          await sleep(busy > 0 ? 500 : 0); // the loops running before the spawn
          const timed = await startTimed(dist, env);
          const key = `${label(dist)} busy ${busy}`;
          results.set(key, [...(results.get(key) ?? []), timed]);
          console.log(`round ${round}, ${key}: port ${timed.live.toFixed(2)} s, ready ${timed.ready.toFixed(2)} s, slowest liveness answer meanwhile ${timed.slowest.toFixed(2)} s; load ${load()}`);
        } finally {
          for (const child of spinning) child.kill('SIGKILL');
        }
      }
    }
  }
  console.log('medians:');
  for (const [key, list] of results) {
    const most = (field) => Math.max(...list.map((t) => t[field])).toFixed(2);
    console.log(`  ${key}: port ${median(list.map((t) => t.live)).toFixed(2)} s (max ${most('live')}), ready ${median(list.map((t) => t.ready)).toFixed(2)} s (max ${most('ready')}), slowest liveness answer ${most('slowest')} s (${list.length} runs)`);
  }
} finally {
  await node.stop();
  rmSync(chainDir, { recursive: true, force: true });
  rmSync(dataFolder, { recursive: true, force: true });
}

/** The folder's name, or its parent's for a `dist` folder: enough to tell the builds apart. */
function label(dist) {
  return basename(dist) === 'dist' ? basename(resolve(dist, '..')) : basename(dist);
}

function median(list) {
  const sorted = [...list].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Spawns `wcs serve` of one build; seconds from the spawn until liveness answers 200, and until readiness does. */
async function startTimed(dist, env) {
  const port = await freePort();
  const spawned = performance.now();
  const child = spawn(process.execPath, [join(dist, 'cli', 'main.js'), 'serve'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'], env: { PATH: process.env.PATH, ...env, SERVICE_PORT: String(port) } });
  const exited = new Promise((r) => child.once('exit', r));
  try {
    const base = `http://127.0.0.1:${port}`;
    const live = await firstOk(`${base}/healthz/live`, spawned, child);
    // Liveness asked every 50 ms from then until ready: the slowest answer (a probe's timeout is often 1 s).
    let slowest = 0;
    let probing = true;
    const probes = (async () => {
      while (probing) {
        const asked = performance.now();
        const ok = await fetch(`${base}/healthz/live`).then((r) => r.ok, () => false);
        slowest = Math.max(slowest, ok ? (performance.now() - asked) / 1000 : Infinity);
        await sleep(50);
      }
    })();
    const ready = await firstOk(`${base}/healthz/ready`, spawned, child);
    probing = false;
    await probes;
    return { live, ready, slowest };
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

/** Polls every 10 ms (a refused connection returns at once); seconds since `since` at the first 200. */
async function firstOk(url, since, child) {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`wcs serve exited (${child.exitCode})`);
    try {
      if ((await fetch(url, { signal: AbortSignal.timeout(120_000) })).ok) return (performance.now() - since) / 1000;
    } catch {
      // not listening yet
    }
    await sleep(10);
  }
}
