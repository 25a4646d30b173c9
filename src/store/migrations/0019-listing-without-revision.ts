import { PostgresAdapter, sql } from 'kysely';
import type { Migration } from './types.js';

/**
 * PostgreSQL: every block changes the revision of every wallet it moves, and migration 18's listing index held the
 * revision. An update of an indexed column is never heap-only (HOT), so every index of `wallets` got a new entry per
 * wallet per block. The listing index now holds the order and the id only (the listing reads each revision from the
 * row: with every row updated at each block, the index alone could not answer without the table anyway), so a
 * sync write changes no indexed column; and the table keeps room in each page (fillfactor 70) so that the new
 * version of a row fits beside the old one (pages written before get it as their rows move; a wallet row is well
 * under 30% of a page).
 * SQLite keeps migration 18's index: it has no heap-only updates to win, and the listing read from the index alone
 * took half the time of one reading each row (10,000 wallets: 2.5-3.5 ms against 4.8-11 ms at best).
 */
export const listingWithoutRevision: Migration = {
  version: 19,
  name: 'listing-without-revision',
  async up(db) {
    if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
    await db.schema.dropIndex('wallets_listing').execute();
    await db.schema.createIndex('wallets_listing').on('wallets').columns(['created_at', 'alias', 'id']).execute();
    await sql`alter table wallets set (fillfactor = 70)`.execute(db);
  },
};
