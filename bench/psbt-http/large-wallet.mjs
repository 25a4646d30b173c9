// The large wallet of `run.mjs --large`: the fixture wpkh wallet with 200,000 confirmed transactions and
// 100,000 UTXOs, written as the sync writes them, and an in-process block source that extends its chain
// one block at a time (so the sync service can be timed on a new block touching the wallet).
import { sha256 } from '@noble/hashes/sha2.js';
import { toHex } from '../../dist/core/bytes.js';
import { BitcoindFollower } from '../../dist/chain/bitcoind/follower.js';
import { DescriptorDeriver, parseDescriptor } from '../../dist/core/descriptor/index.js';
import { NETWORKS } from '../../dist/core/network.js';
import { serializeTransaction, txid as txidOf } from '../../dist/core/tx.js';
import { fixtures } from '../wallet-bench-support.mjs';

const regtest = NETWORKS.regtest;
const receive = new DescriptorDeriver(parseDescriptor(fixtures.w_wpkh.recv_descriptor, regtest)).deriveRange(0, 40).map((d) => d.scriptPubKey);
const change = new DescriptorDeriver(parseDescriptor(fixtures.w_wpkh.change_descriptor, regtest)).deriveRange(0, 40).map((d) => d.scriptPubKey);
const payee = Uint8Array.from([0x00, 0x14, ...new Uint8Array(20).fill(9)]);
const payerChange = Uint8Array.from([0x00, 0x14, ...new Uint8Array(20).fill(7)]);
const enc = new TextEncoder();
const GENESIS_TIME = 1_700_000_000;

export const hashAt = (height) => toHex(sha256(enc.encode(`large wallet block ${height}`)));
const timeAt = (height) => GENESIS_TIME + height * 600;
const madeUpTxid = (seed) => toHex(sha256(enc.encode(`outside ${seed}`)));
const tx = (inputs, outputs) => ({
  version: 2,
  locktime: 0,
  inputs: inputs.map(({ txid, vout }) => ({ txid, vout, scriptSig: new Uint8Array(0), sequence: 0xfffffffd, witness: [new Uint8Array(71), new Uint8Array(33)] })),
  outputs,
});

/**
 * `payments` funding transactions (one coin each, to receive indexes 0..19, unspent) and a chain of `spends`
 * transactions each spending the wallet's previous change (to change indexes 0..19), from one seed payment:
 * payments + spends + 1 transactions, payments + 1 UTXOs. Ten of each per block; the tip is the last height.
 */
export function largeWalletRows(walletId, { payments, spends }) {
  const rows = [];
  let height = 1;
  const add = (t, h) => {
    const id = txidOf(t);
    rows.push({ walletId, txid: id, hex: toHex(serializeTransaction(t)), status: 'confirmed', blockHeight: h, blockHash: hashAt(h), blockTime: timeAt(h), firstSeen: timeAt(h), replaceable: false });
    return id;
  };
  let changeOut = { txid: add(tx([{ txid: madeUpTxid('seed'), vout: 0 }], [{ value: 2_000_000_000n, script: receive[0] }]), height), vout: 0 };
  let value = 2_000_000_000n;
  for (let k = 0; k < Math.max(payments, spends); k++) {
    height = 2 + Math.floor(k / 10);
    if (k < spends) {
      value -= 10_200n; // 10,000 paid, 200 fee
      changeOut = { txid: add(tx([changeOut], [{ value: 10_000n, script: payee }, { value, script: change[k % 20] }]), height), vout: 1 };
    }
    if (k < payments) {
      add(tx([{ txid: madeUpTxid(k), vout: 0 }], [{ value: 50_000n + BigInt((k * 37) % 20_000), script: receive[k % 20] }, { value: 1_000_000n, script: payerChange }]), height);
    }
  }
  return { rows, tip: { height, hash: hashAt(height) }, changeOut };
}

