// Soak run: `wcs serve` (a child process, on a fresh SQLite file or a fresh PostgreSQL schema)
// under N concurrent clients for a bounded time, mixing token creation (BasicAuth, a write) with
// Bearer-authenticated reads, on loopback. Counts 5xx and transport errors, then checks that every
// token whose creation was answered 201 is in the store (lost writes). Prints throughput and
// latency percentiles per operation as JSON.
// Usage: npm run build && node bench/soak/run.mjs [--store sqlite|postgres] [--duration 60] [--clients 100]
// PostgreSQL: WCS_TEST_DATABASE_URL (default postgres://wcs_test:wcs_test@127.0.0.1:5432/wcs_test).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import pg from 'pg';
import { freePort, waitFor } from '../support.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const option = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
};
const STORE = option('store', 'sqlite');
const DURATION_S = Math.min(Number(option('duration', '60')), 600);
const CLIENTS = Math.min(Number(option('clients', '100')), 500);
/** Upper bound on requests per client, so a very fast machine still ends with a bounded store. */
const MAX_REQUESTS_PER_CLIENT = 100_000;
const PASSWORD = 'soak-admin-password';
const USER_PASSWORD = 'soak-user-password';
const PG_URL = process.env.WCS_TEST_DATABASE_URL ?? 'postgres://wcs_test:wcs_test@127.0.0.1:5432/wcs_test';
if (STORE !== 'sqlite' && STORE !== 'postgres') throw new Error('--store sqlite|postgres');

/** Operation mix (weights): writes are a small share, as in real use; reads dominate. */
const MIX = [
  ['create_token', 5],
  ['read_service', 45], // admin Bearer, GET /service
  ['read_liveness', 40], // user Bearer, GET /liveness
  ['read_forbidden', 10], // user Bearer, GET /service -> 403 (a refused request, still a read path)
];

const basic = (user, password) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

function run(args, env, stdin = '') {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, 'dist/cli/main.js'), ...args], { env: { PATH: process.env.PATH, ...env }, stdio: ['pipe', 'ignore', 'inherit'] });
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`wcs ${args.join(' ')} exited ${code}`))));
    child.stdin.end(stdin);
  });
}

function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] * 10) / 10;
}

async function main() {
  const folder = mkdtempSync(join(tmpdir(), 'wcs-soak-'));
  const schema = `soak_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const port = await freePort();
  let databaseUrl = join(folder, 'service.sqlite');
  if (STORE === 'postgres') {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`create schema "${schema}"`);
    await client.end();
    databaseUrl = `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  }
  const env = {
    SERVICE_DATA_FOLDER: folder,
    SERVICE_DATABASE_URL: databaseUrl,
    SERVICE_PORT: String(port),
    SERVICE_API_ACTIVE: 'True',
    SERVICE_ADMIN_PASSWORD: PASSWORD,
    SERVICE_LOG_LEVEL: 'info', // as in production: one log line per request
    SERVICE_RATE_LIMIT: '1000000',
  };
  const server = spawn(process.execPath, [join(root, 'dist/cli/main.js'), 'serve'], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  const base = `http://127.0.0.1:${port}`;
  const api = `${base}/api/v1alpha`;
  const results = { statuses: {}, errors: 0, fiveXx: 0, latencies: Object.fromEntries(MIX.map(([op]) => [op, []])), acknowledged: [] };
  try {
    await waitFor(`${base}/healthz/live`);
    // After the first start, which creates admin only in an empty store.
    await run(['user', 'add', 'soak'], env, `${USER_PASSWORD}\n`);
    const tokenFor = async (user, password, description) => {
      const r = await fetch(`${api}/token`, { method: 'POST', headers: { authorization: basic(user, password), 'content-type': 'application/json' }, body: JSON.stringify({ jwt_token_description: description, jwt_token_life: '1 days' }) });
      if (r.status !== 201) throw new Error(`setup token: ${r.status} ${await r.text()}`);
      return (await r.json()).jwt_token;
    };
    const adminBearer = `Bearer ${await tokenFor('admin', PASSWORD, 'soak admin')}`;
    const userBearer = `Bearer ${await tokenFor('soak', USER_PASSWORD, 'soak user')}`;
    const totalWeight = MIX.reduce((a, [, w]) => a + w, 0);
    const pick = () => {
      let x = Math.random() * totalWeight;
      for (const [op, w] of MIX) if ((x -= w) < 0) return op;
      return MIX[0][0];
    };
    const deadline = Date.now() + DURATION_S * 1000;
    const started = performance.now();
    const client = async (id) => {
      for (let n = 0; n < MAX_REQUESTS_PER_CLIENT && Date.now() < deadline; n++) {
        const op = pick();
        const t0 = performance.now();
        let response;
        try {
          if (op === 'create_token') {
            response = await fetch(`${api}/token`, { method: 'POST', headers: { authorization: basic('admin', PASSWORD), 'content-type': 'application/json' }, body: JSON.stringify({ jwt_token_description: `c${id}-${n}`, jwt_token_life: '1 hours' }) });
          } else {
            const headers = { authorization: op === 'read_service' ? adminBearer : userBearer };
            response = await fetch(`${api}/${op === 'read_liveness' ? 'liveness' : 'service'}`, { headers });
          }
          const body = await response.json();
          results.latencies[op].push(performance.now() - t0);
          results.statuses[response.status] = (results.statuses[response.status] ?? 0) + 1;
          if (response.status >= 500) results.fiveXx++;
          if (op === 'create_token' && response.status === 201) results.acknowledged.push(body.jwt_token_id);
        } catch {
          results.errors++;
        }
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(i)));
    const seconds = (performance.now() - started) / 1000;

    // Lost writes: every acknowledged token must be in the store.
    let stored;
    if (STORE === 'sqlite') {
      const db = new Database(databaseUrl, { readonly: true });
      stored = new Set(db.prepare('select id from tokens').all().map((r) => r.id));
      db.close();
    } else {
      const c = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schema}` });
      await c.connect();
      stored = new Set((await c.query('select id from tokens')).rows.map((r) => r.id));
      await c.end();
    }
    const lost = results.acknowledged.filter((id) => !stored.has(id)).length;
    const all = Object.values(results.latencies).flat().sort((a, b) => a - b);
    const perOperation = Object.fromEntries(
      Object.entries(results.latencies).map(([op, list]) => {
        const sorted = [...list].sort((a, b) => a - b);
        return [op, { requests: sorted.length, perSecond: Math.round(sorted.length / seconds), p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99), maxMs: percentile(sorted, 100) }];
      }),
    );
    console.log(
      JSON.stringify(
        {
          store: STORE,
          machine: { cpus: cpus().length, node: process.version },
          clients: CLIENTS,
          seconds: Math.round(seconds * 10) / 10,
          requests: all.length,
          perSecond: Math.round(all.length / seconds),
          p50Ms: percentile(all, 50),
          p99Ms: percentile(all, 99),
          statuses: results.statuses,
          fiveXx: results.fiveXx,
          transportErrors: results.errors,
          acknowledgedWrites: results.acknowledged.length,
          lostWrites: lost,
          perOperation,
        },
        null,
        2,
      ),
    );
    if (results.fiveXx > 0 || results.errors > 0 || lost > 0) process.exitCode = 1;
  } finally {
    await new Promise((resolve) => {
      server.once('exit', resolve);
      server.kill('SIGTERM');
    });
    rmSync(folder, { recursive: true, force: true });
    if (STORE === 'postgres') {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`drop schema if exists "${schema}" cascade`);
      await c.end();
    }
  }
}

await main();
