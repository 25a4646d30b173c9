import type { Migration } from './types.js';

/**
 * Sessions of the web interface, shared by every instance: only a SHA-256 of the session id (the
 * cookie) is stored, with the user, the form token that protects state-changing requests, and the
 * expiry. Sign-out, a password change and the user's deletion delete the rows.
 */
export const webSessions: Migration = {
  version: 7,
  name: 'web-sessions',
  async up(db) {
    await db.schema
      .createTable('web_sessions')
      .addColumn('id_hash', 'text', (c) => c.primaryKey())
      .addColumn('user_name', 'text', (c) => c.notNull().references('users.name').onDelete('cascade'))
      .addColumn('csrf_token', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('web_sessions_user').on('web_sessions').column('user_name').execute();
  },
};
