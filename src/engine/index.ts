/**
 * The wallet engine: deterministic wallet state from chain updates, no I/O.
 *
 *   const state = createEngineState();
 *   persist(addWallet(state, { walletId, gapLimit, derive }, storedRowsOrUndefined));
 *   persist(applyUpdate(state, { type: 'block_connected', ... }));
 *   getBalances(state, walletId); listUnspent(state, walletId); listTransactions(state, walletId);
 */
export { applyUpdate, type ApplyOptions } from './apply.js';
export { EngineError } from './errors.js';
export { emptyEngineState as createEngineState, type EngineState } from './state.js';
export { COINBASE_MATURITY_CONFIRMATIONS, getBalances, listTransactions, listUnspent, walletSummary, type WalletSummary } from './views.js';
export { addWallet, removeWallet } from './wallets.js';
export * from './types.js';
