import { PostgresAdapter, sql } from 'kysely';
import type { Migration } from './types.js';

/**
 * Every block changes the revision of every wallet it moves, and migration 18's listing index held the revision:
 * each block rewrote that index entry for every followed wallet, and on PostgreSQL an update of an indexed column is
 * never heap-only (HOT), so every index of `wallets` got a new entry per wallet per block. The listing index now
 * holds the order and the id only; a sync write changes no indexed column of `wallets`. On PostgreSQL the table keeps
 * room in each page (fillfactor 70) so that the new version of a row fits beside the old one and the update stays
 * heap-only (pages written before fill up to it as their rows move; a wallet row is well under 30% of a page).
 */
export const listingWithoutRevision: Migration = {
  version: 19,
  name: 'listing-without-revision',
  async up(db) {
    await db.schema.dropIndex('wallets_listing').execute();
    await db.schema.createIndex('wallets_listing').on('wallets').columns(['created_at', 'alias', 'id']).execute();
    if (db.getExecutor().adapter instanceof PostgresAdapter) await sql`alter table wallets set (fillfactor = 70)`.execute(db);
  },
};
