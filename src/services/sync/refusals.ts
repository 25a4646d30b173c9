/**
 * Why the chain source refuses to follow a wallet (an Electrum server's history too large), as the sync found it
 * last: told by the sync, cleared once it follows the wallet again, read by the wallet details' `scan`. Kept in
 * memory by the instance that follows the wallet.
 */
import { ChainError } from '../../chain/types.js';

export interface WalletRefusal {
  code: 'history_too_large';
  message: string;
}

export class WalletRefusals {
  private readonly byWallet = new Map<string, WalletRefusal>();

  /** Records the refusal `error` for the wallets when it is one the wallets should show; true if it is. */
  note(walletIds: readonly string[], error: unknown): boolean {
    if (!(error instanceof ChainError) || error.code !== 'history_too_large') return false;
    for (const id of walletIds) this.byWallet.set(id, { code: error.code, message: error.message });
    return true;
  }

  clear(walletIds: Iterable<string>): void {
    for (const id of walletIds) this.byWallet.delete(id);
  }

  of(walletId: string): WalletRefusal | undefined {
    return this.byWallet.get(walletId);
  }
}
