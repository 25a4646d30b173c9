// Scanning a new wallet, the service against Bitcoin Core, on one machine in one run.
// A regtest chain like a busy small chain (2,201 blocks of ~38 KB, ~42,000 transactions, a wpkh wallet with
// 20 payments and 5 spends) is built once with the real bitcoind and kept in the cache folder. Each run then
// times Bitcoin Core's `rescanblockchain 0` on a fresh watch-only wallet of the same descriptors and the
// service's scan (from `POST /wallets` with birthday 0 until its `scan` is null), checks both found the same
// coins and transactions, and reports the ratio, with and without the node's block filter index.
// Usage: npm run build && node bench/rescan/run.mjs [--rounds 3] [--sync-interval 5] [--filters on|off] [--rest on|off]
//   [--block-files on|off] (the service is given the node's blocks folder / told to read none; by default it
//   takes the one beside the node's cookie)
//   [--cpu-prof DIR] (writes a V8 CPU profile of each service run to DIR)
//   [--warm-up on] (each service first scans another wallet, untimed: the timed scan runs in a warm process)
//   BITCOIND (default ../shared/bin/bitcoind), WCS_BENCH_CACHE (default ~/.cache/wcs-bench)
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, homedir, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { locateBitcoind, startBitcoind } from '../bitcoind-support.mjs';
import { arg, cpuSeconds, freePort, numberArg, minorFaults, waitFor } from '../support.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const ROUNDS = Math.min(numberArg('rounds', 3), 9);
const FILTER_MODES = { on: [true], off: [false] }[arg('filters')] ?? [true, false];
const CPU_PROFILE_DIR = arg('cpu-prof');
/** Start the node with -rest (the service then reads blocks in binary over REST; Core's rescan is unaffected). */
const REST = arg('rest') === 'on';
/**
 * on: the service is given the node's blocks folder; off: it reads no block files (`none`); unset: its default, the
 * folder beside the node's cookie. It reads blocks from the node's files only while the node keeps no filters.
 */
const BLOCK_FILES = arg('block-files');
/** Each service scans a wallet the chain never paid before the timed one: JIT and key tables warm, as in a running service. */
const WARM_UP = arg('warm-up') === 'on';
const SYNC_INTERVAL = numberArg('sync-interval', 5);
const CHAIN_VERSION = 'rescan-chain-v1';
const LAST_HEIGHT = 2_200;
const FIRST_BUSY_HEIGHT = 201;
const TXS_PER_BLOCK = 20;
const OUTPUTS_PER_TX = 55;
const PAYMENTS = 20;
const SPENDS = 5;
const PASSWORD = 'bench-admin-password';
/** Filler payments go to this key's branch 0; its branches 3 and 4 are never paid (the warm-up wallet's). */
const SINK_KEY = 'tpubD6NzVbkrYhZ4WaWSyoBvQwbpLkojyoTZPRsgXELWz3Popb3qkjcJyJUGLnL4qHHoQvao8ESaAstxYSnhyswJ76uZPStJRJCTKvosUCJZL5B';
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const log = (...parts) => console.error(new Date().toISOString().slice(11, 19), ...parts);

const cacheRoot = process.env.WCS_BENCH_CACHE ?? join(homedir(), '.cache', 'wcs-bench');
const chainDir = join(cacheRoot, CHAIN_VERSION);
const bitcoind = locateBitcoind(root);

