/**
 * Coinbase maturity and stale coinbases, on the fixture's real blocks: a wallet watching the miner's address
 * (every block of the timeline pays its subsidy there). Core's wallet spends a coinbase from 101 confirmations.
 */
import { describe, expect, it } from 'vitest';
import { decodeAddress } from '../../../src/core/address.js';
import { equalBytes } from '../../../src/core/bytes.js';
import { NETWORKS } from '../../../src/core/network.js';
import { isCoinbase, txid } from '../../../src/core/tx.js';
import {
  addWallet,
  applyUpdate,
  createEngineState,
  getBalances,
  listTransactions,
  listUnspent,
  type ScriptDeriver,
} from '../../../src/engine/index.js';
import { blockByHash, timeline, updatesTo } from './support/replay.js';

const BTC = 100_000_000n;
const minerScript = decodeAddress(timeline.addresses.miner, NETWORKS.regtest);
/** Receive index 0 is the miner's script; every other index an OP_RETURN no block pays. */
const minerDeriver: ScriptDeriver = (branch, from, count) =>
  Array.from({ length: count }, (_, i) => (branch === 0 && from + i === 0 ? minerScript : Uint8Array.of(0x6a, 0x03, 0xee, branch, from + i)));

function minerAt(snapshotIndex: number) {
  const state = createEngineState();
  addWallet(state, { walletId: 'miner', gapLimit: 5, derive: minerDeriver });
  let chain: string[] = [];
  for (let i = 0; i <= snapshotIndex; i++) {
    for (const update of updatesTo(chain, i)) applyUpdate(state, update);
    chain = timeline.snapshots[i].chain;
  }
  return state;
}

const coinbaseTxid = (height: number, chainOf = 10) => txid(blockByHash(timeline.snapshots[chainOf].chain[height]).transactions[0]!);

describe('coinbase outputs', () => {
  it('are immature below 101 confirmations and spendable from 101 (tip 120: heights 1-20 mature)', () => {
    const state = minerAt(0);
    expect(getBalances(state, 'miner')).toEqual({ confirmed: 20n * 50n * BTC, unconfirmed: 0n, immature: 100n * 50n * BTC });
    const utxos = listUnspent(state, 'miner');
    expect(utxos).toHaveLength(20);
    expect(utxos.every((u) => u.coinbase && u.confirmations >= 101 && u.safe)).toBe(true);
    const outpoints = utxos.map((u) => u.txid);
    expect(outpoints).toContain(coinbaseTxid(20)); // 101 confirmations
    expect(outpoints).not.toContain(coinbaseTxid(21)); // 100 confirmations
    const entry = listTransactions(state, 'miner').find((e) => e.txid === coinbaseTxid(21))!;
    expect(entry).toMatchObject({ coinbase: true, category: 'receive', confirmations: 100, feeSat: null });
  });

  it('of a block that a reorg disconnects disappear, with anything spending them', () => {
    const stale = blockByHash(timeline.snapshots[6].chain[130]);
    const staleCoinbase = txid(stale.transactions.find(isCoinbase)!);
    const before = minerAt(6);
    expect(listTransactions(before, 'miner').map((e) => e.txid)).toContain(staleCoinbase);
    const immatureBefore = getBalances(before, 'miner').immature;

    const after = minerAt(7);
    const txids = listTransactions(after, 'miner').map((e) => e.txid);
    expect(txids).not.toContain(staleCoinbase);
    expect(txids).toContain(coinbaseTxid(130, 7));
    expect(txids).toContain(coinbaseTxid(131, 7));
    // Two new coinbases replace one stale one; each carries the subsidy plus its block's fees.
    const newCoinbases = [130, 131].map((h) => blockByHash(timeline.snapshots[7].chain[h]).transactions[0]!);
    const paid = (tx: (typeof newCoinbases)[number]) =>
      tx.outputs.filter((o) => equalBytes(o.script, minerScript)).reduce((s, o) => s + o.value, 0n);
    const staleReward = paid(stale.transactions[0]!);
    // Coinbases reaching 101 confirmations move from immature to confirmed as blocks come.
    const matured = paid(blockByHash(timeline.snapshots[7].chain[31]).transactions[0]!);
    expect(getBalances(after, 'miner').immature).toBe(immatureBefore - staleReward + paid(newCoinbases[0]!) + paid(newCoinbases[1]!) - matured);
  });
});
