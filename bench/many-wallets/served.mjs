// The node and store a bench serves on, `wcs serve` of a build spawned on them, and a REST client of it: what api.mjs and block-during-creations.mjs
// share. Times are `performance.now()` moments.
import { spawn } from 'node:child_process';
import { mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { locateBitcoind, startBitcoind } from '../bitcoind-support.mjs';
import { freePort } from '../support.mjs';
import { benchDatabase } from './wallets.mjs';

const root = resolve(import.meta.dirname, '..', '..');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const BENCH_ADMIN_PASSWORD = 'bench-admin-password';

/**
 * Starts `wcs serve` of the build in `dist` with `env`; `live` and `ready` resolve to the moment each probe first
 * answered 200 (and reject if the server exits first). `serverLog`: a file its stdout is appended to; `profileDir`:
 * a CPU profile written when it stops; `snapshotDir`: heap snapshots on SIGUSR2.
 */
export async function serve(env, { dist, serverLog, profileDir, snapshotDir } = {}) {
  const port = await freePort();
  const profile = [...(profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : []), ...(snapshotDir ? ['--heapsnapshot-signal=SIGUSR2', '--diagnostic-dir', snapshotDir] : [])];
  const spawned = performance.now();
  const log = serverLog ? openSync(serverLog, 'a') : 'ignore';
  const child = spawn(process.execPath, [...profile, join(dist, 'cli', 'main.js'), 'serve'], { cwd: root, stdio: ['ignore', log, 'inherit'], env: { PATH: process.env.PATH, ...env, SERVICE_PORT: String(port) } });
  const exited = new Promise((r) => child.once('exit', r));
  const base = `http://127.0.0.1:${port}`;
  const live = Promise.race([firstOk(`${base}/healthz/live`), exited.then((code) => Promise.reject(new Error(`wcs serve exited (${code})`)))]);
  const ready = live.then(() => firstOk(`${base}/healthz/ready`));
  // A server that exits fails whichever of the two the bench awaits; the other must not end the bench unhandled
  // before its clean-up (the node it started) runs.
  for (const promise of [live, ready]) promise.catch(() => {});
  return {
    pid: child.pid,
    spawned,
    live,
    ready,
    /** A client with a token of `user` (BasicAuth to `POST /token`). */
    async client(user = 'admin', password = BENCH_ADMIN_PASSWORD) {
      const basic = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
      const response = await fetch(`${base}/api/v1alpha/token`, { method: 'POST', headers: { authorization: basic, 'content-type': 'application/json' }, body: JSON.stringify({ jwt_token_description: `bench ${user} ${port}`, jwt_token_life: '1 days' }) });
      const answer = await response.json();
      if (!answer.jwt_token) throw new Error(`POST /token as ${user}: ${response.status} ${JSON.stringify(answer)}`);
      return apiClient(`${base}/api/v1alpha`, answer.jwt_token);
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/**
 * What a bench serves on: a regtest Bitcoin Core with a funded miner wallet, a data folder and (with `postgres`) a
 * schema of its own; `env` is `wcs serve`'s environment on them. `dispose()` stops the node and removes them all.
 */
export async function benchNode(postgres, name) {
  const { env: database, drop: dropDatabase } = await benchDatabase(postgres, `bench_${name}`);
  const chainDir = mkdtempSync(join(tmpdir(), `wcs-bench-${name}-node-`));
  const dataFolder = mkdtempSync(join(tmpdir(), `wcs-bench-${name}-`));
  const node = await startBitcoind(locateBitcoind(root), chainDir);
  const dispose = async () => {
    await node.stop();
    rmSync(chainDir, { recursive: true, force: true });
    rmSync(dataFolder, { recursive: true, force: true });
    await dropDatabase();
  };
  try {
    return { node, minerAddress: await fundMiner(node), env: serveEnv(node, dataFolder, database), dispose };
  } catch (error) {
    await dispose();
    throw error;
  }
}

/** Makes `node`'s wallet `miner` and 110 blocks paying it (coins to spend); its address. */
export async function fundMiner(node) {
  await node.rpc.call('createwallet', ['miner']);
  const minerAddress = await node.rpc.call('getnewaddress', [], 'miner');
  await node.rpc.call('generatetoaddress', [110, minerAddress]);
  return minerAddress;
}

/** The environment of `wcs serve` on regtest `node`, its data in `dataFolder`, `database` its store's settings. */
export function serveEnv(node, dataFolder, database, adminPassword = BENCH_ADMIN_PASSWORD) {
  return {
    SERVICE_DATA_FOLDER: dataFolder, SERVICE_NETWORK: 'regtest', SERVICE_API_ACTIVE: 'True', SERVICE_ADMIN_PASSWORD: adminPassword,
    SERVICE_LOG_LEVEL: 'warn', SERVICE_BITCOIND_URL: node.url, SERVICE_BITCOIND_COOKIE: node.cookieFile, SERVICE_HOST: '127.0.0.1',
    SERVICE_MAX_WALLETS_PER_USER: '100000', ...database,
  };
}

/** Requests with the token; `timed` (milliseconds, answer read) and `json` throw on another status than expected. */
export function apiClient(base, token) {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const send = async (method, path, body, status) => {
    const t0 = performance.now();
    const response = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.text();
    if (response.status !== status) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`);
    return { text, ms: performance.now() - t0 };
  };
  return {
    timed: async (method, path, body, status = 200) => (await send(method, path, body, status)).ms,
    json: async (method, path, body, status = 200) => JSON.parse((await send(method, path, body, status)).text),
  };
}

/** The moment `url` first answers 2xx. */
export async function firstOk(url) {
  for (;;) {
    try {
      if ((await fetch(url, { signal: AbortSignal.timeout(120_000) })).ok) return performance.now();
    } catch {
      // not listening yet
    }
    await sleep(20);
  }
}

/** The p-th percentile of the defined values of `list`. */
export function pct(list, p) {
  const sorted = list.filter((t) => t !== undefined).sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
}