async function buildChain() {
  rmSync(chainDir, { recursive: true, force: true });
  mkdirSync(chainDir, { recursive: true });
  const node = await startBitcoind(bitcoind, chainDir, ['-blockfilterindex=1']);
  const { rpc } = node;
  try {
    await rpc.call('createwallet', ['miner']);
    await rpc.call('createwallet', ['target']);
    const minerAddress = await rpc.call('getnewaddress', [], 'miner');
    await rpc.call('generatetoaddress', [FIRST_BUSY_HEIGHT - 1, minerAddress]);
    // Filler payments go to addresses of a key nobody holds.
    const sinkDescriptor = (await rpc.call('getdescriptorinfo', [`wpkh(${SINK_KEY}/0/*)`])).descriptor;
    const sink = await rpc.call('deriveaddresses', [sinkDescriptor, [0, 1999]]);
    // Twenty independent chains of transactions, each spending the change of its last one (position 0).
    const coins = (await rpc.call('listunspent', [100, 9999999], 'miner')).slice(0, TXS_PER_BLOCK).map((u) => ({ txid: u.txid, vout: u.vout }));
    if (coins.length < TXS_PER_BLOCK) throw new Error('not enough mature coins to start');
    const paymentHeights = new Set(Array.from({ length: PAYMENTS }, (_, i) => FIRST_BUSY_HEIGHT + 40 + i * 95));
    const spendHeights = new Set(Array.from({ length: SPENDS }, (_, i) => FIRST_BUSY_HEIGHT + 500 + i * 350));
    let sinkIndex = 0;
    for (let height = FIRST_BUSY_HEIGHT; height <= LAST_HEIGHT; height++) {
      const calls = coins.map((coin) => {
        const outputs = Array.from({ length: OUTPUTS_PER_TX }, () => ({ [sink[sinkIndex++ % sink.length]]: 0.00001 }));
        return { method: 'send', params: [outputs, null, 'unset', 2, { inputs: [coin], add_inputs: false, change_position: 0, change_type: 'bech32' }] };
      });
      const answers = await rpc.batch(calls, 'miner');
      answers.forEach((a, i) => {
        if (a.error) throw new Error(`send at ${height}: ${a.error.message}`);
        coins[i] = { txid: a.result.txid, vout: 0 };
      });
      if (paymentHeights.has(height)) await rpc.call('sendtoaddress', [await rpc.call('getnewaddress', [], 'target'), 0.5], 'miner');
      if (spendHeights.has(height)) await rpc.call('sendtoaddress', [sink[height % sink.length], 0.2], 'target');
      await rpc.call('generatetoaddress', [1, minerAddress]);
      if (height % 200 === 0) log(`chain built to ${height}`);
    }
    const descriptors = (await rpc.call('listdescriptors', [false], 'target')).descriptors.filter((d) => d.desc.startsWith('wpkh(') && d.active);
    const info = await rpc.call('getblockchaininfo');
    const blocks = [];
    for (let h = 0; h <= info.blocks; h++) blocks.push(h);
    let bytes = 0;
    let transactions = 0;
    for (let h = 0; h <= info.blocks; h += 200) {
      const stats = await rpc.batch(blocks.slice(h, h + 200).map((height) => ({ method: 'getblockstats', params: [height, ['total_size', 'txs']] })));
      for (const s of stats) {
        bytes += s.result.total_size + 80;
        transactions += s.result.txs;
      }
    }
    await rpc.call('unloadwallet', ['miner']);
    await rpc.call('unloadwallet', ['target']);
    const meta = { tip: info.blocks, transactions, averageBlockKb: Math.round(bytes / (info.blocks + 1) / 1000), descriptors: descriptors.map((d) => d.desc) };
    writeFileSync(join(chainDir, 'chain.json'), JSON.stringify(meta, null, 2));
    return meta;
  } finally {
    await node.stop();
  }
}

/** Core: a fresh watch-only wallet with the descriptors, then `rescanblockchain 0`, timed. */
async function coreScan(node, meta, round) {
  const { rpc } = node;
  const name = `watch-${process.pid}-${round}`;
  await rpc.call('createwallet', { wallet_name: name, disable_private_keys: true, blank: true, load_on_startup: false });
  try {
    const imports = meta.descriptors.map((desc) => ({ desc, timestamp: 'now', active: true, internal: desc.includes('/1/*'), range: [0, 999] }));
    const imported = await rpc.call('importdescriptors', [imports], name);
    if (!imported.every((r) => r.success)) throw new Error(`importdescriptors: ${JSON.stringify(imported)}`);
    const started = performance.now();
    const cpuBefore = cpuSeconds(node.pid);
    await rpc.call('rescanblockchain', [0], name);
    const seconds = (performance.now() - started) / 1000;
    const cpu = cpuSeconds(node.pid) - cpuBefore;
    const unspent = await rpc.call('listunspent', [0], name);
    const txs = await rpc.call('listtransactions', ['*', 1000, 0, true], name);
    return { seconds, cpu, coins: new Set(unspent.map((u) => `${u.txid}:${u.vout}:${Math.round(u.amount * 1e8)}`)), txids: new Set(txs.map((t) => t.txid)) };
  } finally {
    await rpc.call('unloadwallet', [name]);
    rmSync(join(chainDir, 'regtest', 'wallets', name), { recursive: true, force: true });
  }
}

function rssPeakKb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? NaN);
}

