/** Turns what a ChangeRecorder saw into the plain-data changeset the store persists. */
import { toStoredTransaction, type ChangeRecorder, type EngineState, type WalletState } from './state.js';
import type { EngineChangeset, StoredTransaction, StoredWalletSync, WalletChangeset } from './types.js';

export function syncRow(wallet: WalletState): StoredWalletSync {
  return {
    walletId: wallet.walletId,
    tip: wallet.tip ? { ...wallet.tip } : null,
    lastUsedReceive: wallet.lastUsed[0],
    lastUsedChange: wallet.lastUsed[1],
  };
}

const sorted = (ids: Set<string> | undefined): string[] => [...(ids ?? [])].sort();

export function buildChangeset(state: EngineState, wallets: WalletState[], recorder: ChangeRecorder): EngineChangeset {
  const result: WalletChangeset[] = [];
  for (const wallet of wallets) {
    const id = wallet.walletId;
    if (state.wallets.get(id) !== wallet) continue;
    const rows = (ids: Set<string> | undefined) => sorted(ids).map((txid) => toStoredTransaction(id, wallet.txs.get(txid)!));
    const change: WalletChangeset = {
      walletId: id,
      addressesAdded: recorder.addresses.get(id) ?? [],
      transactionsAdded: rows(recorder.added.get(id)),
      transactionsUpdated: rows(recorder.updated.get(id)),
      transactionsRemoved: sorted(recorder.removed.get(id)),
      sync: syncRow(wallet),
    };
    const empty =
      !recorder.syncChanged.has(id) &&
      change.addressesAdded.length + change.transactionsAdded.length + change.transactionsUpdated.length + change.transactionsRemoved.length === 0;
    if (!empty) result.push(change);
  }
  return { wallets: result };
}

type TxChange = { kind: 'added' | 'updated'; row: StoredTransaction } | { kind: 'removed' };

/**
 * One changeset of a wallet equal to writing `earlier` and then `later`: a transaction added and then removed
 * was never written, one removed and then added again replaces the stored row, and the sync row is the later one.
 */
export function mergeWalletChangesets(earlier: WalletChangeset, later: WalletChangeset): WalletChangeset {
  if (earlier.walletId !== later.walletId) throw new Error('Changesets of two wallets cannot be merged');
  const laterRows = later.addressesAdded.length + later.transactionsAdded.length + later.transactionsUpdated.length + later.transactionsRemoved.length;
  if (laterRows === 0) return { ...earlier, sync: later.sync }; // most blocks only move the tip
  const txs = new Map<string, TxChange>();
  const record = (change: WalletChangeset) => {
    for (const row of change.transactionsAdded) txs.set(row.txid, { kind: txs.get(row.txid)?.kind === 'removed' ? 'updated' : 'added', row });
    for (const row of change.transactionsUpdated) txs.set(row.txid, { kind: txs.get(row.txid)?.kind === 'added' ? 'added' : 'updated', row });
    for (const txid of change.transactionsRemoved) {
      if (txs.get(txid)?.kind === 'added') txs.delete(txid);
      else txs.set(txid, { kind: 'removed' });
    }
  };
  record(earlier);
  record(later);
  const rows = (kind: 'added' | 'updated') =>
    [...txs.values()].flatMap((c) => (c.kind === kind ? [c.row] : [])).sort((a, b) => (a.txid < b.txid ? -1 : a.txid > b.txid ? 1 : 0));
  return {
    walletId: later.walletId,
    addressesAdded: [...earlier.addressesAdded, ...later.addressesAdded],
    transactionsAdded: rows('added'),
    transactionsUpdated: rows('updated'),
    transactionsRemoved: [...txs].flatMap(([txid, c]) => (c.kind === 'removed' ? [txid] : [])).sort(),
    sync: later.sync,
  };
}
