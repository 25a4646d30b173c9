// Soak run: `wcs serve` (a child process, on a fresh SQLite file or a fresh PostgreSQL schema, synced
// from a synthetic regtest chain served over JSON-RPC) under N concurrent clients for a bounded time,
// mixing token creation (BasicAuth, a write), PSBT creation (reserves coins) and deletion, and
// Bearer-authenticated reads, on loopback. Counts 5xx and transport errors, then checks the store:
// every token and PSBT whose creation was answered 201 is there (unless answered deleted), every
// deleted PSBT is gone, and no coin is reserved twice. Prints throughput and latency percentiles
// per operation as JSON.
// Usage: npm run build && node bench/soak/run.mjs [--store sqlite|postgres] [--duration 60] [--clients 100] [--utxos 2000]
// PostgreSQL: WCS_TEST_DATABASE_URL (default postgres://wcs_test:wcs_test@127.0.0.1:5432/wcs_test).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import pg from 'pg';
import { DescriptorDeriver, parseDescriptor } from '../../dist/core/descriptor/index.js';
import { NETWORKS } from '../../dist/core/network.js';
import { accountKey, buildChain, seedScript, startChainNode, syntheticTransaction } from '../chain-support.mjs';
import { freePort, waitFor } from '../support.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const option = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
};
const STORE = option('store', 'sqlite');
const DURATION_S = Math.min(Number(option('duration', '60')), 600);
const CLIENTS = Math.min(Number(option('clients', '100')), 500);
/** Confirmed coins of the soak wallet; pending PSBTs hold some of them all the time. */
const UTXOS = Math.min(Number(option('utxos', '2000')), 20_000);
const PAYMENTS_PER_BLOCK = 20;
/** Width of the throughput series' windows, seconds. */
const WINDOW_S = 10;
/** Share of created PSBTs the client deletes right away (their coins are free again); the rest stay pending. */
const DELETE_SHARE = 0.75;
/** Upper bound on requests per client, so a very fast machine still ends with a bounded store. */
const MAX_REQUESTS_PER_CLIENT = 100_000;
const PASSWORD = 'soak-admin-password';
const USER_PASSWORD = 'soak-user-password';
const PG_URL = process.env.WCS_TEST_DATABASE_URL ?? 'postgres://wcs_test:wcs_test@127.0.0.1:5432/wcs_test';
if (STORE !== 'sqlite' && STORE !== 'postgres') throw new Error('--store sqlite|postgres');

/** Operation mix (weights): writes are a small share, as in real use; reads dominate. */
const MIX = [
  ['create_token', 5],
  ['create_psbt', 10], // admin Bearer, POST /wallets/soak/psbt; DELETE_SHARE of them followed by delete_psbt
  ['read_service', 40], // admin Bearer, GET /service
  ['read_liveness', 35], // user Bearer, GET /liveness
  ['read_forbidden', 10], // user Bearer, GET /service -> 403 (a refused request, still a read path)
];
const OPERATIONS = [...MIX.map(([op]) => op), 'delete_psbt'];

/** The soak wallet (single key, P2WPKH) and the chain that pays it UTXOS coins, PAYMENTS_PER_BLOCK per block. */
const walletKey = accountKey('soak wallet', "m/84'/1'/0'");
const WALLET = { alias: 'soak', recv_descriptor: `wpkh(${walletKey}/0/*)`, change_descriptor: `wpkh(${walletKey}/1/*)` };
const deriver = (descriptor) => new DescriptorDeriver(parseDescriptor(descriptor, NETWORKS.regtest));
const PAYEE = deriver(`wpkh(${accountKey('soak payee', "m/84'/1'/0'")}/0/*)`).derive(0).address;

function soakChain() {
  const receiveScripts = deriver(WALLET.recv_descriptor).deriveRange(0, PAYMENTS_PER_BLOCK).map((d) => d.scriptPubKey);
  const fundedBlocks = Math.ceil(UTXOS / PAYMENTS_PER_BLOCK);
  return buildChain(fundedBlocks + 1, (height) => {
    if (height === 0 || height > fundedBlocks) return [];
    return Array.from({ length: PAYMENTS_PER_BLOCK }, (_, i) => {
      const n = (height - 1) * PAYMENTS_PER_BLOCK + i;
      if (n >= UTXOS) return undefined;
      return syntheticTransaction(`soak pay ${n}`, [{ value: 100_000n + BigInt(n), script: receiveScripts[i] }, { value: 40_000n, script: seedScript(`payer change ${n}`) }]);
    }).filter(Boolean);
  });
}

