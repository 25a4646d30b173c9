// Chain sync throughput through the real services (SQLite store, engine, sync service) on a synthetic chain
// of real serialized blocks with BIP158 basic filters (buildBasicFilter), served by an in-process chain
// source that parses blocks like the Bitcoin Core source does. 10 single-key wallets (wpkh) sync from
// genesis with and without filters; then the import of a 2-of-3 wallet with 1,000 used addresses.
// Run: npm run build && node bench/sync/sync.bench.mjs   (BLOCKS=10000 RUNS=3 FILLER_TXS=9 by default)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DescriptorDeriver, parseDescriptor } from '../../dist/core/descriptor/index.js';
import { NETWORKS } from '../../dist/core/network.js';
import { parseBlock } from '../../dist/core/tx.js';
import { loadConfig } from '../../dist/config.js';
import { createRuntime } from '../../dist/main.js';
import { BitcoindFollower } from '../../dist/chain/bitcoind/follower.js';
import { accountKey, buildChain, seedScript, syntheticTransaction as transaction } from '../chain-support.mjs';

const BLOCKS = Number(process.env.BLOCKS ?? 10_000);
const RUNS = Number(process.env.RUNS ?? 3);
const WALLETS = 10;
const FILLER_TXS = Number(process.env.FILLER_TXS ?? 9);
const MULTISIG_PAYMENTS = Math.min(1_000, Math.floor(BLOCKS / 10));

const singleKeyDescriptors = Array.from({ length: WALLETS }, (_, w) => `wpkh(${accountKey(`bench wallet ${w}`, "m/84'/1'/0'")}/<0;1>/*)`);
const multisigKeys = [0, 1, 2].map((k) => accountKey(`bench cosigner ${k}`, "m/48'/1'/0'/2'"));
const multisigDescriptor = `wsh(sortedmulti(2,${multisigKeys.map((k) => `${k}/<0;1>/*`).join(',')}))`;

function receiveScripts(descriptor, count) {
  const receive = descriptor.replace('<0;1>', '0').replaceAll('<0;1>', '0');
  return new DescriptorDeriver(parseDescriptor(receive, NETWORKS.regtest)).deriveRange(0, count).map((o) => o.scriptPubKey);
}

/** Heights 0..BLOCKS: coinbase + filler; every 25th block pays one of the 10 wallets; every 10th (offset 3) the 2-of-3. */
function buildBenchChain() {
  const walletScripts = singleKeyDescriptors.map((d) => receiveScripts(d, Math.ceil(BLOCKS / 25 / WALLETS) + 1));
  const multisigScripts = receiveScripts(multisigDescriptor, MULTISIG_PAYMENTS);
  const nextIndex = new Array(WALLETS).fill(0);
  let multisigPaid = 0;
  const blocks = buildChain(BLOCKS, (height) => {
    const txs = [];
    for (let i = 0; i < FILLER_TXS; i++) {
      txs.push(transaction(`f${height}/${i}`, [{ value: 70_000n, script: seedScript(`a${height}/${i}`) }, { value: 20_000n, script: seedScript(`b${height}/${i}`) }]));
    }
    if (height % 25 === 0 && height > 0) {
      const w = (height / 25) % WALLETS;
      txs.push(transaction(`pay${height}`, [{ value: 100_000n, script: walletScripts[w][nextIndex[w]++] }, { value: 5_000n, script: seedScript(`c${height}`) }]));
    }
    if (height % 10 === 3 && multisigPaid < MULTISIG_PAYMENTS) {
      txs.push(transaction(`ms${height}`, [{ value: 250_000n, script: multisigScripts[multisigPaid++] }]));
    }
    return txs;
  });
  if (multisigPaid < MULTISIG_PAYMENTS) throw new Error(`chain too short for ${MULTISIG_PAYMENTS} multisig payments`);
  return blocks;
}

/** A chain source over the synthetic chain, with the same interface as the Bitcoin Core one. */
function inProcessChain(blocks, { filters }) {
  const byHash = new Map(blocks.map((b) => [b.hash, b]));
  const tip = blocks.at(-1);
  const known = (hash) => {
    const block = byHash.get(hash);
    if (!block) throw new Error(`unknown block ${hash}`);
    return block;
  };
  const source = {
    backend: 'bench',
    network: 'regtest',
    async getTip() { return { height: tip.height, hash: tip.hash }; },
    async getBlockHash(height) { return blocks[height].hash; },
    async getBlock(hash) { return parseBlock(known(hash).raw); },
    async getBlocks(hashes) { return hashes.map((hash) => parseBlock(known(hash).raw)); },
    async getBlockHeader(hash) {
      const b = known(hash);
      return { hash, height: b.height, time: b.time, medianTime: b.time, prevHash: b.height === 0 ? null : b.prev, confirmations: tip.height - b.height + 1, inActiveChain: true };
    },
    async getBlockFilter(hash) { return filters ? { filter: known(hash).filter, header: '00'.repeat(32) } : null; },
    async getBlockSummaries(from, to) {
      return blocks.slice(from, to + 1).map((b) => ({ height: b.height, hash: b.hash, prevHash: b.height === 0 ? null : b.prev, time: b.time, filter: filters ? b.filter : null }));
    },
    async getMempoolTxids() { return []; },
    async getMempool() { return []; },
    async getMempoolEntry() { return null; },
    async broadcast() { throw new Error('not in the benchmark'); },
    async estimateFee() { return null; },
    async getRelayFees() { return { minRelaySatPerVb: 1, incrementalSatPerVb: 1, mempoolMinSatPerVb: 1 }; },
    async checkHealth() { return { ok: true, network: 'regtest', tip: { height: tip.height, hash: tip.hash }, filters, nodeVersion: 'bench' }; },
    async verifyNetwork() {},
    async close() {},
  };
  // The Bitcoin Core follower reads blocks, summaries and the mempool: it follows this chain as it follows a node.
  source.follower = new BitcoindFollower(source);
  return source;
}

