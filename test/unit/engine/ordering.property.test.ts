/**
 * Property: however the transactions of the final chain (and the replaced / double-spent ones) show up in
 * the mempool before their blocks (any subset, any order, seen, gone, seen again), the engine never counts a
 * coin twice, balances always equal the sum of the UTXOs, and after the last block and mempool it agrees
 * with Bitcoin Core's final snapshot exactly.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { isCoinbase, parseTransaction, txid as computeTxid, type Transaction } from '../../../src/core/tx.js';
import {
  applyUpdate,
  getBalances,
  listTransactions,
  listUnspent,
  type EngineState,
  type MempoolEntry,
} from '../../../src/engine/index.js';
import { expectBalancesAndUtxos } from './support/expected.js';
import { FIXTURE_WALLET_IDS } from './support/fixture-wallets.js';
import { allUpdates, applyAndPersist, blockByHash, connected, freshEngine, mempoolOf, restoredEngine, timeline, type MemoryRowStore } from './support/replay.js';
import { hexOf, type WalletConfig } from '../../../src/engine/index.js';

const FIRST_HEIGHT = 121;
const finalSnapshot = timeline.snapshots[timeline.snapshots.length - 1];
const finalChain: string[] = finalSnapshot.chain;
const withId = (tx: Transaction) => ({ tx, txid: computeTxid(tx) });

/** Transactions that may be seen in the mempool: the final chain's, plus those that never confirm there. */
const staleX = blockByHash(timeline.snapshots[6].chain[130]).transactions.filter((t) => !isCoinbase(t)).map(withId);
const replacedOriginal = timeline.snapshots[8].mempool.map((m: any) => withId(parseTransaction(m.hex)));
const finalMempool = finalSnapshot.mempool.map((m: any) => withId(parseTransaction(m.hex)));
const blockTxs = (height: number) => blockByHash(finalChain[height]!).transactions.filter((t) => !isCoinbase(t)).map(withId);

const key = (txid: string, vout: number) => `${txid}:${vout}`;

/** Keeps, in pick order, only transactions a node's mempool could hold together on top of `confirmed`. */
function consistentMempool(picks: { tx: Transaction; txid: string }[], confirmed: Set<string>, spent: Set<string>) {
  const kept: { tx: Transaction; txid: string }[] = [];
  const keptIds = new Set<string>();
  const keptSpent = new Set<string>();
  for (const p of picks) {
    if (keptIds.has(p.txid) || confirmed.has(p.txid)) continue;
    const ok = p.tx.inputs.every((i) => {
      const k = key(i.txid, i.vout);
      return !spent.has(k) && !keptSpent.has(k) && (confirmed.has(i.txid) || keptIds.has(i.txid));
    });
    if (!ok) continue;
    kept.push(p);
    keptIds.add(p.txid);
    for (const i of p.tx.inputs) keptSpent.add(key(i.txid, i.vout));
  }
  return kept;
}

function checkInvariants(state: EngineState): void {
  for (const walletId of FIXTURE_WALLET_IDS) {
    const balances = getBalances(state, walletId);
    const utxos = listUnspent(state, walletId);
    expect(utxos.reduce((s, u) => s + u.valueSat, 0n)).toBe(balances.confirmed + balances.unconfirmed);
    const outpoints = utxos.map((u) => key(u.txid, u.vout));
    expect(new Set(outpoints).size).toBe(outpoints.length);
    const spentByActive = new Set<string>();
    for (const entry of listTransactions(state, walletId)) {
      if (entry.status === 'dropped' || entry.coinbase) continue;
      for (const input of parseTransaction(hexOf(entry)).inputs) {
        const k = key(input.txid, input.vout);
        expect(spentByActive.has(k), `${walletId}: ${k} spent twice`).toBe(false);
        spentByActive.add(k);
      }
    }
    for (const o of outpoints) expect(spentByActive.has(o), `${walletId}: ${o} is spent yet unspent`).toBe(false);
  }
}

describe('engine under any mempool / block ordering', () => {
  let base: { store: MemoryRowStore; configs: WalletConfig[]; confirmed: Set<string>; spent: Set<string> };
  beforeAll(() => {
    // The state at snapshot 0 (tip 120, empty mempool), stored once and restored for every run.
    const engine = freshEngine();
    for (const { update, snapshotDone } of allUpdates()) {
      applyAndPersist(engine.state, engine.store, update);
      if (snapshotDone === 0) break;
    }
    const confirmed = new Set<string>();
    const spent = new Set<string>();
    for (let h = 0; h < FIRST_HEIGHT; h++) {
      for (const tx of blockByHash(finalChain[h]!).transactions) {
        confirmed.add(computeTxid(tx));
        for (const i of tx.inputs) spent.add(key(i.txid, i.vout));
      }
    }
    base = { store: engine.store, configs: engine.configs, confirmed, spent };
  });

  const sighting = fc.record({ picks: fc.array(fc.nat(), { maxLength: 14 }), reverse: fc.boolean() });
  const schedule = fc.array(fc.array(sighting, { maxLength: 3 }), { minLength: finalChain.length - FIRST_HEIGHT, maxLength: finalChain.length - FIRST_HEIGHT });

  it('never counts a coin twice and ends where Core ended', () => {
    fc.assert(
      fc.property(schedule, (perBlock) => {
        const state = restoredEngine(base.store, base.configs);
        const confirmed = new Set(base.confirmed);
        const spent = new Set(base.spent);
        let time = 1_800_000_000;
        perBlock.forEach((sightings, offset) => {
          const height = FIRST_HEIGHT + offset;
          const pool = [...Array.from({ length: finalChain.length - height }, (_, k) => blockTxs(height + k)).flat(), ...staleX, ...replacedOriginal, ...finalMempool];
          for (const { picks, reverse } of sightings) {
            const kept = consistentMempool(picks.map((p) => pool[p % pool.length]!), confirmed, spent);
            if (reverse) kept.reverse(); // children before parents: the engine must order them itself
            const transactions: MempoolEntry[] = kept.map((k) => ({ tx: k.tx, time: time++ }));
            applyUpdate(state, { type: 'mempool', transactions });
            checkInvariants(state);
          }
          applyUpdate(state, connected(finalChain[height]!));
          for (const tx of blockByHash(finalChain[height]!).transactions) {
            confirmed.add(computeTxid(tx));
            for (const i of tx.inputs) spent.add(key(i.txid, i.vout));
          }
          checkInvariants(state);
        });
        applyUpdate(state, mempoolOf(finalSnapshot));
        checkInvariants(state);
        for (const walletId of FIXTURE_WALLET_IDS) expectBalancesAndUtxos(state, walletId, finalSnapshot.expected[walletId]);
      }),
      { numRuns: 40 },
    );
  });
});
