import type { Migration } from './types.js';

export const usersAndTokens: Migration = {
  version: 1,
  name: 'users-and-tokens',
  async up(db) {
    await db.schema
      .createTable('users')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('password_hash', 'text', (c) => c.notNull())
      .addColumn('is_admin', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('tokens')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_name', 'text', (c) => c.notNull().references('users.name').onDelete('cascade'))
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('token_hash', 'text', (c) => c.notNull().unique())
      .addColumn('life_seconds', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addUniqueConstraint('tokens_user_description_unique', ['user_name', 'description'])
      .execute();
    await db.schema
      .createTable('auth_failures')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('scope_key', 'text', (c) => c.notNull())
      .addColumn('failed_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('auth_failures_scope_time').on('auth_failures').columns(['scope_key', 'failed_at']).execute();
  },
};
