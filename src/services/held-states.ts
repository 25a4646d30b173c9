/**
 * The engine states of one service that hold wallets: the sync's (all the wallets it follows) and the reads' (one
 * per wallet read). A load of stored rows takes from them the transactions they hold as stored (same txid and
 * hex) and shares their hex, scripts, values and inputs instead of parsing a copy (docs/adr/0018). Held weakly:
 * a state its owner drops is freed, and with the last state holding a transaction, what they shared.
 */
import { isHexOfBinary } from '../core/bytes.js';
import type { EngineState, StoredTransaction, TrackedTx, WalletState } from '../engine/index.js';

export class HeldStates {
  private refs: WeakRef<EngineState>[] = [];
  private readonly known = new WeakSet<EngineState>();

  /** Notes a state holding wallets (once per state, whatever the number of wallets loaded into it). */
  add(state: EngineState): void {
    if (this.known.has(state)) return;
    this.known.add(state);
    this.refs = this.refs.filter((ref) => ref.deref() !== undefined);
    this.refs.push(new WeakRef(state));
  }

  /** The wallet as each live state holds it now. */
  walletsOf(walletId: string): WalletState[] {
    const wallets: WalletState[] = [];
    for (const ref of this.refs) {
      const wallet = ref.deref()?.wallets.get(walletId);
      if (wallet) wallets.push(wallet);
    }
    return wallets;
  }
}

/** The transaction of `row` as one of `wallets` holds it, if with the row's hex (what the store holds). */
export function heldAsStored(wallets: readonly WalletState[], row: StoredTransaction): TrackedTx | undefined {
  for (const wallet of wallets) {
    const held = wallet.txs.get(row.txid);
    if (held && isHexOfBinary(row.hex, held.raw)) return held;
  }
  return undefined;
}
