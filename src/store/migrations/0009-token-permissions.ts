import type { Migration } from './types.js';

/**
 * Narrower tokens: a JSON array of permissions and one of wallet ids. NULL (every token made before, and
 * every token made without the fields) means "all of its user's rights".
 */
export const tokenPermissions: Migration = {
  version: 9,
  name: 'token-permissions',
  async up(db) {
    await db.schema.alterTable('tokens').addColumn('permissions', 'text').execute();
    await db.schema.alterTable('tokens').addColumn('wallet_ids', 'text').execute();
  },
};
