/** Every schema migration, in order. Add a new file `NNNN-name.ts` and insert it here by version. */
import { usersAndTokens } from './0001-users-and-tokens.js';
import { psbts } from './0002-psbts.js';
import { wallets } from './0003-wallets.js';
import { revealedReceive } from './0004-revealed-receive.js';
import { psbtVersion } from './0005-psbt-version.js';
import { serviceSettings } from './0006-service-settings.js';
import { webSessions } from './0007-web-sessions.js';
import { eventsAndWebhooks } from './0008-events-and-webhooks.js';
import { tokenPermissions } from './0009-token-permissions.js';
import { labelTimes } from './0010-label-times.js';
import { chainRowRevisions } from './0011-chain-row-revisions.js';
import { webhooksOfDeletedUsers } from './0012-webhooks-of-deleted-users.js';
import { shownReceive } from './0013-shown-receive.js';
import { loginAttempts } from './0014-login-attempts.js';
import { eventAnnouncements } from './0015-event-announcements.js';
import { walletFollowLeases } from './0016-wallet-follow-leases.js';
import { psbtSpendingPath } from './0017-psbt-spending-path.js';
import { walletListingIndexes } from './0018-wallet-listing-indexes.js';
import { listingWithoutRevision } from './0019-listing-without-revision.js';
import type { Migration } from './types.js';

export type { Migration } from './types.js';

export const MIGRATIONS: readonly Migration[] = [usersAndTokens, psbts, wallets, revealedReceive, psbtVersion, serviceSettings, webSessions, eventsAndWebhooks, tokenPermissions, labelTimes, chainRowRevisions, webhooksOfDeletedUsers, shownReceive, loginAttempts, eventAnnouncements, walletFollowLeases, psbtSpendingPath, walletListingIndexes, listingWithoutRevision];
