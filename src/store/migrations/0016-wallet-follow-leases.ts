import type { Migration } from './types.js';

/**
 * Sharing the following of wallets between instances on PostgreSQL (docs/adr/0014): each instance that
 * follows wallets says it lives (`sync_instances`, a heartbeat), and holds a lease per wallet it follows
 * (`wallet_follow_leases`), renewed with the heartbeat and taken over once expired. Times are epoch
 * milliseconds of the database's clock. SQLite (one process) has the tables and never uses them.
 */
export const walletFollowLeases: Migration = {
  version: 16,
  name: 'wallet-follow-leases',
  async up(db) {
    await db.schema
      .createTable('sync_instances')
      .addColumn('instance_id', 'text', (c) => c.primaryKey())
      .addColumn('heartbeat_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('wallet_follow_leases')
      .addColumn('wallet_id', 'text', (c) => c.primaryKey().references('wallets.id').onDelete('cascade'))
      .addColumn('instance_id', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('wallet_follow_leases_instance').on('wallet_follow_leases').columns(['instance_id']).execute();
  },
};
