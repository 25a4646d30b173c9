/**
 * What one user may make the service hold: at most `max_wallets_per_user` wallets of their own,
 * each with a gap limit of at most `max_gap_limit`. Checked before a wallet is created or its gap limit
 * raised; a refusal changes nothing.
 */
import type { Store } from '../store/repositories.js';
import { ServiceError } from './errors.js';
import { requirePermission } from './permissions.js';
import type { Principal } from './principal.js';
import { checkGapLimitWithin } from './wallet-input.js';

export interface WalletLimitsDeps {
  store: Store;
  maxWalletsPerUser: number;
  maxGapLimit: number;
}

export class WalletLimits {
  constructor(private readonly deps: WalletLimitsDeps) {}

  checkGapLimit(gapLimit: unknown): void {
    checkGapLimitWithin(gapLimit, this.deps.maxGapLimit);
  }

  async checkCreate(principal: Principal, input: { gap_limit?: unknown }): Promise<void> {
    requirePermission(principal, 'wallets:manage');
    this.checkGapLimit(input.gap_limit);
    const max = this.deps.maxWalletsPerUser;
    const owned = await this.deps.store.wallets.countOwned(principal.userName);
    if (owned >= max) {
      throw new ServiceError('unprocessable', 'too_many_wallets', `A user may own at most ${max} wallets on this service; delete one to create another`);
    }
  }
}
