import { sql } from 'kysely';
import type { Migration } from './types.js';

/**
 * The wallet revision at which each chain row was last written, and a record of removed transactions, so
 * that a reader holding revision r reads only what changed after r instead of the whole wallet (ADR 0009).
 * `chain_base_revision` is the revision from which such reads are possible: a rescan or a new gap limit
 * moves it, and a reader older than it loads the wallet again.
 */
export const chainRowRevisions: Migration = {
  version: 11,
  name: 'chain-row-revisions',
  async up(db) {
    await db.schema.alterTable('wallet_transactions').addColumn('changed_revision', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
    await db.schema.alterTable('wallet_addresses').addColumn('changed_revision', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
    await db.schema.alterTable('wallets').addColumn('chain_base_revision', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
    // Rows written before this version carry no revision: no reader may start from before it.
    await db.updateTable('wallets').set({ chain_base_revision: sql`revision` }).execute();
    await db.schema
      .createTable('wallet_transaction_removals')
      .addColumn('wallet_id', 'text', (c) => c.notNull().references('wallets.id').onDelete('cascade'))
      .addColumn('txid', 'text', (c) => c.notNull())
      .addColumn('revision', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('wallet_transaction_removals_pk', ['wallet_id', 'txid'])
      .execute();
    await db.schema.createIndex('wallet_transactions_changed').on('wallet_transactions').columns(['wallet_id', 'changed_revision']).execute();
    await db.schema.createIndex('wallet_addresses_changed').on('wallet_addresses').columns(['wallet_id', 'changed_revision']).execute();
    await db.schema.createIndex('wallet_transaction_removals_revision').on('wallet_transaction_removals').columns(['wallet_id', 'revision']).execute();
  },
};
