// Many wallets created the way users create them: `wcs serve` on a real regtest Bitcoin Core, N 2-of-3
// `wsh(sortedmulti)` wallets (gap limit 20, each its own three keys) created over the REST API four requests at a
// time; then the server's resident memory, the first page of `GET /wallets`, a restart (until the port answers,
// until ready), and a block reaching 100 paid wallets, read over HTTP.
//
//   npm run build && node bench/many-wallets/api.mjs [--wallets 3000] [--parallel 4] [--paid 100] [--list-calls 30]
//     [--server-log FILE] [--dist DIR] (the build the server runs; default dist) [--heap-snapshots DIR] (at 1,000 created, and at the end) [--idle-wait S] (seconds idle before the last snapshot) [--cpu-prof DIR] (the first server's CPU profile, written when it stops after the creations)
//     [--postgres] (a schema of its own at WCS_BENCH_DATABASE_URL, default the tests' database, dropped after)
//     [--restart-at-once] (restart right after the last creation, the sync still behind: the wallets it has not
//     reached yet load after readiness; then the time until every wallet is at the tip)
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { benchNode, pct, serve } from './served.mjs';
import { descriptorsOf } from './wallets.mjs';
import { arg } from '../support.mjs';

const root = resolve(import.meta.dirname, '..', '..');
const WALLETS = Number(arg('wallets', 3000));
const PARALLEL = Number(arg('parallel', 4));
const PAID = Math.min(Number(arg('paid', 100)), WALLETS);
const LIST_CALLS = Number(arg('list-calls', 30));
const PROFILE_DIR = arg('cpu-prof', undefined) && resolve(arg('cpu-prof'));
/** The build the server runs (another build, e.g. a copy of `dist` before a change, to compare). */
const DIST = resolve(arg('dist', join(root, 'dist')));
/** The servers' log (JSON lines, warnings and errors only) appended to FILE; otherwise dropped. */
const SERVER_LOG = arg('server-log', undefined) && resolve(arg('server-log'));
/** Heap snapshots of the first server into DIR: after 1,000 wallets created and once all are at the tip (heap-diff.mjs). */
const SNAPSHOT_DIR = arg('heap-snapshots', undefined) && resolve(arg('heap-snapshots'));
/** Seconds waited once all are at the tip before the last snapshot: wallets drop their parsed descriptors after 30 s idle. */
const IDLE_WAIT_S = Number(arg('idle-wait', 0));
const RESTART_AT_ONCE = process.argv.includes('--restart-at-once');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');

const POSTGRES = process.argv.includes('--postgres');
const world = await benchNode(POSTGRES, 'api');
let server;
try {
  const { node, minerAddress, env } = world;
  console.log(`${WALLETS} wallets, ${PARALLEL} creations at a time, ${POSTGRES ? 'PostgreSQL' : 'SQLite'}; load average ${load()}`);

  server = await serve(env, { dist: DIST, serverLog: SERVER_LOG, profileDir: PROFILE_DIR, snapshotDir: SNAPSHOT_DIR });
  await server.live;
  await server.ready;
  const api = await server.client();

  // Creation, PARALLEL requests at a time; figures per thousand created, so that growth with the wallets shows.
  const times = new Array(WALLETS);
  let next = 0;
  const started = performance.now();
  const cpuAtStart = cpuMs(server.pid);
  let reported = 0;
  const snapshots = [];
  const report = () => {
    while (reported < WALLETS) {
      const end = Math.min(reported + 1000, WALLETS);
      const slice = times.slice(reported, end);
      if (slice.includes(undefined)) return; // some still in flight
      console.log(`  created ${reported + 1}-${end}: p50 ${pct(slice, 50).toFixed(1)} ms, p99 ${pct(slice, 99).toFixed(1)} ms, max ${Math.max(...slice).toFixed(1)} ms; RSS ${rssMb(server.pid)} MB; load ${load()}`);
      reported = end;
      if (SNAPSHOT_DIR && end === 1000) snapshots.push(heapSnapshot(server.pid));
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, async () => {
    for (let i = next++; i < WALLETS; i = next++) {
      const [recv, change] = descriptorsOf(i);
      times[i] = await api.timed('POST', '/wallets', { name: `Wallet ${i}`, alias: `w${i}`, recv_descriptor: recv, change_descriptor: change, gap_limit: 20 }, 201);
      if (i % 100 === 99) report();
    }
  }));
  report();
  const cpuCreated = cpuMs(server.pid);
  console.log(`created ${WALLETS} in ${((performance.now() - started) / 1000).toFixed(1)} s: p50 ${pct(times, 50).toFixed(1)} ms, p99 ${pct(times, 99).toFixed(1)} ms; RSS ${rssMb(server.pid)} MB right after; load ${load()}`);
  console.log(`  server CPU while creating, per creation: main thread ${perWallet(cpuCreated.main - cpuAtStart.main)} ms, whole process ${perWallet(cpuCreated.all - cpuAtStart.all)} ms`);
  if (!RESTART_AT_ONCE) {
    await untilSynced(api);
    const cpuSynced = cpuMs(server.pid);
    console.log(`  every wallet at the tip ${((performance.now() - started) / 1000).toFixed(1)} s after the first creation; RSS ${rssMb(server.pid)} MB; server CPU from the first creation to then, per wallet: main thread ${perWallet(cpuSynced.main - cpuAtStart.main)} ms, whole process ${perWallet(cpuSynced.all - cpuAtStart.all)} ms`);
  }
  if (SNAPSHOT_DIR) {
    await Promise.all(snapshots);
    if (IDLE_WAIT_S > 0) {
      await sleep(IDLE_WAIT_S * 1000);
      console.log(`  waited ${IDLE_WAIT_S} s idle; RSS ${rssMb(server.pid)} MB`);
    }
    await heapSnapshot(server.pid);
    console.log(`  heap snapshots in ${SNAPSHOT_DIR}; RSS ${rssMb(server.pid)} MB`);
  }
  await listPages(api);
  await server.stop();

  // Restart: the port, readiness, memory.
  server = await serve(env, { dist: DIST, serverLog: SERVER_LOG, profileDir: PROFILE_DIR });
  const spawned = server.spawned;
  const live = await server.live;
  const ready = await server.ready;
  console.log(`restart: port answered ${((live - spawned) / 1000).toFixed(2)} s after spawn, /healthz/ready ${((ready - spawned) / 1000).toFixed(2)} s; RSS ${rssMb(server.pid)} MB when ready; load ${load()}`);
  const api2 = await server.client();
  if (RESTART_AT_ONCE) {
    await untilSynced(api2);
    console.log(`  every wallet at the tip ${((performance.now() - spawned) / 1000).toFixed(1)} s after the restart's spawn; RSS ${rssMb(server.pid)} MB; load ${load()}`);
  }
  await listPages(api2);

  // A block reaching the paid wallets: one sendmany to a fresh receive address of each, seen unconfirmed, then mined.
  const paid = Array.from({ length: PAID }, (_, k) => `w${Math.floor((k * WALLETS) / PAID)}`);
  // PARALLEL at a time: a user's requests beyond a few in flight wait in a queue of their own, and past it get 429.
  const addresses = [];
  for (let i = 0; i < paid.length; i += PARALLEL) {
    addresses.push(...(await Promise.all(paid.slice(i, i + PARALLEL).map(async (alias) => (await api2.json('POST', `/wallets/${alias}/addresses/next`)).address))));
  }
  const amounts = Object.fromEntries(addresses.map((a) => [a, 0.001]));
  const sent = performance.now();
  await node.rpc.call('sendmany', ['', amounts], 'miner');
  await untilAll(api2, paid, (b) => b.total_sat === 100_000);
  console.log(`  ${PAID} payments shown unconfirmed ${((performance.now() - sent) / 1000).toFixed(2)} s after the sendmany`);
  const mined = performance.now();
  await node.rpc.call('generatetoaddress', [1, minerAddress]);
  await untilAll(api2, paid, (b) => b.confirmed_sat === 100_000);
  console.log(`  the block shown confirmed in all ${PAID} paid wallets ${((performance.now() - mined) / 1000).toFixed(2)} s after it was mined; load ${load()}`);
} finally {
  await server?.stop();
  await world.dispose();
}



