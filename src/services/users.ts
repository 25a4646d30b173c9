/** User accounts: first-start admin, adding, password changes and deletion (which revoke tokens). */
import { generatePassword, type PasswordHasher } from '../auth/passwords.js';
import { StoreConflictError, type Store } from '../store/repositories.js';
import { ServiceError, invalidField } from './errors.js';

export const ADMIN_USER = 'admin';
/** The end of the refusal to delete a user who owns wallets (the CLI names its own options instead). */
export const OWNS_WALLETS_HINT = 'transfer them to another user or delete them with the user';
const USER_NAME = /^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$/;
const PASSWORD_MAX_CHARS = 1024;

export interface UserSummary {
  name: string;
  isAdmin: boolean;
  createdAt: number;
}

export type BootstrapResult =
  | { created: false }
  | { created: true; userName: string; generatedPassword: string | undefined };

/** What happens to the wallets a deleted user owns. */
export type DeleteUserWallets = { action: 'refuse' } | { action: 'transfer'; to: string } | { action: 'delete' };

export interface DeleteUserOptions {
  /** Default: refuse when the user owns wallets. */
  wallets?: DeleteUserWallets;
}

/** What a user deletion removed or moved. */
export interface DeletedUser {
  name: string;
  tokens: number;
  /** Shares of other owners' wallets the user had. */
  sharesRemoved: number;
  walletsDeleted: string[];
  /** PSBTs (with their collected signatures) of the deleted wallets. */
  psbtsDeleted: number;
  walletsTransferred: string[];
  transferredTo?: string;
  /** The user's webhooks, removed with their delivery logs. */
  webhooks: number;
}

export interface UserServiceDeps {
  store: Store;
  hasher: PasswordHasher;
  passwordMinChars: number;
  now: () => number;
}

export class UserService {
  constructor(private readonly deps: UserServiceDeps) {}

  /**
   * Creates the `admin` user when no user exists: with the operator's password, or a random
   * one returned here so the caller shows it once. No well-known default password exists.
   */
  async bootstrapAdmin(operatorPassword: string | undefined): Promise<BootstrapResult> {
    const { store } = this.deps;
    if ((await store.users.count()) > 0) return { created: false };
    const password = operatorPassword ?? generatePassword();
    if (operatorPassword !== undefined) this.checkPassword(operatorPassword, '/admin_password');
    try {
      await store.users.insert({ name: ADMIN_USER, passwordHash: await this.deps.hasher.hash(password), isAdmin: true, createdAt: this.deps.now() });
    } catch (error) {
      if (error instanceof StoreConflictError) return { created: false }; // another instance was first
      throw error;
    }
    return { created: true, userName: ADMIN_USER, generatedPassword: operatorPassword === undefined ? password : undefined };
  }

  async addUser(name: string, password: string, options: { admin: boolean }): Promise<UserSummary> {
    if (!USER_NAME.test(name)) {
      throw invalidField('/name', 'must be 1 to 64 letters, digits or _ . @ - and start with a letter or digit');
    }
    this.checkPassword(password, '/password');
    const user = { name, passwordHash: await this.deps.hasher.hash(password), isAdmin: options.admin, createdAt: this.deps.now() };
    try {
      await this.deps.store.users.insert(user);
    } catch (error) {
      if (error instanceof StoreConflictError) throw new ServiceError('conflict', 'user_exists', `User ${name} already exists`);
      throw error;
    }
    return { name, isAdmin: user.isAdmin, createdAt: user.createdAt };
  }

  /** Sets a new password and revokes every token and web session of the user; returns how many tokens were revoked. */
  async changePassword(name: string, password: string): Promise<{ revokedTokens: number }> {
    this.checkPassword(password, '/password');
    const passwordHash = await this.deps.hasher.hash(password);
    return this.deps.store.transaction(async (repos) => {
      if (!(await repos.users.updatePasswordHash(name, passwordHash))) throw userNotFound(name);
      await repos.webSessions.deleteAllForUser(name);
      return { revokedTokens: await repos.tokens.deleteAllForUser(name) };
    });
  }

