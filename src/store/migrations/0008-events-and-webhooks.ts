import type { Migration } from './types.js';

/**
 * The event outbox and webhooks. `events` rows are written in the store transaction of the change that
 * causes them; their `seq` comes from the one `event_sequence` row, updated last in that transaction, so
 * writers take turns on it and `seq` grows in commit order without gaps (a reader that has seen `seq` N has
 * seen every event up to N). `webhook_deliveries` is the delivery log and the retry queue.
 */
export const eventsAndWebhooks: Migration = {
  version: 8,
  name: 'events-and-webhooks',
  async up(db) {
    await db.schema
      .createTable('event_sequence')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('last_seq', 'bigint', (c) => c.notNull())
      .execute();
    await db.insertInto('event_sequence').values({ name: 'events', last_seq: 0 }).execute();
    await db.schema
      .createTable('events')
      .addColumn('seq', 'bigint', (c) => c.primaryKey())
      .addColumn('id', 'text', (c) => c.notNull().unique())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('wallet_id', 'text', (c) => c.notNull())
      .addColumn('wallet_alias', 'text', (c) => c.notNull())
      .addColumn('occurred_at', 'bigint', (c) => c.notNull())
      .addColumn('data', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('events_wallet_seq').on('events').columns(['wallet_id', 'seq']).execute();
    await db.schema
      .createTable('webhooks')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_name', 'text', (c) => c.notNull())
      .addColumn('url', 'text', (c) => c.notNull())
      /** JSON array of event types. */
      .addColumn('event_types', 'text', (c) => c.notNull())
      /** JSON array of wallet ids. */
      .addColumn('wallet_ids', 'text', (c) => c.notNull())
      .addColumn('secret', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      /** Highest event seq already turned into deliveries (or skipped) for this webhook. */
      .addColumn('event_cursor', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('webhooks_user').on('webhooks').columns(['user_name', 'created_at']).execute();
    await db.schema
      .createTable('webhook_deliveries')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('webhook_id', 'text', (c) => c.notNull())
      .addColumn('event_seq', 'bigint', (c) => c.notNull())
      .addColumn('wallet_id', 'text', (c) => c.notNull())
      /** pending, delivered, failed (given up). */
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
      /** Until then one instance is sending it (claimed by compare-and-set); null when nobody is. */
      .addColumn('lease_until', 'bigint')
      .addColumn('response_code', 'integer')
      .addColumn('error', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('webhook_deliveries_queue').on('webhook_deliveries').columns(['status', 'webhook_id', 'wallet_id', 'event_seq']).execute();
    await db.schema.createIndex('webhook_deliveries_log').on('webhook_deliveries').columns(['webhook_id', 'created_at']).execute();
  },
};
