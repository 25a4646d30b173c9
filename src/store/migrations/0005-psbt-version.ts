import type { Migration } from './types.js';

/**
 * A version per stored PSBT, raised by every change of it (signatures merged, finalized, status). A change
 * applies only where the row still has the version it was computed from (compare-and-set): two cosigners'
 * signatures merged at once, or a merge racing the sync marking the PSBT broadcast, can never overwrite
 * each other unseen.
 */
export const psbtVersion: Migration = {
  version: 5,
  name: 'psbt-version',
  async up(db) {
    await db.schema
      .alterTable('psbts')
      .addColumn('version', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  },
};
