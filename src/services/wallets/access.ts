/**
 * Who may touch a wallet: the owner, and users it is shared with (`read` or `spend`). A wallet the caller
 * may not reach answers like one that does not exist.
 */
import type { Store, StoredWallet } from '../../store/repositories.js';
import { ServiceError } from '../errors.js';
import { requirePermission, walletInScope, type Permission } from '../permissions.js';
import type { Principal } from '../principal.js';

/** `read`: every GET; `spend`: also PSBT creation, update, broadcast; `owner`: manage the wallet itself. */
export type WalletAccessNeed = 'read' | 'spend' | 'owner';

export const WALLET_NOT_FOUND_MESSAGE = 'Wallet not found';
export const walletNotFound = () => new ServiceError('not_found', 'wallet_not_found', WALLET_NOT_FOUND_MESSAGE);

const ACCESS_RANK = { read: 1, spend: 2, owner: 3 } as const;

/** The token permission a use case needs unless it names another (PSBT signing and broadcast do). */
const PERMISSION_OF_NEED: Record<WalletAccessNeed, Permission> = { read: 'wallets:read', spend: 'psbt:create', owner: 'wallets:manage' };

export class WalletAccess {
  constructor(private readonly store: Store) {}

  /**
   * The wallet, when the caller has at least `need`; otherwise 404 `wallet_not_found` (also for a wallet
   * outside a narrowed token's list). A token without `permission` gets 403 `permission_missing` first.
   */
  async resolve(principal: Principal, alias: string, need: WalletAccessNeed, permission: Permission = PERMISSION_OF_NEED[need]): Promise<StoredWallet> {
    requirePermission(principal, permission);
    if (typeof alias !== 'string' || alias.length > 64) throw walletNotFound();
    const wallet = await this.store.wallets.findByAlias(alias);
    if (!wallet || !walletInScope(principal, wallet.id)) throw walletNotFound();
    const access = await this.accessOf(principal, wallet);
    if (access === null || ACCESS_RANK[access] < ACCESS_RANK[need]) throw walletNotFound();
    return wallet;
  }

  /** The wallet with the caller's access to it (at least `read`); otherwise 404 `wallet_not_found`. */
  async resolveWithAccess(principal: Principal, alias: string): Promise<{ wallet: StoredWallet; access: 'owner' | 'read' | 'spend' }> {
    const wallet = await this.resolve(principal, alias, 'read');
    const access = await this.accessOf(principal, wallet);
    if (access === null) throw walletNotFound(); // the share was removed between the two reads
    return { wallet, access };
  }

  private async accessOf(principal: Principal, wallet: StoredWallet): Promise<'owner' | 'read' | 'spend' | null> {
    if (wallet.ownerName === principal.userName) return 'owner';
    const share = (await this.store.wallets.shares(wallet.id)).find((s) => s.userName === principal.userName);
    return share?.access ?? null;
  }

  /** The wallets the caller may read (narrowed tokens: those of its list; 403 without `wallets:read`). */
  async readable(principal: Principal): Promise<StoredWallet[]> {
    requirePermission(principal, 'wallets:read');
    return this.reachable(principal);
  }

  /** One page of the wallets the caller may read, oldest first then by alias, and how many it may read in all. */
  async readablePage(principal: Principal, page: { limit?: number; offset?: number }): Promise<{ wallets: StoredWallet[]; total: number }> {
    requirePermission(principal, 'wallets:read');
    return this.store.wallets.listAccessiblePage(principal.userName, { ...page, ...(principal.walletIds !== undefined ? { walletIds: principal.walletIds } : {}) });
  }

  /** The id, alias and name of each wallet the caller reaches, as `reachable` lists them. */
  async reachableNames(principal: Principal): Promise<Array<{ id: string; alias: string; name: string }>> {
    return (await this.store.wallets.listAccessibleNames(principal.userName)).filter((w) => walletInScope(principal, w.id));
  }

  /** The wallets the caller reaches (its own, shared with it, within a narrowed token's list), whatever the permissions. */
  async reachable(principal: Principal): Promise<StoredWallet[]> {
    return (await this.store.wallets.listAccessible(principal.userName)).map((w) => w.wallet).filter((w) => walletInScope(principal, w.id));
  }
}
