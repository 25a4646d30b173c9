// One user's block while another user creates thousands of wallets, seen from outside: `wcs serve` on a real
// regtest Bitcoin Core; user `payee` creates K 2-of-3 wallets and waits until every one is at the node's tip; then
// `admin` creates N more over the REST API, four requests at a time; once a third of them are created, one
// `sendmany` pays P of payee's wallets and a block is mined, and, while the creations go on, the bench times over
// HTTP (each paid wallet's `txlist`, read as payee) until every paid wallet lists the payment unconfirmed (from the
// `sendmany`) and confirmed (from the mining). Then the creations' p50/p99 and the time from the last creation
// until every wallet is at the tip. Prints a line per phase and one JSON line of every figure, with the load average.
//
//   npm run build && node bench/many-wallets/block-during-creations.mjs [--followed 100] [--wallets 3000] [--paid 5]
//     [--parallel 4] [--dist DIR] (the build the server runs; default dist) [--label TEXT] (copied into the JSON line)
//     [--server-log FILE] [--postgres] (a schema of its own at WCS_BENCH_DATABASE_URL, default the tests' database, dropped after)
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { benchNode, pct, serve } from './served.mjs';
import { descriptorsOf } from './wallets.mjs';
import { arg } from '../support.mjs';

const root = resolve(import.meta.dirname, '..', '..');
const FOLLOWED = Number(arg('followed', 100));
const CREATED = Number(arg('wallets', 3000));
const PAID = Math.min(Number(arg('paid', 5)), FOLLOWED);
const PARALLEL = Number(arg('parallel', 4));
const DIST = resolve(arg('dist', join(root, 'dist')));
const LABEL = arg('label', DIST);
const SERVER_LOG = arg('server-log', undefined) && resolve(arg('server-log'));
const POSTGRES = process.argv.includes('--postgres');
const PAYEE_PASSWORD = 'bench-payee-password';
const PAYMENT_SAT = 100_000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');
const seconds = (ms) => Number((ms / 1000).toFixed(2));

const world = await benchNode(POSTGRES, 'bdc');
let server;
try {
  const { node, minerAddress, env } = world;
  const figures = { label: LABEL, store: POSTGRES ? 'postgres' : 'sqlite', followed: FOLLOWED, created: CREATED, paid: PAID, parallel: PARALLEL, load_start: load() };
  console.log(`${LABEL}: ${FOLLOWED} followed wallets, ${CREATED} created ${PARALLEL} at a time, ${PAID} paid, ${figures.store}; load average ${load()}`);

  server = await serve(env, { dist: DIST, serverLog: SERVER_LOG });
  await server.ready;
  await cli(env, ['user', 'add', 'payee'], `${PAYEE_PASSWORD}\n`);
  const admin = await server.client();
  const payee = await server.client('payee', PAYEE_PASSWORD);

  // The followed wallets: payee's, all at the tip before anything else happens.
  const followed = Array.from({ length: FOLLOWED }, (_, i) => `p${i}`);
  await inParallel(followed, (alias, i) => createWallet(payee, alias, i));
  await untilAtTip(payee, followed);
  const paid = Array.from({ length: PAID }, (_, k) => followed[Math.floor((k * FOLLOWED) / PAID)]);
  const addresses = await inParallel(paid, async (alias) => (await payee.json('POST', `/wallets/${alias}/addresses/next`)).address);
  console.log(`  ${FOLLOWED} followed wallets at the tip; load ${load()}`);

  // Admin's creations (keys of their own: descriptors after the followed ones'), and, at a third, the payment.
  const created = Array.from({ length: CREATED }, (_, i) => `c${i}`);
  const times = new Array(CREATED);
  let done = 0;
  let startPayment;
  const paymentStarts = new Promise((r) => (startPayment = r));
  const creationsStarted = performance.now();
  const creating = inParallel(created, async (alias, i) => {
    times[i] = await createWallet(admin, alias, FOLLOWED + i);
    if (++done === Math.ceil(CREATED / 3)) startPayment();
  }).then(() => performance.now());

  await paymentStarts;
  figures.created_at_sendmany = done;
  figures.load_at_sendmany = load();
  const sent = performance.now();
  const txid = await node.rpc.call('sendmany', ['', Object.fromEntries(addresses.map((a) => [a, PAYMENT_SAT / 1e8]))], 'miner');
  await untilListed(payee, paid, txid, (entry) => entry.confirmations === 0);
  figures.unconfirmed_s = seconds(performance.now() - sent);
  figures.created_at_unconfirmed = done;
  const mined = performance.now();
  await node.rpc.call('generatetoaddress', [1, minerAddress]);
  await untilListed(payee, paid, txid, (entry) => entry.confirmations >= 1);
  figures.confirmed_s = seconds(performance.now() - mined);
  figures.created_at_confirmed = done;
  figures.load_at_confirmed = load();
  console.log(`  ${PAID} paid wallets list the payment unconfirmed ${figures.unconfirmed_s} s after the sendmany (${figures.created_at_sendmany} created then), confirmed ${figures.confirmed_s} s after the mining (${figures.created_at_confirmed} created then); load ${load()}`);

  const lastCreated = await creating;
  figures.creation_s = seconds(lastCreated - creationsStarted);
  figures.creation_p50_ms = Number(pct(times, 50).toFixed(1));
  figures.creation_p99_ms = Number(pct(times, 99).toFixed(1));
  await untilAtTip(admin, atTipSample(created));
  figures.at_tip_after_last_creation_s = seconds(performance.now() - lastCreated);
  figures.load_end = load();
  console.log(`  ${CREATED} created in ${figures.creation_s} s: p50 ${figures.creation_p50_ms} ms, p99 ${figures.creation_p99_ms} ms; every wallet at the tip ${figures.at_tip_after_last_creation_s} s after the last creation; load ${load()}`);
  if (figures.created_at_confirmed >= CREATED) console.log('  note: the creations had ended before the block was shown in every paid wallet');
  console.log(JSON.stringify(figures));
} finally {
  await server?.stop();
  await world.dispose();
}

