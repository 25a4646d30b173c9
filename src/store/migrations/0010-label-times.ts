import type { Migration } from './types.js';

/**
 * Labels for BIP329: a modification time per address and coin label (epoch milliseconds; 0 for labels
 * written before this version) so that an import keeps whichever label is newer, and transaction labels.
 */
export const labelTimes: Migration = {
  version: 10,
  name: 'label-times',
  async up(db) {
    await db.schema.alterTable('wallet_address_labels').addColumn('updated_at', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
    await db.schema.alterTable('wallet_utxo_flags').addColumn('updated_at', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
    await db.schema
      .createTable('wallet_tx_labels')
      .addColumn('wallet_id', 'text', (c) => c.notNull().references('wallets.id').onDelete('cascade'))
      .addColumn('txid', 'text', (c) => c.notNull())
      .addColumn('label', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('wallet_tx_labels_pk', ['wallet_id', 'txid'])
      .execute();
  },
};
