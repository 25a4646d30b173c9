import type { Migration } from './types.js';

/**
 * Wallets and everything the chain sync learns about them. `revision` grows with every change of a
 * wallet's chain rows, so any instance can tell whether its in-memory view is still the stored one.
 * `sync_blocks` keeps the header links of every block applied, for reorg detection.
 */
export const wallets: Migration = {
  version: 3,
  name: 'wallets',
  async up(db) {
    await db.schema
      .createTable('wallets')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('alias', 'text', (c) => c.notNull().unique())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('owner_name', 'text', (c) => c.notNull().references('users.name').onDelete('cascade'))
      .addColumn('network', 'text', (c) => c.notNull())
      .addColumn('receive_descriptor', 'text', (c) => c.notNull())
      .addColumn('change_descriptor', 'text', (c) => c.notNull())
      .addColumn('address_type', 'text', (c) => c.notNull())
      .addColumn('sigs_required', 'integer', (c) => c.notNull())
      .addColumn('sigs_total', 'integer', (c) => c.notNull())
      .addColumn('keys_json', 'text', (c) => c.notNull())
      .addColumn('gap_limit', 'integer', (c) => c.notNull())
      .addColumn('birthday', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('revision', 'bigint', (c) => c.notNull())
      .addColumn('tip_height', 'integer')
      .addColumn('tip_hash', 'text')
      .addColumn('last_used_receive', 'integer', (c) => c.notNull())
      .addColumn('last_used_change', 'integer', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('wallets_owner').on('wallets').column('owner_name').execute();
    await db.schema
      .createTable('wallet_shares')
      .addColumn('wallet_id', 'text', (c) => c.notNull().references('wallets.id').onDelete('cascade'))
      .addColumn('user_name', 'text', (c) => c.notNull().references('users.name').onDelete('cascade'))
      .addColumn('access', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('wallet_shares_pk', ['wallet_id', 'user_name'])
      .execute();
    await db.schema.createIndex('wallet_shares_user').on('wallet_shares').column('user_name').execute();
    await db.schema
      .createTable('wallet_addresses')
      .addColumn('wallet_id', 'text', (c) => c.notNull().references('wallets.id').onDelete('cascade'))
      .addColumn('branch', 'integer', (c) => c.notNull())
      .addColumn('idx', 'integer', (c) => c.notNull())
      .addColumn('script', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('wallet_addresses_pk', ['wallet_id', 'branch', 'idx'])
      .execute();
    await db.schema
      .createTable('wallet_transactions')
      .addColumn('wallet_id', 'text', (c) => c.notNull().references('wallets.id').onDelete('cascade'))
      .addColumn('txid', 'text', (c) => c.notNull())
      .addColumn('hex', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('block_height', 'integer')
      .addColumn('block_hash', 'text')
      .addColumn('block_time', 'bigint')
      .addColumn('first_seen', 'bigint', (c) => c.notNull())
      .addColumn('replaceable', 'integer')
      .addPrimaryKeyConstraint('wallet_transactions_pk', ['wallet_id', 'txid'])
      .execute();
    await db.schema
      .createTable('wallet_address_labels')
      .addColumn('wallet_id', 'text', (c) => c.notNull().references('wallets.id').onDelete('cascade'))
      .addColumn('address', 'text', (c) => c.notNull())
      .addColumn('label', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('wallet_address_labels_pk', ['wallet_id', 'address'])
      .execute();
    await db.schema
      .createTable('wallet_utxo_flags')
      .addColumn('wallet_id', 'text', (c) => c.notNull().references('wallets.id').onDelete('cascade'))
      .addColumn('txid', 'text', (c) => c.notNull())
      .addColumn('vout', 'integer', (c) => c.notNull())
      .addColumn('frozen', 'integer', (c) => c.notNull())
      .addColumn('label', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('wallet_utxo_flags_pk', ['wallet_id', 'txid', 'vout'])
      .execute();
    await db.schema
      .createTable('sync_blocks')
      .addColumn('hash', 'text', (c) => c.primaryKey())
      .addColumn('height', 'integer', (c) => c.notNull())
      .addColumn('prev_hash', 'text', (c) => c.notNull())
      .addColumn('time', 'bigint', (c) => c.notNull())
      .execute();
  },
};
