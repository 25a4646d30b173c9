import { sql } from 'kysely';
import type { Migration } from './types.js';

/**
 * What the sync reads of every wallet at each pass (each creation asks for one), and the wallet list's order,
 * from indexes rather than the table: its rows hold the descriptors and keys, and with thousands of wallets
 * reading them all took tens of milliseconds a pass. The listing index keeps every wallet's id and revision in
 * the lists' order (oldest first, then by alias); the revealed one only the wallets that handed out an address.
 */
export const walletListingIndexes: Migration = {
  version: 18,
  name: 'wallet-listing-indexes',
  async up(db) {
    await db.schema.createIndex('wallets_listing').on('wallets').columns(['created_at', 'alias', 'id', 'revision']).execute();
    await db.schema.createIndex('wallets_revealed').on('wallets').columns(['last_revealed_receive', 'id']).where(sql.ref('last_revealed_receive'), '>=', 0).execute();
  },
};
