/**
 * Why the chain source refuses to follow a wallet (an Electrum server's history too large), as the sync found it
 * last: told by the sync, cleared once it follows the wallet again, read by the wallet details' `scan`. Kept in
 * memory by the instance that follows the wallet.
 */
import { ChainError, type ChainLog } from '../../chain/types.js';

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

/**
 * The sync's side of refusals: a wallet the chain source refused is followed in a group of its own from then on, so
 * the wallets that stood with it go on; one refused during a pass is left alone until the next pass. Each refusal is
 * logged once per wallet and reason, and told to `WalletRefusals` for the wallet's details.
 */
export class SourceRefusals {
  private readonly reasons = new Map<string, string>();
  private inPass = new Set<string>();

  constructor(
    private readonly told: WalletRefusals | undefined,
    private readonly log: ChainLog | undefined,
  ) {}

  newPass(): void {
    this.inPass = new Set();
  }

  /** Refused during this pass: the pass leaves it alone. */
  refusedInPass(walletId: string): boolean {
    return this.inPass.has(walletId);
  }

  /** Refused once: followed in a group of its own. */
  followedAlone(walletId: string): boolean {
    return this.reasons.has(walletId);
  }

  /** True when `error` is the source refusing to follow these wallets; they wait for the next pass. */
  refused(walletIds: readonly string[], error: unknown): boolean {
    if (!(error instanceof ChainError) || error.code !== 'history_too_large') return false;
    this.told?.note(walletIds, error);
    for (const id of walletIds) {
      this.inPass.add(id);
      if (this.reasons.get(id) === error.message) continue;
      this.reasons.set(id, error.message);
      this.log?.('warn', 'the chain source refuses to follow a wallet; the other wallets go on', { wallet: id, reason: error.message, server: error.reason });
    }
    return true;
  }

  /** The source followed these wallets. */
  served(walletIds: readonly string[]): void {
    this.told?.clear(walletIds);
    for (const id of walletIds) {
      if (this.reasons.delete(id)) this.log?.('info', 'the chain source follows the wallet again', { wallet: id });
    }
  }
}
