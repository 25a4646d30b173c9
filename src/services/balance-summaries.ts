/**
 * Each wallet's balances at one stored revision, kept in the process so that a page of the wallet list needs no
 * wallet's state: the sync notes them for every revision it writes (its engine holds every wallet it follows), the
 * reads for every revision they load. A summary is used only for the revision it was counted at: a wallet
 * written since (by another instance, a rescan) is loaded as before, so the list never shows a balance that its
 * stored rows do not give.
 */
import { balancesOf, type EngineState, type WalletBalances } from '../engine/index.js';

/** Past this many transactions a wallet's balances are not counted at each write of the sync (its reads count them). */
const COUNTED_TRANSACTIONS_MAX = 2_000;

interface Summary {
  revision: number;
  balances: WalletBalances;
  /** The wallet tip's height, when the sync counted them (a tip going back may make a coinbase immature again). */
  tipHeight?: number;
}

export class BalanceSummaries {
  private readonly byWallet = new Map<string, Summary>();

  /** The wallet's balances at `revision`, when known. */
  at(walletId: string, revision: number): WalletBalances | undefined {
    const summary = this.byWallet.get(walletId);
    return summary?.revision === revision ? summary.balances : undefined;
  }

  note(walletId: string, revision: number, balances: WalletBalances, tipHeight?: number): void {
    const known = this.byWallet.get(walletId);
    if (!known || known.revision <= revision) this.byWallet.set(walletId, { revision, balances, tipHeight });
  }

  /**
   * After the sync wrote the wallet at `revision` from `state`: its balances then. `previous` is the revision the
   * write replaced, `touchedTransactions` whether it changed any transaction row: a write that only moved the tip
   * forward keeps the balances, unless a coinbase is still maturing.
   */
  noteWritten(state: EngineState, walletId: string, previous: number, revision: number, touchedTransactions: boolean): void {
    const wallet = state.wallets.get(walletId);
    if (!wallet) return;
    const tipHeight = wallet.tip?.height ?? -1;
    const before = this.byWallet.get(walletId);
    if (!touchedTransactions && before?.revision === previous && before.balances.immature === 0n && before.tipHeight !== undefined && tipHeight >= before.tipHeight) {
      this.note(walletId, revision, before.balances, tipHeight);
    } else if (wallet.txs.size <= COUNTED_TRANSACTIONS_MAX) {
      this.note(walletId, revision, balancesOf(state, walletId), tipHeight);
    } else {
      this.byWallet.delete(walletId);
    }
  }

  /** The sync's wallet as loaded from its rows at `revision`. */
  noteLoaded(state: EngineState, walletId: string, revision: number): void {
    const wallet = state.wallets.get(walletId);
    if (wallet && wallet.txs.size <= COUNTED_TRANSACTIONS_MAX) this.note(walletId, revision, balancesOf(state, walletId), wallet.tip?.height ?? -1);
  }

  forget(walletId: string): void {
    this.byWallet.delete(walletId);
  }
}