async function runtimeWith(chain) {
  const folder = mkdtempSync(join(tmpdir(), 'wcs-bench-sync-'));
  const config = loadConfig({ env: { SERVICE_DATA_FOLDER: folder, SERVICE_NETWORK: 'regtest', SERVICE_SYNC_INTERVAL: '0', SERVICE_LOG_LEVEL: 'silent' }, flags: [] });
  const runtime = await createRuntime(config, { chain });
  await runtime.services.users.addUser('bench', 'bench-password', { admin: true });
  return {
    runtime,
    principal: { userName: 'bench', isAdmin: true },
    async dispose() {
      await runtime.close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function syncTenWallets(blocks, filters) {
  const { runtime, principal, dispose } = await runtimeWith(inProcessChain(blocks, { filters }));
  try {
    for (const [w, descriptor] of singleKeyDescriptors.entries()) {
      await runtime.services.wallets.admin.create(principal, { name: `wallet ${w}`, descriptor, birthday: 0 });
    }
    const started = performance.now();
    const pass = await runtime.services.sync.runOnce();
    const seconds = (performance.now() - started) / 1000;
    const balances = await runtime.services.wallets.reads.list(principal);
    const received = balances.reduce((sum, w) => sum + w.balance.confirmed_sat, 0);
    return { seconds, pass, received };
  } finally {
    await dispose();
  }
}

async function importMultisig(blocks) {
  const { runtime, principal, dispose } = await runtimeWith(inProcessChain(blocks, { filters: true }));
  try {
    const started = performance.now();
    await runtime.services.wallets.admin.create(principal, { name: 'vault', descriptor: multisigDescriptor, birthday: 0 });
    const created = performance.now();
    const pass = await runtime.services.sync.runOnce();
    const synced = performance.now();
    const details = await runtime.services.wallets.reads.details(principal, 'vault', { limit: 0 });
    const read = performance.now();
    return { create: (created - started) / 1000, sync: (synced - created) / 1000, firstRead: (read - synced) / 1000, pass, utxos: details.utxo.length };
  } finally {
    await dispose();
  }
}

const buildStarted = performance.now();
const blocks = buildBenchChain();
console.log(`chain: ${blocks.length} blocks (heights 0..${BLOCKS}), ${blocks.reduce((n, b) => n + b.raw.length, 0)} bytes, built in ${((performance.now() - buildStarted) / 1000).toFixed(1)} s`);

const results = { filters: [], blocks: [] };
for (let run = 0; run < (process.env.IMPORT_ONLY ? 0 : RUNS); run++) {
  for (const filters of [true, false]) {
    const r = await syncTenWallets(blocks, filters);
    results[filters ? 'filters' : 'blocks'].push(r.seconds);
    console.log(`run ${run + 1} ${filters ? 'with filters   ' : 'without filters'}: ${r.seconds.toFixed(2)} s, ${(blocks.length / r.seconds).toFixed(0)} blocks/s; fetched ${r.pass.blocksFetched}, skipped by filter ${r.pass.blocksSkippedByFilter}; received ${r.received} sat`);
  }
}
const imports = [];
for (let run = 0; run < RUNS; run++) {
  const r = await importMultisig(blocks);
  imports.push(r);
  console.log(`run ${run + 1} 2-of-3 import: create ${r.create.toFixed(2)} s, sync ${r.sync.toFixed(2)} s (fetched ${r.pass.blocksFetched}), first read ${r.firstRead.toFixed(2)} s, ${r.utxos} UTXOs`);
}
const withFilters = median(results.filters);
const withoutFilters = median(results.blocks);
console.log('');
console.log(`median with filters:    ${withFilters.toFixed(2)} s = ${(blocks.length / withFilters).toFixed(0)} blocks/s`);
console.log(`median without filters: ${withoutFilters.toFixed(2)} s = ${(blocks.length / withoutFilters).toFixed(0)} blocks/s`);
console.log(`ratio (without / with): ${(withoutFilters / withFilters).toFixed(2)}x`);
console.log(`median 2-of-3 import (create + sync to tip + first read): ${median(imports.map((r) => r.create + r.sync + r.firstRead)).toFixed(2)} s; create ${median(imports.map((r) => r.create)).toFixed(2)} s, sync ${median(imports.map((r) => r.sync)).toFixed(2)} s`);
