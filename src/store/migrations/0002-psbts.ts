import type { Migration } from './types.js';

/**
 * Pending PSBTs of wallets and the coins they hold. The UNIQUE (wallet_id, txid, vout) of
 * `psbt_reservations` is what keeps two PSBTs (of any service instance) from spending one coin:
 * a PSBT row and its reservations are written in one transaction.
 */
export const psbts: Migration = {
  version: 2,
  name: 'psbts',
  async up(db) {
    await db.schema
      .createTable('psbts')
      .addColumn('wallet_id', 'text', (c) => c.notNull())
      .addColumn('txid', 'text', (c) => c.notNull())
      .addColumn('psbt', 'text', (c) => c.notNull())
      .addColumn('change_outputs', 'text', (c) => c.notNull())
      .addColumn('full_size', 'integer', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('created_by', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('psbts_pk', ['wallet_id', 'txid'])
      .execute();
    await db.schema
      .createTable('psbt_reservations')
      .addColumn('wallet_id', 'text', (c) => c.notNull())
      .addColumn('txid', 'text', (c) => c.notNull())
      .addColumn('vout', 'integer', (c) => c.notNull())
      .addColumn('psbt_txid', 'text', (c) => c.notNull())
      .addUniqueConstraint('psbt_reservations_outpoint_unique', ['wallet_id', 'txid', 'vout'])
      .execute();
    await db.schema.createIndex('psbt_reservations_psbt').on('psbt_reservations').columns(['wallet_id', 'psbt_txid']).execute();
  },
};
