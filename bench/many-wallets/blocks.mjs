// Blocks reaching many wallets: N 2-of-3 wallets written straight into a fresh PostgreSQL schema (or, with `--sqlite`,
// a SQLite file) as a first sync leaves them (at the node's tip), then one or more `wcs serve` processes on that store
// following a real regtest Bitcoin Core. Each round pays `--paid` wallets (one `sendmany`), waits until the sync has
// put the payments in the paid wallets (mempool; each paid wallet's details then read once over HTTP), mines a block,
// and times from the block until (a) every paid wallet holds its payment confirmed in that block and (b) every wallet
// stands at that block, read from the store's rows, and (c) every paid wallet's details over HTTP
// (`GET /api/v1alpha/wallets/<alias>`, the first instance, four requests at a time) show the payment in the block.
// Each block also gives the CPU seconds the instances (and Fulcrum) used until (a), (b) and (c), and the scripts stored.
//
//   npm run build && node bench/many-wallets/blocks.mjs [--wallets 1000] [--paid 100] [--blocks 5] [--instances 1]
//     [--sharing on|off] [--phases 1:off,2:on:DIR,...] [--source bitcoind|electrum|bitcoind,electrum] [--sqlite]
//     [--cpu-prof DIR] (WCS_BENCH_DATABASE_URL, default the tests' database; FULCRUM, default ../shared/bin/Fulcrum)
// `--source electrum`: the instances follow the chain through a real Fulcrum over the node (-txindex=1), which polls
// the node every 0.5 s; each block then also gives when Fulcrum first answered with it as its tip. Several sources:
// every phase runs once on each, in the order given on the first phase, reversed on the next, and so on.
// `--phases` runs several set-ups one after the other on the same wallets (instances:sharing[:build[:vN]] each), for
// comparisons in one run: every phase starts its instances, lets them take one block untimed, times its blocks and
// stops them. `build` is a folder holding another build's `dist/` (code before a change), by default this one's;
// `vN` first takes the store's schema back to version N (a build from before a migration; see SCHEMA_BACK).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import BetterSqlite3 from 'better-sqlite3';
import { DescriptorDeriver, parseDescriptor } from '../../dist/core/descriptor/index.js';
import { encodeAddress } from '../../dist/core/address.js';
import { NETWORKS } from '../../dist/core/network.js';
import { locateBitcoind, startBitcoind } from '../bitcoind-support.mjs';
import { locateFulcrum, startFulcrum, electrumRequest } from '../fulcrum-support.mjs';
import { arg, cpuSeconds, freePort } from '../support.mjs';
import { descriptorsOf, writeWallets } from './wallets.mjs';

const root = resolve(import.meta.dirname, '..', '..');
const WALLETS = Number(arg('wallets', 1000));
const PAID = Number(arg('paid', 100));
const BLOCKS = Number(arg('blocks', 5));
const INSTANCES = Number(arg('instances', 1));
const SHARING = arg('sharing', 'off');
const PROFILE_DIR = arg('cpu-prof', undefined);
const SQLITE = process.argv.includes('--sqlite');
const SOURCES = arg('source', 'bitcoind').split(',');
const PHASES = arg('phases', `${INSTANCES}:${SHARING}`).split(',').map((p) => {
  const [instances, sharing, build, schema] = p.split(':');
  return { instances: Number(instances), sharing: sharing ?? 'off', build: build ? resolve(build) : root, schemaBack: schema ? Number(schema.replace(/^v/, '')) : undefined };
});
/**
 * Schema steps a phase can take back (`...:v18`: the store as schema 18 left it, for a build of before migration 19;
 * the next phase of a newer build applies the migration again, as an upgrade does).
 */
