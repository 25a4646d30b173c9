// A restart with many 2-of-3 wallets: N wallets (each its own three keys) written straight into a SQLite store as
// a first sync leaves them (40 addresses each, at the node's tip), then `wcs serve` started on a real regtest node;
// timed until `/healthz/live` first answers, and until `/healthz/ready` does (the sync has loaded every wallet).
// Once ready, each run also times `GET /service`, the first page of `GET /wallets` and wallet creations over the
// API, and reads the server's resident memory.
//
//   npm run build && node bench/many-wallets/run.mjs [--wallets 3000] [--runs 2] [--creates 30] [--cpu-prof DIR]
//     [--postgres] (a schema of its own at WCS_BENCH_DATABASE_URL, default the tests' database, dropped after)
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { locateBitcoind, startBitcoind } from '../bitcoind-support.mjs';
import { freePort } from '../support.mjs';
import { benchDatabase, descriptorsOf, writeWallets } from './wallets.mjs';

const root = resolve(import.meta.dirname, '..', '..');
const numberArg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const WALLETS = numberArg('wallets', 3000);
const RUNS = numberArg('runs', 2);
const CREATES = numberArg('creates', 30);
const profileAt = process.argv.indexOf('--cpu-prof');
const PROFILE_DIR = profileAt >= 0 ? resolve(process.argv[profileAt + 1]) : undefined;

const POSTGRES = process.argv.includes('--postgres');
const { env: database, drop: dropDatabase } = await benchDatabase(POSTGRES, 'bench_many');

const chainDir = mkdtempSync(join(tmpdir(), 'wcs-bench-many-node-'));
const dataFolder = mkdtempSync(join(tmpdir(), 'wcs-bench-many-'));
const node = await startBitcoind(locateBitcoind(root), chainDir);
try {
  await node.rpc.call('generatetodescriptor', [1, 'raw(51)']);
  const tip = { height: await node.rpc.call('getblockcount'), hash: await node.rpc.call('getbestblockhash') };
  const env = {
    SERVICE_DATA_FOLDER: dataFolder, SERVICE_NETWORK: 'regtest', SERVICE_API_ACTIVE: 'True', SERVICE_ADMIN_PASSWORD: 'bench-admin-password',
    SERVICE_LOG_LEVEL: 'warn', SERVICE_BITCOIND_URL: node.url, SERVICE_BITCOIND_COOKIE: node.cookieFile, SERVICE_SYNC_INTERVAL: '5', SERVICE_HOST: '127.0.0.1', SERVICE_MAX_WALLETS_PER_USER: '100000', ...database,
  };
  const written = performance.now();
  await writeWallets(env, tip, WALLETS);
  console.log(`${WALLETS} 2-of-3 wallets written in ${((performance.now() - written) / 1000).toFixed(1)} s`);
  for (let run = 1; run <= RUNS; run++) {
    const { live, ready, rssMb, service, firstPage, creates } = await restart(env, run);
    console.log(`run ${run}: /healthz/live answered after ${live.toFixed(2)} s, /healthz/ready after ${ready.toFixed(2)} s, RSS ${rssMb} MB when ready`);
    console.log(`  GET /service ${ms(service)}; GET /wallets?limit=50 ${ms(firstPage)}; POST /wallets (${creates.length}) p50 ${median(creates).toFixed(1)} ms, max ${Math.max(...creates).toFixed(1)} ms`);
  }
} finally {
  await node.stop();
  rmSync(chainDir, { recursive: true, force: true });
  rmSync(dataFolder, { recursive: true, force: true });
  await dropDatabase();
}


function ms(list) {
  return list.map((t) => `${t.toFixed(1)} ms`).join(', ');
}

function median(list) {
  return [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
}

/**
 * Starts `wcs serve` on the store; seconds until liveness answers, and until readiness does; then the
 * requests' times and the resident memory. The wallets created are deleted again, so every run starts alike.
 */
async function restart(env, run) {
  const port = await freePort();
  const started = performance.now();
  const profile = PROFILE_DIR ? ['--cpu-prof', '--cpu-prof-dir', PROFILE_DIR] : [];
  const child = spawn(process.execPath, [...profile, join(root, 'dist', 'cli', 'main.js'), 'serve'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'], env: { PATH: process.env.PATH, ...env, SERVICE_PORT: String(port) } });
  const base = `http://127.0.0.1:${port}`;
  try {
    const live = await firstOk(`${base}/healthz/live`, started);
    const ready = await firstOk(`${base}/healthz/ready`, started);
    const rssMb = Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))[1]) / 1024);
    const api = `${base}/api/v1alpha`;
    const basic = `Basic ${Buffer.from('admin:bench-admin-password').toString('base64')}`;
    const token = (await (await fetch(`${api}/token`, { method: 'POST', headers: { authorization: basic, 'content-type': 'application/json' }, body: JSON.stringify({ jwt_token_description: `bench ${run}`, jwt_token_life: '1 days' }) })).json()).jwt_token;
    const auth = { authorization: `Bearer ${token}` };
    const service = [];
    for (let i = 0; i < 3; i++) service.push(await timed(`${api}/service`, { headers: auth }));
    const firstPage = [];
    for (let i = 0; i < 3; i++) firstPage.push(await timed(`${api}/wallets?limit=50&offset=${i * 50}`, { headers: auth }));
    const creates = [];
    for (let i = 0; i < CREATES; i++) {
      const [recv, change] = descriptorsOf(WALLETS + i);
      const alias = `created-${i}`;
      creates.push(await timed(`${api}/wallets`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ name: `Created ${i}`, alias, recv_descriptor: recv, change_descriptor: change, birthday: 1 }) }, 201));
    }
    for (let i = 0; i < CREATES; i++) await timed(`${api}/wallets/created-${i}`, { method: 'DELETE', headers: auth }, 200);
    return { live, ready, rssMb, service, firstPage, creates };
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
}

/** Milliseconds one request takes, its answer read; fails on another status than `status`. */
async function timed(url, init, status = 200) {
  const t0 = performance.now();
  const response = await fetch(url, init);
  const text = await response.text();
  const took = performance.now() - t0;
  if (response.status !== status) throw new Error(`${init.method ?? 'GET'} ${url}: ${response.status} ${text.slice(0, 300)}`);
  return took;
}

async function firstOk(url, since) {
  for (;;) {
    try {
      if ((await fetch(url, { signal: AbortSignal.timeout(120_000) })).ok) return (performance.now() - since) / 1000;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
