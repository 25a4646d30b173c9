/**
 * The wallet engine: wallet state from chain updates, deterministic and free of I/O.
 *
 *   const state = createEngineState();
 *   persist(addWallet(state, { walletId, gapLimit, derive }));            // new wallet: first scripts
 *   persist(addWallet(state, { walletId, gapLimit, derive }, storedRows)); // after a restart: no rescan
 *   persist(applyUpdate(state, { type: 'block_connected', ... }));        // and block_disconnected, mempool
 *   persist(watchRevealed(state, walletId, lastRevealedReceive));         // receive addresses handed out
 *   getBalances(state, id); listUnspent(state, id); listTransactions(state, id); walletSummary(state, id);
 *
 * Each changeset is plain data to write in one store transaction: insert `addressesAdded` and
 * `transactionsAdded`, replace `transactionsUpdated` by (walletId, txid), delete `transactionsRemoved`,
 * replace the wallet's `sync` row. The stored rows of a wallet (its sync row, all its address rows, all its
 * transaction rows, and the last receive index handed out) are all `addWallet` needs to rebuild the same
 * state; every index is derived from them. The last revealed receive index is kept by whoever hands out
 * addresses, never by a changeset; pass its newest value with `watchRevealed` before each update.
 * `applyUpdate` changes the state in place: if it throws, or persisting fails, rebuild from the store.
 *
 * Semantics follow Bitcoin Core's descriptor wallet: `confirmed` = getbalances `trusted`, `unconfirmed` =
 * `untrusted_pending`, `immature` = coinbases below 101 confirmations; listUnspent = `listunspent 0`.
 * One deliberate difference: a transaction that leaves the mempool without a known conflict (evicted,
 * expired) is dropped and its inputs count as unspent again, as Core does only after `abandontransaction`.
 */
export { applyUpdate, type ApplyOptions } from './apply.js';
export { changedRows, PendingWalletChange } from './changeset.js';
export { EngineError } from './errors.js';
export { gapAheadOf, type GapAhead } from './gap-ahead.js';
export { emptyEngineState as createEngineState, hexOf, stateOfWallet, type EngineState, type TrackedTx, type WalletState } from './state.js';
export {
  COINBASE_MATURITY_CONFIRMATIONS,
  coinHistory,
  getBalances,
  listTransactions,
  selectTransactions,
  listUnspent,
  newestFirst,
  scriptOwner,
  walletSummary,
  type CoinHistory,
  type CoinTx,
  type WalletSummary,
} from './views.js';
export {
  addWallet,
  addWalletInParts,
  applyStoredChanges,
  parseStoredTransaction,
  parseStoredTransactions,
  removeWallet,
  watchRevealed,
  type AppliedChanges,
  type BlocksSeen,
  type ParsedChanges,
  type ParsedStoredTransaction,
  type ParsedWalletRows,
  type StoredChanges,
} from './wallets.js';
export { balancesOf, entryAtTip, utxoAtTip, WalletListCache, type WalletListsAtTip } from './list-cache.js';
export * from './types.js';
