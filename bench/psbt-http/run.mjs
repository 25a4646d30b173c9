// PSBT creation and listing latency through HTTP on the real server (in-process `startService`, SQLite
// file, request logging off): a wpkh wallet imported over the API whose store holds 1,000 or 10,000
// confirmed UTXOs (synthetic funding transactions written as the sync would write them), then
// POST /psbt (two recipients) + DELETE in a loop, and GET /psbt with 100 pending PSBTs.
// The chain backend only answers relay fees here (in process), so node round trips are not included.
// Usage: npm run build && node bench/psbt-http/run.mjs [--runs 60]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../dist/config.js';
import { startService } from '../../dist/main.js';
import { PsbtService } from '../../dist/services/psbts/service.js';
import { DescriptorDeriver, parseDescriptor } from '../../dist/core/descriptor/index.js';
import { NETWORKS } from '../../dist/core/network.js';
import { serializeTransaction, txid as txidOf } from '../../dist/core/tx.js';
import { toHex } from '../../dist/core/bytes.js';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const RUNS = Math.min(arg('runs', 60), 500);
const PASSWORD = 'bench-admin-password';
const fixtures = JSON.parse(readFileSync(new URL('../../test/fixtures/regtest/wallets.json', import.meta.url), 'utf8'));
const regtest = NETWORKS.regtest;
const recvDeriver = new DescriptorDeriver(parseDescriptor(fixtures.w_wpkh.recv_descriptor, regtest));
const external = new DescriptorDeriver(parseDescriptor(fixtures.w_tr.recv_descriptor, regtest)).deriveRange(100, 2).map((d) => d.address);

const relayOnly = {
  estimateFee: async () => null,
  getRelayFees: async () => ({ minRelaySatPerVb: 1, incrementalSatPerVb: 1, mempoolMinSatPerVb: 1 }),
  broadcast: async () => {
    throw new Error('no broadcast in the benchmark');
  },
};

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const stats = (ms) => {
  const sorted = [...ms].sort((a, b) => a - b);
  return { p50: +percentile(sorted, 50).toFixed(2), p99: +percentile(sorted, 99).toFixed(2), runs: ms.length };
};

/**
 * Confirmed funding transactions, one per UTXO as payments arrive: each pays one of receive indexes
 * 0..19 and returns change to its payer (two outputs, like an ordinary payment).
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

async function main() {
  const folder = mkdtempSync(join(tmpdir(), 'wcs-bench-psbt-'));
  const config = loadConfig({
    env: { SERVICE_DATA_FOLDER: folder, SERVICE_PORT: '0', SERVICE_HOST: '127.0.0.1', SERVICE_API_ACTIVE: 'True', SERVICE_USER_REQUEST_RATE: '0', SERVICE_ADMIN_PASSWORD: PASSWORD, SERVICE_NETWORK: 'regtest', SERVICE_LOG_LEVEL: 'error' },
    flags: [],
  });
  // The PSBT part with a chain backend that only answers fees (nothing is broadcast here).
  const extend = (runtime) => {
    const { store, config: c, services } = runtime;
    services.psbts = new PsbtService({ store, access: services.wallets.access, coins: services.wallets.coins, chain: () => relayOnly, maxFeeRate: c.maxFeeRate, maxPending: c.maxPendingPsbts });
  };
  const running = await startService(config, { extend, announce: () => {} });
  const api = `${running.url}/api/v1alpha`;
  try {
    const basic = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;
    const tokenAnswer = await (await fetch(`${api}/token`, { method: 'POST', headers: { authorization: basic, 'content-type': 'application/json' }, body: JSON.stringify({ jwt_token_description: 'bench', jwt_token_life: '1 days' }) })).json();
    const bearer = { authorization: `Bearer ${tokenAnswer.jwt_token}` };
    const auth = { ...bearer, 'content-type': 'application/json' };
    const results = {};
    for (const [alias, count, seed] of [['bench1k', 1_000, 1_000_000], ['bench10k', 10_000, 2_000_000]]) {
      const made = await fetch(`${api}/wallets`, { method: 'POST', headers: auth, body: JSON.stringify({ name: alias, alias, recv_descriptor: fixtures.w_wpkh.recv_descriptor, change_descriptor: fixtures.w_wpkh.change_descriptor, birthday: 0 }) });
      if (made.status !== 201) throw new Error(`wallet import: ${made.status} ${await made.text()}`);
      const store = running.runtime.store;
      const wallet = await store.wallets.findByAlias(alias);
      const revision = await store.wallets.revision(wallet.id);
      const known = new Set((await store.wallets.chainRows(wallet.id)).addresses.map((a) => `${a.branch}/${a.index}`));
      const changeDeriver = new DescriptorDeriver(parseDescriptor(fixtures.w_wpkh.change_descriptor, regtest));
      // The gap-limit window of both branches, as a first sync would store it.
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
      const details = await (await fetch(`${api}/wallets/${alias}?limit=0`, { headers: bearer })).json();
      if (details.utxo.length !== count) throw new Error(`${alias}: ${details.utxo.length} UTXOs instead of ${count}`);

      const body = JSON.stringify({ recipients: [{ address: external[0], amount: '0.004' }, { address: external[1], amount: 150_000, unit: 'sat' }], fee_rate: '5' });
      const create = [];
      for (let i = 0; i < RUNS + 5; i++) {
        const started = performance.now();
        const answer = await fetch(`${api}/wallets/${alias}/psbt`, { method: 'POST', headers: auth, body });
        const record = await answer.json();
        const elapsed = performance.now() - started;
        if (answer.status !== 201) throw new Error(`create: ${answer.status} ${JSON.stringify(record)}`);
        if (i >= 5) create.push(elapsed); // the first requests warm caches and the JIT
        const deleted = await fetch(`${api}/wallets/${alias}/psbt/${record.result.tx.txid}`, { method: 'DELETE', headers: bearer });
        if (deleted.status !== 200) throw new Error(`delete: ${deleted.status} ${await deleted.text()}`);
      }
      results[`create, ${count} UTXOs`] = stats(create);
      // The part of each creation spent loading the wallet (wallet part: store read, engine views).
      const load = [];
      for (let i = 0; i < 10; i++) {
        const started = performance.now();
        await running.runtime.services.wallets.coins.forSpending(wallet.id);
        load.push(performance.now() - started);
      }
      results[`  of which forSpending, ${count} UTXOs (in process)`] = stats(load);
    }

    // List with 100 pending PSBTs (on the 10,000-UTXO wallet).
    const body = JSON.stringify({ recipients: [{ address: external[0], amount: '0.004' }], fee_rate: '3' });
    for (let i = 0; i < 100; i++) {
      const answer = await fetch(`${api}/wallets/bench10k/psbt`, { method: 'POST', headers: auth, body });
      if (answer.status !== 201) throw new Error(`create for list: ${answer.status} ${await answer.text()}`);
    }
    const list = [];
    for (let i = 0; i < RUNS + 5; i++) {
      const started = performance.now();
      const answer = await fetch(`${api}/wallets/bench10k/psbt`, { headers: bearer });
      const listed = await answer.json();
      const elapsed = performance.now() - started;
      if (Object.keys(listed.result).length !== 100) throw new Error(`list: ${Object.keys(listed.result).length} PSBTs`);
      if (i >= 5) list.push(elapsed);
    }
    results['list, 100 pending PSBTs (10,000 UTXOs)'] = stats(list);
    console.log(JSON.stringify({ machine: `${cpus().length} cores, Node ${process.version}`, results }, null, 2));
  } finally {
    await running.close();
    rmSync(folder, { recursive: true, force: true });
  }
}

await main();
