import type { Migration } from './types.js';

/**
 * The highest receive index handed out by `addresses/next` (-1: none). Kept apart from the chain
 * sync's `last_used_receive`: revealing an address is not a chain change, so it neither moves nor
 * checks `revision`; the sync reads this column to keep revealed addresses watched.
 */
export const revealedReceive: Migration = {
  version: 4,
  name: 'revealed-receive',
  async up(db) {
    await db.schema
      .alterTable('wallets')
      .addColumn('last_revealed_receive', 'integer', (c) => c.notNull().defaultTo(-1))
      .execute();
  },
};
