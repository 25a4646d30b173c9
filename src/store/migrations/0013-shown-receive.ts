import type { Migration } from './types.js';

/**
 * The receive index the wallet details show as the wallet's address (-1: none fixed yet). `addresses/next`
 * fixes it when it first hands out an address past it, and never hands it out itself, so that the
 * address on the wallet's page and an address handed out never go to two payers (ADR 0003).
 */
export const shownReceive: Migration = {
  version: 13,
  name: 'shown-receive',
  async up(db) {
    await db.schema.alterTable('wallets').addColumn('shown_receive', 'integer', (c) => c.notNull().defaultTo(-1)).execute();
  },
};