/** The service: a fresh `wcs serve` on the node; POST the wallet (birthday 0), poll until `scan` is null. */
async function serviceScan(node, meta, syncInterval) {
  const dataFolder = mkdtempSync(join(tmpdir(), 'wcs-bench-rescan-'));
  const port = await freePort();
  const profile = CPU_PROFILE_DIR ? ['--cpu-prof', '--cpu-prof-dir', CPU_PROFILE_DIR] : [];
  const child = spawn(process.execPath, [...profile, join(root, 'dist', 'cli', 'main.js'), 'serve'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'ignore'],
    env: {
      PATH: process.env.PATH, SERVICE_PORT: String(port), SERVICE_HOST: '127.0.0.1', SERVICE_DATA_FOLDER: dataFolder,
      SERVICE_NETWORK: 'regtest', SERVICE_API_ACTIVE: 'True', SERVICE_ADMIN_PASSWORD: PASSWORD, SERVICE_LOG_LEVEL: 'warn',
      SERVICE_BITCOIND_URL: node.url, SERVICE_BITCOIND_COOKIE: node.cookieFile, SERVICE_SYNC_INTERVAL: String(syncInterval),
      SERVICE_USER_REQUEST_RATE: '0', // the scan is polled often; the per-user limit is not measured here
      ...({ on: { SERVICE_BITCOIND_BLOCKS_FOLDER: join(chainDir, 'regtest', 'blocks') }, off: { SERVICE_BITCOIND_BLOCKS_FOLDER: 'none' } }[BLOCK_FILES] ?? {}),
    },
  });
  try {
    const base = `http://127.0.0.1:${port}`;
    await waitFor(`${base}/healthz/live`);
    const tokenAnswer = await fetch(`${base}/api/v1alpha/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ jwt_token_description: 'rescan bench', jwt_token_life: '1 days' }),
    });
    const auth = { authorization: `Bearer ${(await tokenAnswer.json()).jwt_token}`, 'content-type': 'application/json' };
    const [recv, change] = [meta.descriptors.find((d) => d.includes('/0/*')), meta.descriptors.find((d) => d.includes('/1/*'))];
    if (WARM_UP) {
      await scanWallet(base, auth, { name: 'Warm-up', alias: 'warmup', recv_descriptor: `wpkh(${SINK_KEY}/3/*)`, change_descriptor: `wpkh(${SINK_KEY}/4/*)`, birthday: 0 });
    }
    const started = performance.now();
    const [serviceCpuBefore, nodeCpuBefore, faultsBefore] = [cpuSeconds(child.pid), cpuSeconds(node.pid), minorFaults(child.pid)];
    const details = await scanWallet(base, auth, {
      name: 'Rescan bench', alias: 'bench', recv_descriptor: recv.replace(/#.*$/, ''), change_descriptor: change.replace(/#.*$/, ''), birthday: 0,
    });
    const seconds = (performance.now() - started) / 1000;
    const [serviceCpu, nodeCpu, faults] = [cpuSeconds(child.pid) - serviceCpuBefore, cpuSeconds(node.pid) - nodeCpuBefore, minorFaults(child.pid) - faultsBefore];
    const cpu = serviceCpu + nodeCpu;
    const rssKb = rssPeakKb(child.pid);
    return {
      seconds,
      cpu,
      serviceCpu,
      nodeCpu,
      faults,
      rssKb,
      coins: new Set(details.utxo.map((u) => `${u.txid}:${u.vout}:${u.amount_sat}`)),
      txids: new Set(details.txlist.map((t) => t.txid)),
    };
  } finally {
    await new Promise((resolve) => {
      child.once('exit', resolve);
      child.kill('SIGTERM');
    });
    rmSync(dataFolder, { recursive: true, force: true });
  }
}

/** Creates the wallet, then reads its details every 25 ms until its scan is done; the last details. */
async function scanWallet(base, auth, wallet) {
  const created = await fetch(`${base}/api/v1alpha/wallets`, { method: 'POST', headers: auth, body: JSON.stringify(wallet) });
  if (created.status !== 201) throw new Error(`wallet creation: ${created.status} ${await created.text()}`);
  for (const deadline = Date.now() + 600_000; ; ) {
    const answer = await fetch(`${base}/api/v1alpha/wallets/${wallet.alias}`, { headers: auth });
    const details = await answer.json();
    if (answer.status !== 200) throw new Error(`wallet details: ${answer.status} ${JSON.stringify(details)}`);
    if (details.scan === null) return details;
    if (Date.now() > deadline) throw new Error('the service did not finish the scan within 10 minutes');
    await new Promise((r) => setTimeout(r, 25));
  }
}

const sameSet = (a, b) => a.size === b.size && [...a].every((x) => b.has(x));

async function measure(meta, filters) {
  const node = await startBitcoind(bitcoind, chainDir, [`-blockfilterindex=${filters ? 1 : 0}`, `-rest=${REST ? 1 : 0}`]);
  try {
    const core = [];
    const service = [];
    const fastService = [];
    for (let round = 0; round < ROUNDS; round++) {
      const c = await coreScan(node, meta, round);
      const s = await serviceScan(node, meta, SYNC_INTERVAL);
      const f = await serviceScan(node, meta, 0.1);
      for (const r of [s, f]) {
        if (!sameSet(c.coins, r.coins)) throw new Error(`different coins: Core ${c.coins.size}, service ${r.coins.size}`);
        if (!sameSet(c.txids, r.txids)) throw new Error(`different transactions: Core ${c.txids.size}, service ${r.txids.size}`);
      }
      log(`filters ${filters ? 'on' : 'off'}, round ${round + 1}: Core ${c.seconds.toFixed(2)} s (CPU ${c.cpu.toFixed(2)} s), service ${s.seconds.toFixed(2)} s (sync interval ${SYNC_INTERVAL} s), ${f.seconds.toFixed(2)} s (0.1 s; CPU ${f.serviceCpu.toFixed(2)} s service + ${f.nodeCpu.toFixed(2)} s node; ${f.faults} page faults of the service); ${c.coins.size} coins, ${c.txids.size} transactions; load ${loadavg()[0].toFixed(1)}`);
      core.push(c);
      service.push(s);
      fastService.push(f);
    }
    const coreS = median(core.map((r) => r.seconds));
    const serviceS = median(service.map((r) => r.seconds));
    const fastS = median(fastService.map((r) => r.seconds));
    const coreCpu = median(core.map((r) => r.cpu));
    const fastCpu = median(fastService.map((r) => r.cpu));
    return {
      filters, coreS, serviceS, fastS, coreCpu, fastCpu, coins: core[0].coins.size, transactions: core[0].txids.size,
      rssMb: Math.round(Math.max(...service.map((r) => r.rssKb), ...fastService.map((r) => r.rssKb)) / 1024),
    };
  } finally {
    await node.stop();
  }
}

const metaFile = join(chainDir, 'chain.json');
let meta;
if (existsSync(metaFile)) meta = JSON.parse(readFileSync(metaFile, 'utf8'));
else {
  log(`building the chain in ${chainDir} (once)`);
  meta = await buildChain();
}
const results = [];
for (const filters of FILTER_MODES) results.push(await measure(meta, filters));
const machine = `${cpus().length} cores (${cpus()[0]?.model.trim()}), Node.js ${process.version}`;
const lines = [
  `Chain: ${meta.tip + 1} blocks, ${meta.transactions} transactions, ~${meta.averageBlockKb} KB per block; ${results[0].coins} coins, ${results[0].transactions} wallet transactions found by both. ${machine}; ${ROUNDS} rounds, medians.`,
  '',
  '| block filter index | Core `rescanblockchain 0` | service, POST to scan done (sync interval ' + SYNC_INTERVAL + ' s) | ratio | same, interval 0.1 s | ratio | CPU: Core (node) | CPU: service + node (0.1 s) | ratio | service peak RSS |',
  '|---|---|---|---|---|---|---|---|---|---|',
  ...results.map((r) => `| ${r.filters ? 'on' : 'off'}${REST ? ', node with -rest' : ''}${{ on: ', service given the blocks folder', off: ', service reads no block files' }[BLOCK_FILES] ?? ''}${WARM_UP ? ', warm process' : ''} | ${r.coreS.toFixed(2)} s | ${r.serviceS.toFixed(2)} s | ${(r.serviceS / r.coreS).toFixed(2)}x Core's time | ${r.fastS.toFixed(2)} s | ${(r.fastS / r.coreS).toFixed(2)}x | ${r.coreCpu.toFixed(2)} s | ${r.fastCpu.toFixed(2)} s | ${(r.fastCpu / r.coreCpu).toFixed(2)}x | ${r.rssMb} MB |`),
];
console.log(lines.join('\n'));
