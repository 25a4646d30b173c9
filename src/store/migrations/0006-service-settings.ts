import type { Migration } from './types.js';

/**
 * Facts every instance sharing the database must agree on, as name/value text: for now the
 * fingerprint of the JWT signing key (never the key), so an instance with another key refuses to
 * start instead of answering 401 to every token the others issued.
 */
export const serviceSettings: Migration = {
  version: 6,
  name: 'service-settings',
  async up(db) {
    await db.schema
      .createTable('service_settings')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};
