/** Turns what a ChangeRecorder saw into the plain-data changeset the store persists. */
import { toStoredTransaction, type ChangeRecorder, type EngineState, type WalletState } from './state.js';
import type { EngineChangeset, StoredAddress, StoredTransaction, StoredWalletSync, WalletChangeset } from './types.js';

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
    const empty = !recorder.syncChanged.has(id) && changedRows(change) === 0;
    if (!empty) result.push(change);
  }
  return { wallets: result };
}

/** Rows a changeset writes: addresses and transactions (the sync row aside). */
export const changedRows = (change: WalletChangeset): number =>
  change.addressesAdded.length + change.transactionsAdded.length + change.transactionsUpdated.length + change.transactionsRemoved.length;

type TxChange = { kind: 'added' | 'updated'; row: StoredTransaction } | { kind: 'removed' };

/**
 * Successive changesets of one wallet gathered into the one changeset equal to writing them in order: a
 * transaction added and then removed is never written, one removed and then added again replaces the stored
 * row, and the sync row is the last one. Each change costs its own rows, whatever was gathered before.
 */
export class PendingWalletChange {
  private readonly addresses: StoredAddress[] = [];
  private readonly txs = new Map<string, TxChange>();
  private sync: StoredWalletSync;

  constructor(readonly walletId: string, first: WalletChangeset) {
    this.sync = first.sync;
    this.add(first);
  }

  /** Rows the gathered changeset holds. */
  get rows(): number {
    return this.addresses.length + this.txs.size;
  }

  add(change: WalletChangeset): void {
    if (change.walletId !== this.walletId) throw new Error('Changesets of two wallets cannot be merged');
    this.sync = change.sync;
    this.addresses.push(...change.addressesAdded);
    const { txs } = this;
    for (const row of change.transactionsAdded) txs.set(row.txid, { kind: txs.get(row.txid)?.kind === 'removed' ? 'updated' : 'added', row });
    for (const row of change.transactionsUpdated) txs.set(row.txid, { kind: txs.get(row.txid)?.kind === 'added' ? 'added' : 'updated', row });
    for (const txid of change.transactionsRemoved) {
      if (txs.get(txid)?.kind === 'added') txs.delete(txid);
      else txs.set(txid, { kind: 'removed' });
    }
  }

  changeset(): WalletChangeset {
    const rows = (kind: 'added' | 'updated') =>
      [...this.txs.values()].flatMap((c) => (c.kind === kind ? [c.row] : [])).sort((a, b) => (a.txid < b.txid ? -1 : a.txid > b.txid ? 1 : 0));
    return {
      walletId: this.walletId,
      addressesAdded: [...this.addresses],
      transactionsAdded: rows('added'),
      transactionsUpdated: rows('updated'),
      transactionsRemoved: [...this.txs].flatMap(([txid, c]) => (c.kind === 'removed' ? [txid] : [])).sort(),
      sync: this.sync,
    };
  }
}
