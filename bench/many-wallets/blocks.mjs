// Blocks reaching many wallets on PostgreSQL: N 2-of-3 wallets written straight into a fresh PostgreSQL schema as a
// first sync leaves them (at the node's tip), then one or more `wcs serve` processes on that schema following a real
// regtest Bitcoin Core. Each round pays `--paid` wallets (one `sendmany`), waits until the sync has put the payments
// in the paid wallets (mempool), mines a block, and times from the block until (a) every paid wallet holds its
// payment confirmed in that block and (b) every wallet stands at that block, read from the store's rows.
//
//   npm run build && node bench/many-wallets/blocks.mjs [--wallets 1000] [--paid 100] [--blocks 5] [--instances 1]
//     [--sharing on|off] [--phases 1:off,2:on,...] [--cpu-prof DIR] (WCS_BENCH_DATABASE_URL, default the tests' database)
// `--phases` runs several set-ups one after the other on the same wallets (instances:sharing each), for comparisons
// in one run: every phase starts its instances, lets them take one block untimed, times its blocks and stops them.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { DescriptorDeriver, parseDescriptor } from '../../dist/core/descriptor/index.js';
import { encodeAddress } from '../../dist/core/address.js';
import { NETWORKS } from '../../dist/core/network.js';
import { locateBitcoind, startBitcoind } from '../bitcoind-support.mjs';
import { freePort } from '../support.mjs';
import { descriptorsOf, writeWallets } from './wallets.mjs';

const root = resolve(import.meta.dirname, '..', '..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
};
const WALLETS = Number(arg('wallets', 1000));
const PAID = Number(arg('paid', 100));
const BLOCKS = Number(arg('blocks', 5));
const INSTANCES = Number(arg('instances', 1));
const SHARING = arg('sharing', 'off');
const PROFILE_DIR = arg('cpu-prof', undefined);
const PHASES = arg('phases', `${INSTANCES}:${SHARING}`).split(',').map((p) => {
  const [instances, sharing] = p.split(':');
  return { instances: Number(instances), sharing: sharing ?? 'off' };
});
const DATABASE_URL = process.env.WCS_BENCH_DATABASE_URL ?? 'postgres://wcs_test:wcs_test@127.0.0.1:5432/wcs_test';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const schema = `bench_blocks_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
const admin = new pg.Client({ connectionString: DATABASE_URL });
await admin.connect();
await admin.query(`create schema "${schema}"`);
const databaseUrl = `${DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
const chainDir = mkdtempSync(join(tmpdir(), 'wcs-bench-blocks-node-'));
const dataFolder = mkdtempSync(join(tmpdir(), 'wcs-bench-blocks-'));
const node = await startBitcoind(locateBitcoind(root), chainDir);
const children = [];
try {
  await node.rpc.call('createwallet', ['miner']);
  const minerAddress = await node.rpc.call('getnewaddress', [], 'miner');
  await node.rpc.call('generatetoaddress', [110, minerAddress]);
  const tip = { height: await node.rpc.call('getblockcount'), hash: await node.rpc.call('getbestblockhash') };
  const env = {
    SERVICE_DATA_FOLDER: dataFolder, SERVICE_NETWORK: 'regtest', SERVICE_API_ACTIVE: 'True', SERVICE_ADMIN_PASSWORD: 'bench-admin-password',
    SERVICE_LOG_LEVEL: 'warn', SERVICE_BITCOIND_URL: node.url, SERVICE_BITCOIND_COOKIE: node.cookieFile, SERVICE_SYNC_INTERVAL: '5', SERVICE_HOST: '127.0.0.1',
    SERVICE_MAX_WALLETS_PER_USER: '100000', SERVICE_DATABASE_URL: databaseUrl, SERVICE_JWT_KEY: 'bench-blocks-signing-key-0123456789abcdef',
  };
  const written = performance.now();
  const ids = await writeWallets(env, tip, WALLETS);
  console.log(`${WALLETS} 2-of-3 wallets written in ${((performance.now() - written) / 1000).toFixed(1)} s`);
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();
  let round = 0;
  try {
    for (const phase of PHASES) {
      const phaseEnv = { ...env, ...(phase.sharing === 'on' ? { SERVICE_SYNC_SHARING: 'on' } : {}) };
      // Data folders of the phase's own: `wcs serve` records its settings there, and the next phase's must not inherit them.
      children.push(...(await Promise.all(Array.from({ length: phase.instances }, (_, i) => serve(phaseEnv, `${PHASES.indexOf(phase)}-${i}`)))));
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
      console.log(`phase: ${phase.instances} instance(s), sync_sharing ${phase.sharing}`);
      const results = [];
      for (let block = 0; block < BLOCKS; block++, round++) {
        // Each round pays other wallets, at a receive index of its own (within the first 20 each wallet watches).
        const paid = Array.from({ length: PAID }, (_, k) => (round * PAID + k) % WALLETS);
        const amounts = Object.fromEntries(paid.map((i) => [addressOf(i, round % 20), 0.001]));
        const txid = await node.rpc.call('sendmany', ['', amounts], 'miner');
        const paidIds = paid.map((i) => ids[i]);
        const seenAt = performance.now();
        await until(async () => (await count(db, 'select count(distinct wallet_id)::int as n from wallet_transactions where txid = $1 and wallet_id = any($2)', [txid, paidIds])) === paid.length);
        const mempool = (performance.now() - seenAt) / 1000;
        const [hash] = await node.rpc.call('generatetoaddress', [1, minerAddress]);
        const mined = performance.now();
        let paidAt;
        await until(async () => {
          if (paidAt === undefined && (await count(db, 'select count(*)::int as n from wallet_transactions where txid = $1 and block_hash = $2', [txid, hash])) === paid.length) paidAt = performance.now();
          return paidAt !== undefined && (await count(db, 'select count(*)::int as n from wallets where tip_hash = $1', [hash])) === WALLETS;
        });
        const all = (performance.now() - mined) / 1000;
        const paidSeconds = (paidAt - mined) / 1000;
        results.push({ paidSeconds, all });
        console.log(`block ${block + 1}: payments seen in the mempool after ${mempool.toFixed(2)} s; ${PAID} paid wallets confirmed after ${paidSeconds.toFixed(2)} s, all ${WALLETS} wallets at the block after ${all.toFixed(2)} s`);
      }
      const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
      console.log(`median over ${BLOCKS} blocks: paid wallets ${median(results.map((r) => r.paidSeconds)).toFixed(2)} s, all wallets ${median(results.map((r) => r.all)).toFixed(2)} s`);
      await stopAll();
    }
  } finally {
    await db.end();
  }
} finally {
  await stopAll();
  await node.stop();
  await admin.query(`drop schema "${schema}" cascade`);
  await admin.end();
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

async function count(db, text, values) {
  return (await db.query(text, values)).rows[0].n;
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
async function serve(env, i) {
  const port = await freePort();
  const profile = PROFILE_DIR ? ['--cpu-prof', '--cpu-prof-dir', resolve(PROFILE_DIR)] : [];
  const child = spawn(process.execPath, [...profile, join(root, 'dist', 'cli', 'main.js'), 'serve'], {
    cwd: root, stdio: ['ignore', 'ignore', 'inherit'], env: { PATH: process.env.PATH, ...env, SERVICE_DATA_FOLDER: join(dataFolder, `instance-${i}`), SERVICE_PORT: String(port) },
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
  return child;
}
