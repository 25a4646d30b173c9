// A restart with many 2-of-3 wallets: N wallets written straight into a SQLite store as a first sync leaves
// them (40 addresses each, at the node's tip), then `wcs serve` started on a real regtest node; timed until
// `/healthz/live` first answers, and until `/healthz/ready` does (the sync has loaded every wallet).
//
//   npm run build && node bench/many-wallets/run.mjs [--wallets 3000] [--runs 2]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../../dist/config.js';
import { createRuntime } from '../../dist/main.js';
import { DescriptorDeriver, parseDescriptor } from '../../dist/core/descriptor/index.js';
import { NETWORKS } from '../../dist/core/network.js';
import { toHex } from '../../dist/core/bytes.js';
import { locateBitcoind, startBitcoind } from '../bitcoind-support.mjs';
import { freePort } from '../support.mjs';

const root = resolve(import.meta.dirname, '..', '..');
const numberArg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const WALLETS = numberArg('wallets', 3000);
const RUNS = numberArg('runs', 2);
const fixture = JSON.parse(readFileSync(join(root, 'test/fixtures/regtest/wallets.json'), 'utf8')).w_wsh2of3;

const chainDir = mkdtempSync(join(tmpdir(), 'wcs-bench-many-node-'));
const dataFolder = mkdtempSync(join(tmpdir(), 'wcs-bench-many-'));
const node = await startBitcoind(locateBitcoind(root), chainDir);
try {
  await node.rpc.call('generatetodescriptor', [1, 'raw(51)']);
  const tip = { height: await node.rpc.call('getblockcount'), hash: await node.rpc.call('getbestblockhash') };
  const env = {
    SERVICE_DATA_FOLDER: dataFolder, SERVICE_NETWORK: 'regtest', SERVICE_API_ACTIVE: 'True', SERVICE_ADMIN_PASSWORD: 'bench-admin-password',
    SERVICE_LOG_LEVEL: 'warn', SERVICE_BITCOIND_URL: node.url, SERVICE_BITCOIND_COOKIE: node.cookieFile, SERVICE_SYNC_INTERVAL: '5', SERVICE_HOST: '127.0.0.1',
  };
  const written = performance.now();
  await writeWallets(env, tip);
  console.log(`${WALLETS} 2-of-3 wallets written in ${((performance.now() - written) / 1000).toFixed(1)} s`);
  for (let run = 1; run <= RUNS; run++) {
    const { live, ready } = await restart(env);
    console.log(`run ${run}: /healthz/live answered after ${live.toFixed(2)} s, /healthz/ready after ${ready.toFixed(2)} s`);
  }
} finally {
  await node.stop();
  rmSync(chainDir, { recursive: true, force: true });
  rmSync(dataFolder, { recursive: true, force: true });
}

/** The wallets as a first sync leaves them: the gap-limit window of both branches stored, at the node's tip. */
async function writeWallets(env, tip) {
  const runtime = await createRuntime(loadConfig({ env, flags: [] }), { chain: null });
  try {
    const { store } = runtime;
    await runtime.services.users.bootstrapAdmin('bench-admin-password');
    const scripts = [fixture.recv_descriptor, fixture.change_descriptor].map((d) => new DescriptorDeriver(parseDescriptor(d, NETWORKS.regtest)).deriveRange(0, 20).map((o) => toHex(o.scriptPubKey)));
    for (let i = 0; i < WALLETS; i++) {
      const id = randomUUID();
      await store.wallets.insert({
        id, alias: `many-${i}`, name: `Many ${i}`, description: '', ownerName: 'admin', network: 'regtest',
        receiveDescriptor: fixture.recv_descriptor, changeDescriptor: fixture.change_descriptor, addressType: 'bech32',
        sigsRequired: 2, sigsTotal: 3, keys: [], gapLimit: 20, birthday: tip.height, createdAt: Date.now(), revision: 0, tip: null,
      }, []);
      const addressesAdded = scripts.flatMap((list, branch) => list.map((script, index) => ({ walletId: id, branch, index, script })));
      const sync = { walletId: id, tip, lastUsedReceive: -1, lastUsedChange: -1 };
      await store.transaction((repos) => repos.wallets.applyChange({ walletId: id, addressesAdded, transactionsAdded: [], transactionsUpdated: [], transactionsRemoved: [], sync }, 0));
    }
  } finally {
    await runtime.close();
  }
}

/** Starts `wcs serve` on the store; seconds until liveness answers, and until readiness does. */
async function restart(env) {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [join(root, 'dist', 'cli', 'main.js'), 'serve'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'], env: { PATH: process.env.PATH, ...env, SERVICE_PORT: String(port) } });
  const base = `http://127.0.0.1:${port}`;
  try {
    const live = await firstOk(`${base}/healthz/live`, started);
    const ready = await firstOk(`${base}/healthz/ready`, started);
    return { live, ready };
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
}

async function firstOk(url, since) {
  for (;;) {
    try {
      if ((await fetch(url, { signal: AbortSignal.timeout(120_000) })).ok) return (performance.now() - since) / 1000;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
