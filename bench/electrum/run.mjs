// The Electrum chain source against Bitcoin Core's, on one chain in one run: a real regtest bitcoind (-txindex=1)
// with a real Fulcrum over it, and `wcs serve` on each source in turn.
// - Discovery: a 2-of-3 wsh(sortedmulti) wallet whose first N receive addresses were each paid once (N blocks'
//   worth of payments after the birthday) is created with that birthday; timed from `POST /wallets` until its
//   scan is over and its balance is every payment. Scripts per second: the scripts the wallet watches then (its
//   used receive addresses, the gap after them, the change branch's gap) over that time. (The payments of earlier
//   rounds' block-to-visible step count too: each round's wallet must find them all.)
// - Block to visible: with the wallet synced, one payment to its next address is mined; timed from the node
//   answering `generatetoaddress` until the service lists the payment confirmed (polled every 10 ms, one
//   transaction and one coin a read). Fulcrum polls the node every 0.5 s (the test node has no ZeroMQ), so its
//   figure includes that wait.
// Usage: npm run build && node bench/electrum/run.mjs [--addresses 1000] [--rounds 2] [--blocks 10] [--source bitcoind|electrum]
//   [--timeout 600] (seconds a discovery may take)
//   BITCOIND (default ../shared/bin/bitcoind), FULCRUM (default ../shared/bin/Fulcrum)
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { locateBitcoind, startBitcoind } from '../bitcoind-support.mjs';
import { locateFulcrum, startFulcrum } from '../fulcrum-support.mjs';
import { arg, cpuSeconds, freePort, waitFor } from '../support.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const ADDRESSES = Number(arg('addresses', 1000));
const ROUNDS = Number(arg('rounds', 2));
const LATENCY_BLOCKS = Number(arg('blocks', 10));
const SOURCES = arg('source') ? [arg('source')] : ['bitcoind', 'electrum'];
const PAYMENTS_PER_BLOCK = 10;
const PAYMENT_SAT = 100_000;
const GAP_LIMIT = 20;
/** How long a discovery (`--timeout` seconds) or one block may take before the run says the source failed. */
const DISCOVERY_TIMEOUT_MS = Number(arg('timeout', 600)) * 1000;
const VISIBLE_TIMEOUT_MS = 60_000;
const PASSWORD = 'bench-admin-password';
const wallet = JSON.parse(readFileSync(join(root, 'test', 'fixtures', 'regtest', 'wallets.json'), 'utf8')).w_wsh2of3;
const log = (...parts) => console.error(new Date().toISOString().slice(11, 19), ...parts);
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A chain on which the wallet's first ADDRESSES receive addresses were each paid once, after `birthday`. */
async function buildChain(node) {
  const { rpc } = node;
  await rpc.call('createwallet', ['miner']);
  const miner = await rpc.call('getnewaddress', [], 'miner');
  await rpc.call('generatetoaddress', [110, miner]);
  const birthday = await rpc.call('getblockcount');
  const recv = (await rpc.call('getdescriptorinfo', [wallet.recv_descriptor.replace(/#.*$/, '')])).descriptor;
  const addresses = await rpc.call('deriveaddresses', [recv, [0, ADDRESSES + LATENCY_BLOCKS * ROUNDS * SOURCES.length + 10]]);
  for (let i = 0; i < ADDRESSES; i += PAYMENTS_PER_BLOCK) {
    const amounts = Object.fromEntries(addresses.slice(i, Math.min(i + PAYMENTS_PER_BLOCK, ADDRESSES)).map((a) => [a, PAYMENT_SAT / 1e8]));
    await rpc.call('sendmany', ['', amounts], 'miner');
    await rpc.call('generatetoaddress', [1, miner]);
  }
  return { birthday, miner, addresses, paidSat: ADDRESSES * PAYMENT_SAT };
}

/** `wcs serve` on one source; resolves with its base URL and an admin bearer. */
async function startService(env) {
  const dataFolder = mkdtempSync(join(tmpdir(), 'wcs-bench-electrum-'));
  const port = await freePort();
  const child = spawn(process.execPath, [join(root, 'dist', 'cli', 'main.js'), 'serve'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'ignore'],
    env: {
      PATH: process.env.PATH, SERVICE_PORT: String(port), SERVICE_HOST: '127.0.0.1', SERVICE_DATA_FOLDER: dataFolder,
      SERVICE_NETWORK: 'regtest', SERVICE_API_ACTIVE: 'True', SERVICE_ADMIN_PASSWORD: PASSWORD, SERVICE_LOG_LEVEL: 'error',
      SERVICE_WEB_ACTIVE: 'False', SERVICE_SYNC_INTERVAL: '5', SERVICE_USER_REQUEST_RATE: '0', ...env,
    },
  });
  const base = `http://127.0.0.1:${port}`;
  await waitFor(`${base}/healthz/live`);
  const token = await fetch(`${base}/api/v1alpha/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`, 'content-type': 'application/json' },
    body: JSON.stringify({ jwt_token_description: 'electrum bench', jwt_token_life: '1 days' }),
  });
  const headers = { authorization: `Bearer ${(await token.json()).jwt_token}`, 'content-type': 'application/json' };
  return {
    pid: child.pid,
    api: `${base}/api/v1alpha`,
    headers,
    async stop() {
      await new Promise((r) => {
        child.once('exit', r);
        child.kill('SIGTERM');
      });
      rmSync(dataFolder, { recursive: true, force: true });
    },
  };
}

/** The wallet's balance, scan and newest transaction, read cheaply (one transaction, one coin). */
async function glance(service) {
  const answer = await fetch(`${service.api}/wallets/bench?limit=1&utxo_limit=1`, { headers: service.headers });
  if (!answer.ok) throw new Error(`GET /wallets/bench: ${answer.status} ${await answer.text()}`);
  return answer.json();
}

async function discover(service, chain, cpuOf) {
  const started = performance.now();
  const before = cpuOf();
  const created = await fetch(`${service.api}/wallets`, {
    method: 'POST',
    headers: service.headers,
    body: JSON.stringify({ name: 'Bench', alias: 'bench', recv_descriptor: wallet.recv_descriptor, change_descriptor: wallet.change_descriptor, birthday: chain.birthday, gap_limit: GAP_LIMIT }),
  });
  if (created.status !== 201) throw new Error(`POST /wallets: ${created.status} ${await created.text()}`);
  const expected = chain.paidSat;
  let last;
  for (;;) {
    last = await glance(service);
    if (last.scan === null && last.balance.total_sat === expected) break;
    if (performance.now() - started > DISCOVERY_TIMEOUT_MS) throw new Error(`discovery did not finish in ${DISCOVERY_TIMEOUT_MS / 1000} s: balance ${last.balance.total_sat} of ${expected} sat, scan ${JSON.stringify(last.scan)}`);
    await sleep(25);
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = cpuOf().map((value, i) => value - before[i]);
  const scripts = ADDRESSES + GAP_LIMIT + GAP_LIMIT;
  return { seconds, cpu, scripts, perSecond: scripts / seconds };
}

async function blockToVisible(service, chain, node, next) {
  const samples = [];
  for (let i = 0; i < LATENCY_BLOCKS; i++) {
    const address = chain.addresses[next()];
    const txid = await node.rpc.call('sendtoaddress', [address, PAYMENT_SAT / 1e8], 'miner');
    chain.paidSat += PAYMENT_SAT;
    await sleep(1_000); // the payment seen in the mempool first, as it usually is
    const mined = performance.now();
    await node.rpc.call('generatetoaddress', [1, chain.miner]);
    for (;;) {
      const seen = await glance(service);
      const newest = seen.txlist[0];
      if (newest?.txid === txid && newest.confirmations >= 1) break;
      if (performance.now() - mined > VISIBLE_TIMEOUT_MS) throw new Error(`payment ${txid} not shown confirmed within ${VISIBLE_TIMEOUT_MS / 1000} s (newest: ${JSON.stringify(newest ?? null)})`);
      await sleep(10);
    }
    samples.push(performance.now() - mined);
  }
  return samples;
}

const datadir = mkdtempSync(join(tmpdir(), 'wcs-bench-electrum-node-'));
const node = await startBitcoind(locateBitcoind(root), datadir, ['-txindex=1', '-blockfilterindex=1']);
let fulcrum;
const results = [];
try {
  log(`building a chain: ${ADDRESSES} payments to a 2-of-3 wallet, ${PAYMENTS_PER_BLOCK} a block`);
  const chain = await buildChain(node);
  if (SOURCES.includes('electrum')) fulcrum = await startFulcrum(locateFulcrum(root), node);
  let nextAddress = ADDRESSES;
  for (let round = 1; round <= ROUNDS; round++) {
    // Alternate which source goes first: the second runs on a warmer node and Fulcrum.
    const order = round % 2 === 1 ? SOURCES : [...SOURCES].reverse();
    for (const source of order) {
      const env = source === 'electrum' ? { SERVICE_ELECTRUM_URL: fulcrum.url } : { SERVICE_BITCOIND_URL: node.url, SERVICE_BITCOIND_COOKIE: node.cookieFile };
      const service = await startService(env);
      const cpuOf = () => [cpuSeconds(service.pid), cpuSeconds(node.pid), fulcrum && source === 'electrum' ? cpuSeconds(fulcrum.pid) : 0];
      try {
        const found = await discover(service, chain, cpuOf);
        log(`round ${round} ${source}: discovery ${found.seconds.toFixed(2)} s, ${Math.round(found.perSecond)} scripts/s, CPU service ${found.cpu[0].toFixed(2)} s, node ${found.cpu[1].toFixed(2)} s, Fulcrum ${found.cpu[2].toFixed(2)} s`);
        const visible = await blockToVisible(service, chain, node, () => nextAddress++);
        if (fulcrum) await fulcrum.atTip();
        log(`round ${round} ${source}: block to visible median ${median(visible).toFixed(0)} ms, max ${Math.max(...visible).toFixed(0)} ms`);
        results.push({ source, round, ...found, visible });
      } catch (error) {
        log(`round ${round} ${source}: FAILED: ${error.message}`);
        results.push({ source, round, failed: error.message });
      } finally {
        await service.stop();
      }
    }
  }
} finally {
  await fulcrum?.stop();
  await node.stop();
  rmSync(datadir, { recursive: true, force: true });
}

console.log(`\n${cpus().length} cores, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}, Node.js ${process.version}; ${ADDRESSES} used addresses, gap limit ${GAP_LIMIT}, ${LATENCY_BLOCKS} blocks a round\n`);
console.log('| source | round | discovery | scripts/s | CPU service / node / Fulcrum | block to visible, median (max) |');
console.log('|---|---|---|---|---|---|');
for (const r of results) {
  if (r.failed) console.log(`| ${r.source} | ${r.round} | failed: ${r.failed} | | | |`);
  else console.log(`| ${r.source} | ${r.round} | ${r.seconds.toFixed(2)} s | ${Math.round(r.perSecond)} | ${r.cpu.map((c) => `${c.toFixed(2)} s`).join(' / ')} | ${median(r.visible).toFixed(0)} ms (${Math.max(...r.visible).toFixed(0)} ms) |`);
}
if (results.some((r) => r.failed)) process.exitCode = 1;
