import type { Permission } from './permissions.js';

/** The authenticated caller, as every use case sees it. */
export interface Principal {
  userName: string;
  isAdmin: boolean;
  /** Id of the token used, when the caller came with a Bearer token. */
  tokenId?: string;
  /** The permissions a narrowed token carries; absent: all of the user's rights. */
  permissions?: readonly Permission[];
  /** Ids of the wallets a narrowed token is limited to; absent: every wallet the user can reach. */
  walletIds?: readonly string[];
}
