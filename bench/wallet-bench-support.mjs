// What the in-process wallet benchmarks (psbt-http, web) share: the fixture wallet, a fee-only chain backend,
// synthetic confirmed funding rows written as the sync writes them, and latency statistics.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../dist/config.js';
import { startService } from '../dist/main.js';
import { PsbtService } from '../dist/services/psbts/service.js';
import { DescriptorDeriver, parseDescriptor } from '../dist/core/descriptor/index.js';
import { NETWORKS } from '../dist/core/network.js';
import { serializeTransaction, txid as txidOf } from '../dist/core/tx.js';
import { toHex } from '../dist/core/bytes.js';

export const fixtures = JSON.parse(readFileSync(new URL('../test/fixtures/regtest/wallets.json', import.meta.url), 'utf8'));
const regtest = NETWORKS.regtest;
const recvDeriver = new DescriptorDeriver(parseDescriptor(fixtures.w_wpkh.recv_descriptor, regtest));
const changeDeriver = new DescriptorDeriver(parseDescriptor(fixtures.w_wpkh.change_descriptor, regtest));
/** Two addresses of another wallet, to pay. */
export const external = new DescriptorDeriver(parseDescriptor(fixtures.w_tr.recv_descriptor, regtest)).deriveRange(100, 2).map((d) => d.address);

/** A chain backend that answers fees only (nothing is broadcast in these benchmarks). */
export const relayOnly = {
  estimateFee: async () => null,
  getRelayFees: async () => ({ minRelaySatPerVb: 1, incrementalSatPerVb: 1, mempoolMinSatPerVb: 1 }),
  broadcast: async () => {
    throw new Error('no broadcast in the benchmark');
  },
};

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
export const stats = (ms) => {
  const sorted = [...ms].sort((a, b) => a - b);
  return { p50: +percentile(sorted, 50).toFixed(2), p99: +percentile(sorted, 99).toFixed(2), runs: ms.length };
};

/**
 * Confirmed funding transactions of the fixture wpkh wallet, one per UTXO as payments arrive: each pays one
 * of receive indexes 0..19 and returns change to its payer (two outputs, like an ordinary payment).
 */
function fundingRows(walletId, count, seed) {
  const payerChange = Uint8Array.from([0x00, 0x14, ...new Uint8Array(20).fill(7)]);
  const rows = [];
  for (let t = 0; t < count; t++) {
    const outputs = [
      { value: 50_000n + BigInt((t * 37) % 20_000), script: recvDeriver.derive(t % 20).scriptPubKey },
      { value: 1_000_000n, script: payerChange },
    ];
    const tx = { version: 2, inputs: [{ txid: (seed + t).toString(16).padStart(64, '0'), vout: 0, scriptSig: new Uint8Array(0), sequence: 0xffffffff, witness: [] }], outputs, locktime: 0 };
    rows.push({ walletId, txid: txidOf(tx), hex: toHex(serializeTransaction(tx)), status: 'confirmed', blockHeight: 500, blockHash: 'ab'.repeat(32), blockTime: 1_700_000_000, firstSeen: 1_700_000_000, replaceable: false });
  }
  return rows;
}

/**
 * Writes `count` confirmed coins into the store for the fixture wpkh wallet `alias` (imported before), in one
 * change as a first sync would write it: the gap-limit window of both branches and the funding transactions.
 */
export async function fillFixtureWallet(store, alias, count, seed) {
  const wallet = await store.wallets.findByAlias(alias);
  const revision = await store.wallets.revision(wallet.id);
  const known = new Set((await store.wallets.chainRows(wallet.id)).addresses.map((a) => `${a.branch}/${a.index}`));
  const addressesAdded = [0, 1].flatMap((branch) =>
    (branch === 0 ? recvDeriver : changeDeriver)
      .deriveRange(0, 40)
      .filter((d) => !known.has(`${branch}/${d.index}`))
      .map((d) => ({ walletId: wallet.id, branch, index: d.index, script: toHex(d.scriptPubKey) })),
  );
  await store.transaction((repos) =>
    repos.wallets.applyChange(
      { walletId: wallet.id, addressesAdded, transactionsAdded: fundingRows(wallet.id, count, seed), transactionsUpdated: [], transactionsRemoved: [], sync: { walletId: wallet.id, tip: { height: 1000, hash: 'cd'.repeat(32) }, lastUsedReceive: 19, lastUsedChange: -1 } },
      revision,
    ),
  );
  return wallet;
}

export const BENCH_PASSWORD = 'bench-admin-password';

export { numberArg } from './support.mjs';

/**
 * The real server in process (SQLite in a fresh folder, API on, request logging off, no per-user limit) with a
 * chain backend that answers fees only, and an admin token. `close()` stops it and removes the folder.
 * `options.chain`: a block source for the sync service (run by hand: no background passes). `options.folder`: a data
 * folder to start on (another process wrote it), removed by `close()` unless `options.keepFolder`.
 */
export async function startBenchService(folderPrefix, options = {}) {
  const folder = options.folder ?? mkdtempSync(join(tmpdir(), folderPrefix));
  const config = loadConfig({
    env: { SERVICE_DATA_FOLDER: folder, SERVICE_PORT: '0', SERVICE_HOST: '127.0.0.1', SERVICE_API_ACTIVE: 'True', SERVICE_USER_REQUEST_RATE: '0', SERVICE_ADMIN_PASSWORD: BENCH_PASSWORD, SERVICE_NETWORK: 'regtest', SERVICE_LOG_LEVEL: 'error', ...(options.chain ? { SERVICE_SYNC_INTERVAL: '0' } : {}), ...options.env },
    flags: [],
  });
  const extend = (runtime) => {
    const { store, config: c, services } = runtime;
    services.psbts = new PsbtService({ store, access: services.wallets.access, coins: services.wallets.coins, chain: () => relayOnly, maxFeeRate: c.maxFeeRate, maxPending: c.maxPendingPsbts });
  };
  const running = await startService(config, { extend, announce: () => {}, ...(options.chain ? { chain: options.chain } : {}) });
  const api = `${running.url}/api/v1alpha`;
  const basic = `Basic ${Buffer.from(`admin:${BENCH_PASSWORD}`).toString('base64')}`;
  const tokenAnswer = await (await fetch(`${api}/token`, { method: 'POST', headers: { authorization: basic, 'content-type': 'application/json' }, body: JSON.stringify({ jwt_token_description: `bench ${process.pid}`, jwt_token_life: '1 days' }) /* one per process on a folder */ })).json();
  return {
    running,
    api,
    bearer: { authorization: `Bearer ${tokenAnswer.jwt_token}` },
    async close() {
      await running.close();
      if (!options.keepFolder) rmSync(folder, { recursive: true, force: true });
    },
  };
}
