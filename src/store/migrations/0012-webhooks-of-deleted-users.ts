import type { Migration } from './types.js';

/**
 * Webhooks are kept by user name, and deleting a user used to leave them behind: a later user given the
 * same name would have found them, and their deliveries would have resumed. Deleting a user now removes
 * them (UserService.deleteUser); this removes the ones already left behind, with their delivery logs.
 */
export const webhooksOfDeletedUsers: Migration = {
  version: 12,
  name: 'webhooks-of-deleted-users',
  async up(db) {
    const orphaned = db
      .selectFrom('webhooks')
      .select('webhooks.id')
      .where((eb) => eb.not(eb.exists(eb.selectFrom('users').select('users.name').whereRef('users.name', '=', 'webhooks.user_name'))));
    await db.deleteFrom('webhook_deliveries').where('webhook_id', 'in', orphaned).execute();
    await db
      .deleteFrom('webhooks')
      .where((eb) => eb.not(eb.exists(eb.selectFrom('users').select('users.name').whereRef('users.name', '=', 'webhooks.user_name'))))
      .execute();
  },
};