/** Wallet `index`'s 2-of-3 (keys of its own) created over the API; resolves to the request's milliseconds. */
function createWallet(api, alias, index) {
  const [recv, change] = descriptorsOf(index);
  return api.timed('POST', '/wallets', { name: `Wallet ${alias}`, alias, recv_descriptor: recv, change_descriptor: change, gap_limit: 20 }, 201);
}

/** `work` over `items`, PARALLEL at a time (a user's requests past a few in flight queue, then get 429); results in order. */
async function inParallel(items, work) {
  const results = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: PARALLEL }, async () => {
    for (let i = next++; i < items.length; i = next++) results[i] = await work(items[i], i);
  }));
  return results;
}

/** The wallets whose details tell that all are at the tip: the sync loads new wallets in creation order. */
function atTipSample(aliases) {
  const n = aliases.length;
  return [...new Set([0, Math.floor(n / 3), Math.floor(n / 2), Math.floor((2 * n) / 3), n - 2, n - 1].filter((i) => i >= 0))].map((i) => aliases[i]);
}

/** Until each wallet's details say it is at the node's tip (`scan` null: a new wallet's is set until the sync reaches the tip). */
async function untilAtTip(api, aliases) {
  let waiting = aliases;
  while (waiting.length > 0) {
    const scans = await inParallel(waiting, async (alias) => (await api.json('GET', `/wallets/${alias}?limit=0&utxo_limit=0`)).scan);
    waiting = waiting.filter((_, i) => scans[i] !== null);
    if (waiting.length > 0) await sleep(100);
  }
}

/** Polls each wallet's newest transactions until `txid` is listed there and passes `ok`. */
async function untilListed(api, aliases, txid, ok) {
  let waiting = aliases;
  while (waiting.length > 0) {
    const shown = await inParallel(waiting, async (alias) => {
      const entry = (await api.json('GET', `/wallets/${alias}?limit=5&utxo_limit=0`)).txlist.find((t) => t.txid === txid);
      return entry !== undefined && entry.amount_sat === PAYMENT_SAT && ok(entry);
    });
    waiting = waiting.filter((_, i) => !shown[i]);
    if (waiting.length > 0) await sleep(20);
  }
}

/** `wcs ARGS` of the build under test on the same store; `input` on stdin. */
function cli(env, args, input) {
  const child = spawn(process.execPath, [join(DIST, 'cli', 'main.js'), ...args], { cwd: root, stdio: ['pipe', 'ignore', 'pipe'], env: { PATH: process.env.PATH, ...env } });
  let errors = '';
  child.stderr.on('data', (d) => (errors += d));
  child.stdin.end(input);
  return new Promise((resolveExit, reject) => child.once('exit', (code) => (code === 0 ? resolveExit() : reject(new Error(`wcs ${args.join(' ')}: exit ${code} ${errors.slice(0, 300)}`)))));
}




