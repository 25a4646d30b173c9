/**
 * Taking unconfirmed transactions out of play: a transaction that left the mempool, was double-spent by a
 * block, or came from a disconnected coinbase. Its descendants go with it. A transaction that spent none of
 * the wallet's coins is forgotten (it never paid the wallet); one that did is kept as `dropped` history.
 */
import { paysWallet, setStatus, deleteTx, spendersOf, type ChangeRecorder, type EngineState, type WalletState } from './state.js';

/** True if the transaction spends at least one output this wallet owns. */
export function spendsWalletCoins(wallet: WalletState, txid: string): boolean {
  const tracked = wallet.txs.get(txid);
  if (!tracked || tracked.coinbase) return false;
  return tracked.tx.inputs.some((input) => paysWallet(wallet.txs.get(input.txid), input.vout));
}

export function dropTx(state: EngineState, wallet: WalletState, txid: string, recorder: ChangeRecorder): void {
  const tracked = wallet.txs.get(txid);
  if (!tracked || tracked.status === 'confirmed') return;
  // Children first, while this transaction's outputs still tell which of their inputs were ours.
  for (let vout = 0; vout < tracked.tx.outputs.length; vout++) {
    for (const child of spendersOf(wallet, txid, vout)) dropTx(state, wallet, child, recorder);
  }
  if (!spendsWalletCoins(wallet, txid)) {
    deleteTx(state, wallet, txid);
    recorder.txRemoved(wallet.walletId, txid, tracked);
    return;
  }
  if (tracked.status === 'dropped') return;
  setStatus(wallet, tracked, 'dropped');
  tracked.replaceable = null;
  recorder.txUpdated(wallet.walletId, txid);
}
