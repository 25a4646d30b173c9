/** Every schema migration, in order. Add a new file `NNNN-name.ts` and insert it here by version. */
import { usersAndTokens } from './0001-users-and-tokens.js';
import { psbts } from './0002-psbts.js';
import { wallets } from './0003-wallets.js';
import { revealedReceive } from './0004-revealed-receive.js';
import { serviceSettings } from './0006-service-settings.js';
import type { Migration } from './types.js';

export type { Migration } from './types.js';

// 0005 belongs to another line of work; versions only need to increase (see migrator.ts).
export const MIGRATIONS: readonly Migration[] = [usersAndTokens, psbts, wallets, revealedReceive, serviceSettings];
