/** Turns what a ChangeRecorder saw into the plain-data changeset the store persists. */
import { toStoredTransaction, type ChangeRecorder, type EngineState, type WalletState } from './state.js';
import type { EngineChangeset, StoredWalletSync, WalletChangeset } from './types.js';

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