  /**
   * Deletes a user with their tokens, webhooks (with their delivery logs) and the shares other owners gave
   * them, in one transaction.
   * A user who owns wallets is refused unless `wallets` says what happens to those wallets:
   * `transfer` hands them to another user (shares kept; a share that user had on one is dropped,
   * since they now own it), `delete` removes them with their PSBTs and collected signatures.
   * The last admin cannot be deleted. Any caller (CLI, API) gets the same rule.
   */
  async deleteUser(name: string, options: DeleteUserOptions = {}): Promise<DeletedUser> {
    const wallets = options.wallets ?? { action: 'refuse' };
    return this.deps.store.transaction(async (repos) => {
      const admins = await repos.users.lockAdmins();
      const user = await repos.users.find(name);
      if (!user) throw userNotFound(name);
      if (user.isAdmin && admins === 1) {
        throw new ServiceError('conflict', 'last_admin', `User ${name} is the last admin and cannot be deleted`);
      }
      const accessible = await repos.wallets.listAccessible(name);
      const owned = accessible.filter((a) => a.access === 'owner').map((a) => a.wallet).sort((x, y) => x.alias.localeCompare(y.alias));
      const shared = accessible.filter((a) => a.access !== 'owner').map((a) => a.wallet);
      const aliases = owned.map((w) => w.alias);
      const result: DeletedUser = { name, tokens: 0, sharesRemoved: shared.length, walletsDeleted: [], psbtsDeleted: 0, walletsTransferred: [], webhooks: 0 };
      if (owned.length > 0 && wallets.action === 'refuse') {
        throw new ServiceError(
          'conflict',
          'user_owns_wallets',
          `User ${name} owns ${owned.length === 1 ? 'the wallet' : `${owned.length} wallets`} ${aliases.join(', ')}: ${OWNS_WALLETS_HINT}`,
        );
      }
      if (wallets.action === 'transfer') {
        const to = wallets.to;
        if (to === name) throw new ServiceError('invalid_input', 'invalid_transfer', `The wallets of ${name} cannot be transferred to ${name}, who is being deleted`);
        if (!(await repos.users.find(to))) throw userNotFound(to);
        for (const wallet of owned) {
          const shares = await repos.wallets.shares(wallet.id);
          await repos.wallets.setOwner(wallet.id, to);
          if (shares.some((s) => s.userName === to)) await repos.wallets.replaceShares(wallet.id, shares.filter((s) => s.userName !== to));
          result.walletsTransferred.push(wallet.alias);
        }
        result.transferredTo = to;
      } else if (wallets.action === 'delete') {
        for (const wallet of owned) {
          result.psbtsDeleted += (await repos.psbts.list(wallet.id)).length;
          await repos.wallets.delete(wallet.id);
          await repos.psbts.deleteWallet(wallet.id);
          result.walletsDeleted.push(wallet.alias);
        }
      }
      for (const wallet of shared) {
        const shares = await repos.wallets.shares(wallet.id);
        await repos.wallets.replaceShares(wallet.id, shares.filter((s) => s.userName !== name));
      }
      result.tokens = await repos.tokens.deleteAllForUser(name);
      // Webhooks are kept by user name: left behind, they would belong to the next user given this name.
      result.webhooks = await repos.webhooks.deleteAllForUser(name);
      await repos.webSessions.deleteAllForUser(name);
      await repos.users.delete(name);
      return result;
    });
  }

  /** Grants or withdraws the admin flag; the last admin keeps it. */
  async setAdmin(name: string, isAdmin: boolean): Promise<void> {
    await this.deps.store.transaction(async (repos) => {
      const admins = await repos.users.lockAdmins();
      const user = await repos.users.find(name);
      if (!user) throw userNotFound(name);
      if (user.isAdmin && !isAdmin && admins === 1) {
        throw new ServiceError('conflict', 'last_admin', `User ${name} is the last admin and keeps the admin flag`);
      }
      await repos.users.setAdmin(name, isAdmin);
    });
  }

  async listUsers(): Promise<UserSummary[]> {
    return (await this.deps.store.users.list()).map(({ name, isAdmin, createdAt }) => ({ name, isAdmin, createdAt }));
  }

  private checkPassword(password: string, path: string): void {
    const length = [...password].length;
    const min = this.deps.passwordMinChars;
    if (length < min) throw invalidField(path, `must be at least ${min} characters`, 'password_too_short');
    if (length > PASSWORD_MAX_CHARS) throw invalidField(path, `must be at most ${PASSWORD_MAX_CHARS} characters`);
  }
}

/** Managing users from an interface other than the operator's command line takes an admin. */
export function requireAdmin(principal: { isAdmin: boolean }): void {
  if (!principal.isAdmin) throw new ServiceError('forbidden', 'admin_only', 'Only an admin may manage users');
}

function userNotFound(name: string): ServiceError {
  return new ServiceError('not_found', 'user_not_found', `User ${name} does not exist`);
}