/** `GET /wallets?limit=50` LIST_CALLS times: the first page's p50 and max, and one later page's. */
async function listPages(api) {
  const first = [];
  for (let i = 0; i < LIST_CALLS; i++) first.push(await api.timed('GET', '/wallets?limit=50'));
  const last = await api.timed('GET', `/wallets?limit=50&offset=${Math.max(0, WALLETS - 50)}`);
  console.log(`  GET /wallets?limit=50 first page (${LIST_CALLS} calls): p50 ${pct(first, 50).toFixed(1)} ms, max ${Math.max(...first).toFixed(1)} ms; last page ${last.toFixed(1)} ms; load ${load()}`);
}

/** Until every created wallet is at the node's tip (its `scan` null), read through the list's details of a sample. */
async function untilSynced(api) {
  const sample = [...new Set([0, Math.floor(WALLETS / 2), WALLETS - 1])].map((i) => `w${i}`);
  for (;;) {
    const details = await Promise.all(sample.map((alias) => api.json('GET', `/wallets/${alias}`)));
    if (details.every((d) => d.scan === null)) return;
    await sleep(200);
  }
}

/** Polls each wallet's details (PARALLEL at a time) until its balance passes `ok`. */
async function untilAll(api, aliases, ok) {
  const waiting = new Set(aliases);
  for (;;) {
    const list = [...waiting];
    for (let i = 0; i < list.length; i += PARALLEL) {
      await Promise.all(list.slice(i, i + PARALLEL).map(async (alias) => {
        if (ok((await api.json('GET', `/wallets/${alias}`)).balance)) waiting.delete(alias);
      }));
    }
    if (waiting.size === 0) return;
    await sleep(20);
  }
}


/** Asks the server for a heap snapshot; resolves once the file is complete (its size stops growing). */
async function heapSnapshot(pid) {
  const { readdirSync, statSync } = await import('node:fs');
  const files = () => readdirSync(SNAPSHOT_DIR).filter((f) => f.endsWith('.heapsnapshot'));
  const before = files().length;
  process.kill(pid, 'SIGUSR2');
  let size = -1;
  for (;;) {
    await sleep(1000);
    const list = files();
    if (list.length === before) continue;
    const now = statSync(join(SNAPSHOT_DIR, list.sort().at(-1))).size;
    if (now === size && now > 0) return;
    size = now;
  }
}

/** CPU time (user + system, ms) of the process's main thread and of the whole process (every thread), from /proc. */
function cpuMs(pid) {
  const ticks = (file) => {
    const fields = readFileSync(file, 'utf8').split(') ')[1].split(' ');
    return Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of stat)
  };
  try {
    return { main: ticks(`/proc/${pid}/task/${pid}/stat`) * 10, all: ticks(`/proc/${pid}/stat`) * 10 };
  } catch {
    return { main: NaN, all: NaN };
  }
}

function perWallet(ms) {
  return (ms / WALLETS).toFixed(2);
}

function rssMb(pid) {
  try {
    return Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024);
  } catch {
    return NaN;
  }
}


