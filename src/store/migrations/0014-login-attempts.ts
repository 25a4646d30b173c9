import type { Migration } from './types.js';

/**
 * Login attempts instead of counted failures: an attempt is written `pending` before its password is
 * checked, turned `failed` after a wrong one and removed after a right one. `seq` comes from the one
 * `login_attempt_sequence` row, updated in the attempt's transaction, so writers take turns on it and `seq`
 * grows in commit order: an attempt that has seen its own row has seen every attempt numbered before it.
 * The failures counted so far are dropped: they are kept for a minute only.
 */
export const loginAttempts: Migration = {
  version: 14,
  name: 'login-attempts',
  async up(db) {
    await db.schema.dropTable('auth_failures').execute();
    await db.schema
      .createTable('login_attempt_sequence')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('last_seq', 'bigint', (c) => c.notNull())
      .execute();
    await db.insertInto('login_attempt_sequence').values({ name: 'login_attempts', last_seq: 0 }).execute();
    await db.schema
      .createTable('login_attempts')
      .addColumn('seq', 'bigint', (c) => c.primaryKey())
      .addColumn('scope_key', 'text', (c) => c.notNull())
      /** pending, failed. */
      .addColumn('state', 'text', (c) => c.notNull())
      /** When it began (pending) or failed. */
      .addColumn('at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('login_attempts_scope_time').on('login_attempts').columns(['scope_key', 'at']).execute();
    await db.schema.createIndex('login_attempts_time').on('login_attempts').columns(['at']).execute();
  },
};