const SCHEMA_BACK = {
  18: (postgres) => [
    ...(postgres ? ['drop index wallets_listing', 'create index wallets_listing on wallets (created_at, alias, id, revision)', 'alter table wallets reset (fillfactor)'] : []),
    'delete from schema_version where version >= 19',
  ],
};
const DATABASE_URL = process.env.WCS_BENCH_DATABASE_URL ?? 'postgres://wcs_test:wcs_test@127.0.0.1:5432/wcs_test';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const schema = `bench_blocks_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
const admin = SQLITE ? undefined : new pg.Client({ connectionString: DATABASE_URL });
await admin?.connect();
await admin?.query(`create schema "${schema}"`);
const chainDir = mkdtempSync(join(tmpdir(), 'wcs-bench-blocks-node-'));
const dataFolder = mkdtempSync(join(tmpdir(), 'wcs-bench-blocks-'));
// One store for every instance: the schema, or a SQLite file outside the instances' data folders.
const databaseUrl = SQLITE ? `sqlite:${join(dataFolder, 'service.sqlite')}` : `${DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
const node = await startBitcoind(locateBitcoind(root), chainDir, SOURCES.includes('electrum') ? ['-txindex=1'] : []);
const children = [];
let fulcrum;
try {
  await node.rpc.call('createwallet', ['miner']);
  const minerAddress = await node.rpc.call('getnewaddress', [], 'miner');
  await node.rpc.call('generatetoaddress', [110, minerAddress]);
  const tip = { height: await node.rpc.call('getblockcount'), hash: await node.rpc.call('getbestblockhash') };
  if (SOURCES.includes('electrum')) fulcrum = await startFulcrum(locateFulcrum(root), node);
  const sourceEnv = {
    bitcoind: { SERVICE_BITCOIND_URL: node.url, SERVICE_BITCOIND_COOKIE: node.cookieFile },
    electrum: { SERVICE_ELECTRUM_URL: fulcrum?.url },
  };
  const env = {
    SERVICE_DATA_FOLDER: dataFolder, SERVICE_NETWORK: 'regtest', SERVICE_API_ACTIVE: 'True', SERVICE_ADMIN_PASSWORD: 'bench-admin-password',
    SERVICE_LOG_LEVEL: 'warn', SERVICE_SYNC_INTERVAL: '5', SERVICE_HOST: '127.0.0.1',
    SERVICE_MAX_WALLETS_PER_USER: '100000', SERVICE_DATABASE_URL: databaseUrl, SERVICE_JWT_KEY: 'bench-blocks-signing-key-0123456789abcdef',
  };
  const written = performance.now();
  const ids = await writeWallets({ ...env, ...sourceEnv[SOURCES[0]] }, tip, WALLETS);
  console.log(`${WALLETS} 2-of-3 wallets written in ${((performance.now() - written) / 1000).toFixed(1)} s`);
  const db = await openStore(databaseUrl);
  let round = 0;
  try {
    for (const [p, phase, source] of PHASES.flatMap((phase, p) => (p % 2 === 0 ? SOURCES : [...SOURCES].reverse()).map((source) => [p, phase, source]))) {
      if (phase.schemaBack !== undefined) await takeSchemaBack(databaseUrl, phase.schemaBack);
      const phaseEnv = { ...env, ...sourceEnv[source], ...(phase.sharing === 'on' ? { SERVICE_SYNC_SHARING: 'on' } : {}) };
      // Data folders of the phase's own: `wcs serve` records its settings there, and the next phase's must not inherit them.
      children.push(...(await Promise.all(Array.from({ length: phase.instances }, (_, i) => serve(phaseEnv, `${p}-${source}-${i}`, phase.build)))));
      const electrum = source === 'electrum' ? fulcrum : undefined;
      const cpuNow = () => [children.reduce((sum, child) => sum + cpuSeconds(child.pid), 0), electrum ? cpuSeconds(electrum.pid) : 0];
      const api = await apiOf(children[0]);
      if (phase.sharing === 'on') {
        // Shared out first: every instance holding its share of the leases.
        const share = Math.ceil(WALLETS / phase.instances);
        await until(async () => {
          const rows = (await db.query('select instance_id, count(*)::int as n from wallet_follow_leases group by instance_id')).rows;
          return rows.length === phase.instances && rows.every((r) => r.n <= share) && rows.reduce((sum, r) => sum + r.n, 0) === WALLETS;
        });
      }
      // One block (not timed) every instance took: every wallet loaded.
      const [warmHash] = await node.rpc.call('generatetoaddress', [1, minerAddress]);
      await until(async () => (await count(db, 'select count(*)::int as n from wallets where tip_hash = $1', [warmHash])) === WALLETS);
      console.log(`phase: ${source}, ${phase.instances} instance(s), sync_sharing ${phase.sharing}${phase.build === root ? '' : `, build ${phase.build}`}${phase.schemaBack === undefined ? '' : `, schema taken back to ${phase.schemaBack}`}`);
      const results = [];
      for (let block = 0; block < BLOCKS; block++, round++) {
        // Each round pays other wallets, at a receive index of its own (within the first 20 each wallet watches).
        const paid = Array.from({ length: PAID }, (_, k) => (round * PAID + k) % WALLETS);
        const amounts = Object.fromEntries(paid.map((i) => [addressOf(i, round % 20), 0.001]));
        const txid = await node.rpc.call('sendmany', ['', amounts], 'miner');
        const paidIds = paid.map((i) => ids[i]);
        const seenAt = performance.now();
        await until(async () => (await count(db, 'select count(distinct wallet_id)::int as n from wallet_transactions where txid = $1 and wallet_id = any($2)', [txid, paidIds])) === paid.length);
        // Read once over HTTP as a client watching its payment would: the API's state of each paid wallet is then
        // loaded, and the timed reads after the block follow the rows it changed (ADR 0009).
        await shownOverHttp(api, paid, (t) => t.txid === txid);
        const mempool = (performance.now() - seenAt) / 1000;
        const height = (await node.rpc.call('getblockcount')) + 1;
        const cpuBefore = cpuNow();
        const [hash] = await node.rpc.call('generatetoaddress', [1, minerAddress]);
        const mined = performance.now();
        const electrumAt = electrum && tipAnswered(electrum, height);
        electrumAt?.catch(() => {}); // awaited below; a failure must not end the bench before its clean-up
        let paidAt;
        const overHttp = shownOverHttp(api, paid, (t) => t.txid === txid && t.blockhash === hash).then(() => performance.now());
        await until(async () => {
          if (paidAt === undefined && (await count(db, 'select count(*) as n from wallet_transactions where txid = $1 and block_hash = $2', [txid, hash])) === paid.length) paidAt = performance.now();
          return paidAt !== undefined && (await count(db, 'select count(*) as n from wallets where tip_hash = $1', [hash])) === WALLETS;
        });
        const all = (performance.now() - mined) / 1000;
        const paidSeconds = (paidAt - mined) / 1000;
        const httpSeconds = ((await overHttp) - mined) / 1000;
        const [cpuService, cpuFulcrum] = cpuNow().map((seconds, i) => seconds - cpuBefore[i]);
        const fulcrumSeconds = electrum ? ((await electrumAt) - mined) / 1000 : undefined;
        const scripts = await count(db, 'select count(*) as n from wallet_addresses', []);
        // The same reads once more, nothing left to change: what reading the paid wallets takes by itself.
        const sweepAt = performance.now();
        await shownOverHttp(api, paid, (t) => t.txid === txid && t.blockhash === hash);
        const sweep = (performance.now() - sweepAt) / 1000;
        results.push({ paidSeconds, all, httpSeconds, sweep, cpuService, cpuFulcrum, fulcrumSeconds });
        const cpu = `CPU ${cpuService.toFixed(2)} s service${electrum ? `, ${cpuFulcrum.toFixed(2)} s Fulcrum (its tip the block after ${fulcrumSeconds.toFixed(2)} s)` : ''}`;
        console.log(`block ${block + 1}: payments seen in the mempool after ${mempool.toFixed(2)} s; ${PAID} paid wallets confirmed after ${paidSeconds.toFixed(2)} s (over HTTP ${httpSeconds.toFixed(2)} s; reading them again ${sweep.toFixed(2)} s), all ${WALLETS} wallets at the block after ${all.toFixed(2)} s; ${cpu}; ${scripts} scripts stored (load ${loadavg()[0].toFixed(1)})`);
      }
      const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
      const range = (list) => `${Math.min(...list).toFixed(2)}-${Math.max(...list).toFixed(2)}`;
      const summary = (key) => `${median(results.map((r) => r[key])).toFixed(2)} s (${range(results.map((r) => r[key]))})`;
      console.log(`median (range) over ${BLOCKS} blocks, ${source}: paid wallets ${summary('paidSeconds')}, over HTTP ${summary('httpSeconds')} (reading them again ${summary('sweep')}), all wallets ${summary('all')}; CPU service ${summary('cpuService')}${electrum ? `, Fulcrum ${summary('cpuFulcrum')}, Fulcrum's tip ${summary('fulcrumSeconds')}` : ''} (load ${loadavg().map((l) => l.toFixed(1)).join(' ')})`);
      await stopAll();
    }
  } finally {
    await db.end();
  }
} finally {
  await stopAll();
  await fulcrum?.stop();
  await node.stop();
  await admin?.query(`drop schema "${schema}" cascade`);
  await admin?.end();
  rmSync(chainDir, { recursive: true, force: true });
  rmSync(dataFolder, { recursive: true, force: true });
}

async function stopAll() {
  for (const child of children.splice(0)) {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
}

/** The store's rows, read by the bench itself: `query(text with $1.., values)` and `end()` on PostgreSQL or SQLite. */
async function openStore(url) {
  if (!SQLITE) {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    return client;
  }
  const file = new BetterSqlite3(url.slice('sqlite:'.length), { readonly: true });
  file.pragma('busy_timeout = 5000');
  return {
    // `$n` placeholders in order; an array value is spread into a list (`= any($2)` becomes `in (...)`).
    query: async (text, values) => {
      const flat = [];
      const sql = text.replace(/= any\(\$(\d+)\)|\$(\d+)/g, (_, list, one) => {
        if (list) {
          const items = values[Number(list) - 1];
          flat.push(...items);
          return `in (${items.map(() => '?').join(',')})`;
        }
        flat.push(values[Number(one) - 1]);
        return '?';
      }).replaceAll('::int', '');
      return { rows: file.prepare(sql).all(...flat) };
    },
    end: async () => file.close(),
  };
}

/** Takes the store's schema back to `version` (SCHEMA_BACK), with no instance running. */
async function takeSchemaBack(url, version) {
  const statements = SCHEMA_BACK[version](!SQLITE);
  if (SQLITE) {
    const file = new BetterSqlite3(url.slice('sqlite:'.length));
    try {
      file.transaction(() => statements.forEach((statement) => file.exec(statement)))();
    } finally {
      file.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('begin');
    for (const statement of statements) await client.query(statement);
    await client.query('commit');
  } finally {
    await client.end();
  }
}

async function count(db, text, values) {
  return Number((await db.query(text, values)).rows[0].n);
}

/** The REST API of an instance, with a token of the admin's. */
async function apiOf(child) {
  const api = `http://127.0.0.1:${child.port}/api/v1alpha`;
  const basic = `Basic ${Buffer.from('admin:bench-admin-password').toString('base64')}`;
  const response = await fetch(`${api}/token`, { method: 'POST', headers: { authorization: basic, 'content-type': 'application/json' }, body: JSON.stringify({ jwt_token_description: `bench blocks ${randomUUID()}`, jwt_token_life: '1 days' }) });
  if (!response.ok) throw new Error(`token: ${response.status} ${await response.text()}`);
  return { base: api, auth: { authorization: `Bearer ${(await response.json()).jwt_token}` } };
}

/** Resolves once every paid wallet's details list a transaction that `shows` (four requests at a time, each wallet asked until it does). */
async function shownOverHttp(api, paid, shows) {
  const waiting = [...paid];
  const worker = async () => {
    for (let i = waiting.shift(); i !== undefined; i = waiting.shift()) {
      for (;;) {
        const response = await fetch(`${api.base}/wallets/many-${i}?limit=5&utxo_limit=0`, { headers: api.auth });
        if (!response.ok) throw new Error(`wallet many-${i}: ${response.status}`);
        if ((await response.json()).txlist.some(shows)) break;
        await sleep(20);
      }
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
}

/** The moment Fulcrum first answers with a tip at `height` (polled every 20 ms, a connection each). */
async function tipAnswered(server, height) {
  await until(async () => (await electrumRequest(server.port, 'blockchain.headers.subscribe')).height >= height);
  return performance.now();
}

async function until(check, timeoutMs = 600_000) {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > timeoutMs) throw new Error('timed out');
    await sleep(20);
  }
}

function addressOf(i, index) {
  const [receive] = descriptorsOf(i);
  const [output] = new DescriptorDeriver(parseDescriptor(receive, NETWORKS.regtest)).deriveRange(index, 1);
  return encodeAddress(output.scriptPubKey, NETWORKS.regtest);
}

/** Starts `wcs serve` (data folder of its own, free port) and waits until it is ready (its wallets loaded). */
async function serve(env, i, build) {
  const port = await freePort();
  const profile = PROFILE_DIR ? ['--cpu-prof', '--cpu-prof-dir', resolve(PROFILE_DIR)] : [];
  const child = spawn(process.execPath, [...profile, join(build, 'dist', 'cli', 'main.js'), 'serve'], {
    cwd: build, stdio: ['ignore', 'ignore', 'inherit'], env: { PATH: process.env.PATH, ...env, SERVICE_DATA_FOLDER: join(dataFolder, `instance-${i}`), SERVICE_PORT: String(port) },
  });
  const started = performance.now();
  for (;;) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz/ready`)).ok) break;
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null) throw new Error(`instance ${i} exited (${child.exitCode})`);
    await sleep(100);
  }
  console.log(`instance ${i} ready after ${((performance.now() - started) / 1000).toFixed(1)} s`);
  child.port = port;
  return child;
}
