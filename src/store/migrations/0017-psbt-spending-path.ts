import type { Migration } from './types.js';

/**
 * The spending path a PSBT of a miniscript wallet spends by (its index in the wallet's plan, 0: the primary
 * path); null for the fixed shapes, which have one. Signatures are counted toward it, and broadcasting checks
 * its timelock.
 */
export const psbtSpendingPath: Migration = {
  version: 17,
  name: 'psbt-spending-path',
  async up(db) {
    await db.schema.alterTable('psbts').addColumn('spending_path', 'integer').execute();
  },
};