/** The store's rows after the run: token ids, PSBTs (txid -> status) and coin reservations. */
async function readStore(query) {
  const tokens = new Set((await query('select id from tokens')).map((r) => r.id));
  const psbts = new Map((await query('select txid, status from psbts')).map((r) => [r.txid, r.status]));
  const reservations = (await query('select txid, vout, psbt_txid from psbt_reservations')).map((r) => ({ outpoint: `${r.txid}:${r.vout}`, psbtTxid: r.psbt_txid }));
  return { tokens, psbts, reservations };
}

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
  const chainNode = await startChainNode(soakChain());
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
    SERVICE_USER_REQUEST_RATE: '0', // the soak measures throughput, not the per-user limit
    SERVICE_ADMIN_PASSWORD: PASSWORD,
    SERVICE_LOG_LEVEL: 'info', // as in production: one log line per request
    SERVICE_RATE_LIMIT: '1000000',
    SERVICE_NETWORK: 'regtest',
    SERVICE_BITCOIND_URL: chainNode.url,
    SERVICE_BITCOIND_USER: chainNode.user,
    SERVICE_BITCOIND_PASSWORD: chainNode.password,
  };
  const server = spawn(process.execPath, [join(root, 'dist/cli/main.js'), 'serve'], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  const base = `http://127.0.0.1:${port}`;
  const api = `${base}/api/v1alpha`;
  const results = { statuses: {}, errors: 0, fiveXx: 0, latencies: Object.fromEntries(OPERATIONS.map((op) => [op, []])), psbtRefusals: {}, acknowledged: [], psbtsCreated: [], psbtsDeleted: new Set(), answeredPerWindow: [] };
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
    const walletPath = `${api}/wallets/${WALLET.alias}`;
    const made = await fetch(`${api}/wallets`, { method: 'POST', headers: { authorization: adminBearer, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Soak', ...WALLET, birthday: 0 }) });
    if (made.status !== 201) throw new Error(`wallet import: ${made.status} ${await made.text()}`);
    const syncStarted = performance.now();
    for (let coins = 0; coins !== UTXOS; await new Promise((r) => setTimeout(r, 200))) {
      if (performance.now() - syncStarted > 300_000) throw new Error(`the wallet has ${coins} of ${UTXOS} coins after 300 s`);
      coins = (await (await fetch(`${walletPath}?limit=0`, { headers: { authorization: adminBearer } })).json()).utxo?.length ?? 0;
    }
    const syncSeconds = (performance.now() - syncStarted) / 1000;
    // A distinct amount each time, so no two PSBTs of the run share a txid and each one's fate is known.
    let psbtsAsked = 0;
    const psbtBody = () => JSON.stringify({ recipients: [{ address: PAYEE, amount: 30_000 + psbtsAsked++, unit: 'sat' }], fee_rate: '2' });
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
          if (op === 'create_psbt') {
            response = await fetch(`${walletPath}/psbt`, { method: 'POST', headers: { authorization: adminBearer, 'content-type': 'application/json' }, body: psbtBody() });
          } else if (op === 'create_token') {
            response = await fetch(`${api}/token`, { method: 'POST', headers: { authorization: basic('admin', PASSWORD), 'content-type': 'application/json' }, body: JSON.stringify({ jwt_token_description: `c${id}-${n}`, jwt_token_life: '1 hours' }) });
          } else {
            const headers = { authorization: op === 'read_service' ? adminBearer : userBearer };
            response = await fetch(`${api}/${op === 'read_liveness' ? 'liveness' : 'service'}`, { headers });
          }
          const body = await response.json();
          results.latencies[op].push(performance.now() - t0);
          const slot = Math.floor((performance.now() - started) / (WINDOW_S * 1000));
          results.answeredPerWindow[slot] = (results.answeredPerWindow[slot] ?? 0) + 1;
          results.statuses[response.status] = (results.statuses[response.status] ?? 0) + 1;
          if (response.status >= 500) results.fiveXx++;
          if (op === 'create_token' && response.status === 201) results.acknowledged.push(body.jwt_token_id);
          if (op === 'create_psbt' && response.status !== 201) results.psbtRefusals[`${response.status} ${body.code}`] = (results.psbtRefusals[`${response.status} ${body.code}`] ?? 0) + 1;
          if (op === 'create_psbt' && response.status === 201) {
            const txid = body.result.tx.txid;
            results.psbtsCreated.push(txid);
            if (Math.random() < DELETE_SHARE) {
              const t1 = performance.now();
              const deleted = await fetch(`${walletPath}/psbt/${txid}`, { method: 'DELETE', headers: { authorization: adminBearer } });
              await deleted.arrayBuffer();
              results.latencies.delete_psbt.push(performance.now() - t1);
              results.statuses[deleted.status] = (results.statuses[deleted.status] ?? 0) + 1;
              if (deleted.status >= 500) results.fiveXx++;
              if (deleted.status === 200) results.psbtsDeleted.add(txid);
            }
          }
        } catch {
          results.errors++;
        }
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, (_, i) => client(i)));
    const seconds = (performance.now() - started) / 1000;

    // Lost writes: every acknowledged token and pending PSBT is in the store, no deleted PSBT is, and
    // no coin is held by two PSBTs or by a PSBT that is gone.
    let stored;
    if (STORE === 'sqlite') {
      const db = new Database(databaseUrl, { readonly: true });
      stored = await readStore(async (text) => db.prepare(text).all());
      db.close();
    } else {
      const c = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schema}` });
      await c.connect();
      stored = await readStore(async (text) => (await c.query(text)).rows);
      await c.end();
    }
    const pendingPsbts = results.psbtsCreated.filter((txid) => !results.psbtsDeleted.has(txid));
    const lost =
      results.acknowledged.filter((id) => !stored.tokens.has(id)).length + pendingPsbts.filter((txid) => stored.psbts.get(txid) !== 'pending').length;
    const resurrected = [...results.psbtsDeleted].filter((txid) => stored.psbts.has(txid)).length;
    const reservedOutpoints = stored.reservations.map((r) => r.outpoint);
    const reservedTwice = reservedOutpoints.length - new Set(reservedOutpoints).size;
    const orphanReservations = stored.reservations.filter((r) => stored.psbts.get(r.psbtTxid) !== 'pending').length;
    const psbtsWithoutCoins = pendingPsbts.filter((txid) => !stored.reservations.some((r) => r.psbtTxid === txid)).length;
    const storeFaults = resurrected + reservedTwice + orphanReservations + psbtsWithoutCoins;
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
          walletCoins: UTXOS,
          syncSeconds: Math.round(syncSeconds * 10) / 10,
          seconds: Math.round(seconds * 10) / 10,
          requests: all.length,
          perSecond: Math.round(all.length / seconds),
          p50Ms: percentile(all, 50),
          p99Ms: percentile(all, 99),
          statuses: results.statuses,
          fiveXx: results.fiveXx,
          transportErrors: results.errors,
          acknowledgedWrites: results.acknowledged.length + results.psbtsCreated.length + results.psbtsDeleted.size,
          psbts: { created: results.psbtsCreated.length, deleted: results.psbtsDeleted.size, pendingAtEnd: pendingPsbts.length, reservedCoins: reservedOutpoints.length, refusals: results.psbtRefusals },
          lostWrites: lost,
          storeFaults: { resurrected, reservedTwice, orphanReservations, psbtsWithoutCoins },
          // Requests/s in each full WINDOW_S window: a service that slows as PSBTs pile up shows a falling series.
          perSecondByWindow: Array.from(results.answeredPerWindow.slice(0, Math.floor(seconds / WINDOW_S)), (n) => Math.round((n ?? 0) / WINDOW_S)),
          perOperation,
        },
        null,
        2,
      ),
    );
    if (results.fiveXx > 0 || results.errors > 0 || lost > 0 || storeFaults > 0) process.exitCode = 1;
  } finally {
    await new Promise((resolve) => {
      server.once('exit', resolve);
      server.kill('SIGTERM');
    });
    await chainNode.close();
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
