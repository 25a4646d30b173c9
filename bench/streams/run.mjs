// Live streams and other users: the median latency of one user's one-at-a-time requests, first alone, then
// while another user holds many event streams open, on PostgreSQL (`wcs serve` as a child process); and the
// server's CPU time per second while those streams are open and idle.
// Usage: npm run build && node bench/streams/run.mjs [--streams 200] [--requests 400] [--root <checkout with dist/>]
// Needs the test PostgreSQL (WCS_TEST_DATABASE_URL, default postgres://wcs_test:wcs_test@127.0.0.1:5432/wcs_test).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { cpuSeconds, freePort, waitFor } from '../support.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const option = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
};
const STREAMS = Math.min(Number(option('streams', 200)), 1000);
const REQUESTS = Math.min(Number(option('requests', 400)), 5000);
const ROOT = resolve(option('root', join(here, '..', '..')));
const DATABASE_URL = process.env.WCS_TEST_DATABASE_URL ?? 'postgres://wcs_test:wcs_test@127.0.0.1:5432/wcs_test';
const PASSWORD = 'bench-admin-password';

async function query(text) {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

function run(args, env, input) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'dist', 'cli', 'main.js'), ...args], { env: { PATH: process.env.PATH, ...env }, stdio: ['pipe', 'ignore', 'inherit'] });
    child.stdin.end(input ?? '');
    child.once('exit', (code) => (code === 0 ? resolvePromise() : reject(new Error(`wcs ${args.join(' ')} exited with ${code}`))));
  });
}

async function token(base, user, password) {
  const answer = await fetch(`${base}/api/v1alpha/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`, 'content-type': 'application/json' },
    body: JSON.stringify({ jwt_token_description: `bench ${Date.now()}`, jwt_token_life: '1 hours' }),
  });
  if (answer.status !== 201) throw new Error(`token for ${user}: ${answer.status}`);
  return (await answer.json()).jwt_token;
}

/** Milliseconds of each of `count` requests sent one after another. */
async function sequential(url, jwt, count) {
  const times = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const answer = await fetch(url, { headers: { authorization: `Bearer ${jwt}` } });
    await answer.arrayBuffer();
    if (answer.status !== 200) throw new Error(`${url}: ${answer.status}`);
    times.push(performance.now() - started);
  }
  return times;
}

/** Opens an event stream; resolves with its status once the headers came, and a close function. */
function openStream(base, jwt) {
  return new Promise((resolvePromise, reject) => {
    const req = httpRequest(`${base}/api/v1alpha/events`, { headers: { authorization: `Bearer ${jwt}`, accept: 'text/event-stream' } }, (res) => {
      res.on('data', () => {});
      res.on('error', () => {});
      resolvePromise({ status: res.statusCode, close: () => req.destroy() });
    });
    req.on('error', reject);
    req.end();
  });
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const round1 = (x) => Math.round(x * 10) / 10;

const schema = `bench_streams_${process.pid}`;
const folder = mkdtempSync(join(tmpdir(), 'wcs-bench-streams-'));
const port = await freePort();
const env = {
  SERVICE_DATA_FOLDER: folder,
  SERVICE_DATABASE_URL: `${DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`,
  SERVICE_PORT: String(port),
  SERVICE_API_ACTIVE: 'True',
  SERVICE_ADMIN_PASSWORD: PASSWORD,
  SERVICE_LOG_LEVEL: 'warn',
  SERVICE_USER_EVENT_STREAMS: String(STREAMS),
};
await query(`create schema ${schema}`);
const server = spawn(process.execPath, [join(ROOT, 'dist', 'cli', 'main.js'), 'serve'], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
const streams = [];
try {
  const base = `http://127.0.0.1:${port}`;
  await waitFor(`${base}/healthz/live`);
  await run(['user', 'add', 'bob'], env, 'bob-bench-password\n');
  const [admin, bob] = [await token(base, 'admin', PASSWORD), await token(base, 'bob', 'bob-bench-password')];
  const url = `${base}/api/v1alpha/wallets`;
  await sequential(url, bob, 100); // warm-up
  const alone = median(await sequential(url, bob, REQUESTS));
  for (let i = 0; i < STREAMS; i++) {
    const stream = await openStream(base, admin);
    streams.push(stream);
    if (stream.status !== 200) throw new Error(`stream ${i + 1}: ${stream.status}`);
  }
  await new Promise((r) => setTimeout(r, 1_000));
  const cpuBefore = cpuSeconds(server.pid);
  await new Promise((r) => setTimeout(r, 5_000));
  const idleCpuPerSecond = (cpuSeconds(server.pid) - cpuBefore) / 5;
  const besideStreams = median(await sequential(url, bob, REQUESTS));
  console.log(
    `PostgreSQL, ${REQUESTS} sequential GET /wallets of one user: median ${round1(alone)} ms alone, ${round1(besideStreams)} ms while another user holds ` +
      `${STREAMS} event streams; server CPU with the streams open and idle: ${Math.round(idleCpuPerSecond * 1000)} ms per second`,
  );
} finally {
  for (const stream of streams) stream.close();
  await new Promise((r) => {
    server.once('exit', r);
    server.kill('SIGTERM');
  });
  await query(`drop schema ${schema} cascade`);
  rmSync(folder, { recursive: true, force: true });
}