/** Writes the large wallet into the store as one first sync would (imported before, no chain rows yet). */
export async function fillLargeWallet(store, alias, sizes) {
  const wallet = await store.wallets.findByAlias(alias);
  const revision = await store.wallets.revision(wallet.id);
  const known = new Set((await store.wallets.chainRows(wallet.id)).addresses.map((a) => `${a.branch}/${a.index}`));
  const addressesAdded = [receive, change].flatMap((scripts, branch) =>
    scripts.map((script, index) => ({ walletId: wallet.id, branch, index, script: toHex(script) })).filter((a) => !known.has(`${a.branch}/${a.index}`)),
  );
  const { rows, tip } = largeWalletRows(wallet.id, sizes);
  await store.transaction((repos) =>
    repos.wallets.applyChange({ walletId: wallet.id, addressesAdded, transactionsAdded: rows, transactionsUpdated: [], transactionsRemoved: [], sync: { walletId: wallet.id, tip, lastUsedReceive: 19, lastUsedChange: 19 } }, revision),
  );
  return { wallet, tip, transactions: rows.length };
}

/**
 * A block source over the made-up chain up to `tip` (blocks below it are never fetched: the wallet is stored
 * at the tip), to which `mineBlock()` adds a block paying the wallet one coin, like the Bitcoin Core source.
 */
export function growingChain(tip) {
  const blocks = new Map(); // height -> block, for the mined ones
  let height = tip.height;
  const summary = (h) => ({ height: h, hash: hashAt(h), prevHash: hashAt(h - 1), time: timeAt(h), filter: null });
  const byHash = (hash) => {
    for (const b of blocks.values()) if (b.hash === hash) return b;
    throw new Error(`unknown block ${hash}`);
  };
  const source = {
    backend: 'bench',
    network: 'regtest',
    /** The stored wallet's tip: blocks up to it exist (and are never fetched). */
    setTip(stored) {
      height = stored.height;
    },
    mineBlock(seed) {
      height++;
      const payment = tx([{ txid: madeUpTxid(`new ${seed}`), vout: 0 }], [{ value: 80_000n, script: receive[seed % 20] }, { value: 500_000n, script: payerChange }]);
      const filler = Array.from({ length: 50 }, (_, i) => tx([{ txid: madeUpTxid(`filler ${seed}/${i}`), vout: 0 }], [{ value: 30_000n, script: payerChange }]));
      blocks.set(height, { ...summary(height), transactions: [...filler, payment] });
      return { height, hash: hashAt(height), paymentTxid: txidOf(payment) };
    },
    async getTip() { return { height, hash: hashAt(height) }; },
    async getBlockHash(h) { return hashAt(h); },
    async getBlock(hash) { return byHash(hash); },
    async getBlocks(hashes) { return hashes.map(byHash); },
    async getBlockHeader(hash) {
      const b = byHash(hash);
      return { hash, height: b.height, time: b.time, medianTime: b.time, prevHash: b.prevHash, confirmations: height - b.height + 1, inActiveChain: true };
    },
    async getBlockFilter() { return null; },
    async getBlockSummaries(from, to) {
      const out = [];
      for (let h = from; h <= Math.min(to, height); h++) out.push(summary(h));
      return out;
    },
    async getMempoolTxids() { return []; },
    async getMempool() { return []; },
    async mempoolTransactions() { return []; },
    async getMempoolEntry() { return null; },
    async broadcast() { throw new Error('no broadcast in the benchmark'); },
    async estimateFee() { return null; },
    async getRelayFees() { return { minRelaySatPerVb: 1, incrementalSatPerVb: 1, mempoolMinSatPerVb: 1 }; },
    async checkHealth() { return { ok: true, network: 'regtest', tip: { height, hash: hashAt(height) }, filters: false, nodeVersion: 'bench' }; },
    async verifyNetwork() {},
    async close() {},
  };
  // The Bitcoin Core follower reads blocks, summaries and the mempool: it follows this chain as it follows a node.
  source.follower = new BitcoindFollower(source);
  return source;
}
