/** `wcs user add|passwd|list|delete`: the users of the service, on an existing store. */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config.js';
import { INITIAL_ADMIN_PASSWORD_FILE, createRuntime } from '../main.js';
import { ServiceError } from '../services/errors.js';
import { ADMIN_USER, OWNS_WALLETS_HINT, type DeleteUserWallets, type DeletedUser } from '../services/users.js';
import { readNewPassword } from './password-input.js';
import { requireExistingStore } from './store-check.js';
import { shown } from './terminal-text.js';

function deletedText(d: DeletedUser): string {
  const parts = [`Deleted user ${shown(d.name)}`, `${d.tokens} token(s)`, `${d.sharesRemoved} share(s) of other users' wallets`];
  if (d.webhooks > 0) parts.push(`${d.webhooks} webhook(s) with their delivery logs`);
  if (d.walletsDeleted.length > 0) parts.push(`wallet(s) ${d.walletsDeleted.map(shown).join(', ')} with ${d.psbtsDeleted} PSBT(s) and their signatures`);
  let text = parts.join(', ');
  if (d.walletsTransferred.length > 0) text += `; wallet(s) ${d.walletsTransferred.map(shown).join(', ')} now owned by ${shown(d.transferredTo ?? '')}`;
  return text;
}

/** The first-start password file holds the bootstrap admin's password: stale once it changes. */
function removeInitialPasswordFile(config: Config, name: string): boolean {
  if (name !== ADMIN_USER) return false;
  const path = join(config.dataFolder, INITIAL_ADMIN_PASSWORD_FILE);
  try {
    rmSync(path);
    return true;
  } catch {
    return false;
  }
}

export type UserAction = 'add' | 'passwd' | 'list' | 'delete';

export interface UserOptions {
  /** user add --admin */
  admin?: boolean;
  /** user delete --transfer-wallets-to USER */
  transferWalletsTo?: string;
  /** user delete --delete-wallets */
  deleteWallets?: boolean;
}

/** Runs one user command; `name` is the NAME of add, passwd and delete. */
export async function runUserCommand(config: Config, action: UserAction, name: string | undefined, options: UserOptions, out: (line: string) => void): Promise<void> {
  const transferTo = options.transferWalletsTo;
  await requireExistingStore(config);
  const runtime = await createRuntime(config, { createNoFiles: true });
  try {
    const users = runtime.services.users;
    switch (action) {
      case 'add': {
        const added = await users.addUser(name ?? '', await readNewPassword(), { admin: options.admin === true });
        out(`Added user ${added.name}${added.isAdmin ? ' (admin)' : ''}`);
        break;
      }
      case 'passwd': {
        const { revokedTokens } = await users.changePassword(name ?? '', await readNewPassword());
        out(`Changed the password of ${name}; revoked ${revokedTokens} token(s)`);
        if (removeInitialPasswordFile(config, name ?? '')) out(`Removed the first-start password file ${INITIAL_ADMIN_PASSWORD_FILE}`);
        break;
      }
      case 'delete': {
        const wallets: DeleteUserWallets =
          transferTo !== undefined ? { action: 'transfer', to: transferTo } : options.deleteWallets === true ? { action: 'delete' } : { action: 'refuse' };
        try {
          out(deletedText(await users.deleteUser(name ?? '', { wallets })));
        } catch (error) {
          if (error instanceof ServiceError && error.code === 'user_owns_wallets') {
            throw new ServiceError(error.kind, error.code, error.message.replace(OWNS_WALLETS_HINT, 'give --transfer-wallets-to USER or --delete-wallets; nothing was deleted'));
          }
          throw error;
        }
        removeInitialPasswordFile(config, name ?? '');
        break;
      }
      case 'list':
        for (const u of await users.listUsers()) {
          out(`${shown(u.name)}\t${u.isAdmin ? 'admin' : 'user'}\t${new Date(u.createdAt).toISOString()}`);
        }
        break;
    }
  } finally {
    await runtime.close();
  }
}
