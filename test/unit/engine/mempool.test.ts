/**
 * Mempool departures on the fixture's BIP125 transactions: a transaction that leaves the mempool without a
 * replacement frees the coins it spent (it is kept as `dropped` history), and counts again if it comes back.
 */
import { describe, expect, it } from 'vitest';
import { applyUpdate, getBalances, listTransactions, listUnspent } from '../../../src/engine/index.js';
import { allUpdates, applyAndPersist, freshEngine, mempoolOf, timeline } from './support/replay.js';

const ORIGINAL = '79a09163dcf1550839f3f652848bec2da74000e447386580b66dc77250574830';

function atSnapshot(index: number) {
  const engine = freshEngine();
  for (const { update, snapshotDone } of allUpdates()) {
    applyAndPersist(engine.state, engine.store, update);
    if (snapshotDone === index) break;
  }
  return engine.state;
}

describe('mempool departures', () => {
  it('an evicted own payment frees its coins and drops its change; seen again, it counts again', () => {
    const state = atSnapshot(8);
    const pendingBalance = getBalances(state, 'w_wpkh');
    expect(pendingBalance.confirmed).toBe(139_998_870n); // own change of the pending payment is trusted

    const changeset = applyUpdate(state, { type: 'mempool', transactions: [] });
    const wpkh = changeset.wallets.find((w) => w.walletId === 'w_wpkh')!;
    expect(wpkh.transactionsUpdated).toEqual([expect.objectContaining({ txid: ORIGINAL, status: 'dropped', replaceable: null })]);
    expect(getBalances(state, 'w_wpkh')).toEqual({ confirmed: 159_999_091n, unconfirmed: 0n, immature: 0n });
    expect(listUnspent(state, 'w_wpkh').map((u) => u.txid)).not.toContain(ORIGINAL);
    expect(listTransactions(state, 'w_wpkh').find((e) => e.txid === ORIGINAL)).toMatchObject({ status: 'dropped', conflicts: [], confirmations: 0 });

    applyUpdate(state, mempoolOf(timeline.snapshots[8]));
    expect(getBalances(state, 'w_wpkh')).toEqual(pendingBalance);
    expect(listTransactions(state, 'w_wpkh').find((e) => e.txid === ORIGINAL)).toMatchObject({ status: 'mempool', replaceable: 'yes' });
  });

  it('an incoming payment that leaves the mempool is forgotten: it never paid the wallet', () => {
    const state = atSnapshot(10);
    expect(getBalances(state, 'w_tr').unconfirmed).toBe(44_000_000n);
    const changeset = applyUpdate(state, { type: 'mempool', transactions: [] });
    const incoming = timeline.snapshots[10].mempool[0].txid;
    for (const walletId of ['w_tr', 'w_wsh2of3']) {
      expect(changeset.wallets.find((w) => w.walletId === walletId)!.transactionsRemoved).toEqual([incoming]);
      expect(getBalances(state, walletId).unconfirmed).toBe(0n);
      expect(listTransactions(state, walletId).map((e) => e.txid)).not.toContain(incoming);
    }
  });
});
