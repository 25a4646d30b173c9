/** Wallet labels across their tables (one implementation for SQLite and PostgreSQL). */
import type { Kysely } from 'kysely';
import type { StoredLabel, WalletLabelRepository } from './label-records.js';
import type { WalletDatabase } from './kysely-wallets.js';

export class KyselyLabels implements WalletLabelRepository {
  private readonly db: Kysely<WalletDatabase>;

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  constructor(db: Kysely<any>) {
    // The label tables are wallet tables, declared with them (kysely-wallets.ts).
    this.db = db as unknown as Kysely<WalletDatabase>;
  }

  async list(walletId: string): Promise<StoredLabel[]> {
    const [txs, addresses, outputs] = await Promise.all([
      this.db.selectFrom('wallet_tx_labels').selectAll().where('wallet_id', '=', walletId).orderBy('txid').execute(),
      this.db.selectFrom('wallet_address_labels').selectAll().where('wallet_id', '=', walletId).orderBy('address').execute(),
      this.db.selectFrom('wallet_utxo_flags').selectAll().where('wallet_id', '=', walletId).orderBy('txid').orderBy('vout').execute(),
    ]);
    return [
      ...txs.map((r): StoredLabel => ({ type: 'tx', ref: r.txid, label: r.label, updatedAt: Number(r.updated_at) })),
      ...addresses.map((r): StoredLabel => ({ type: 'addr', ref: r.address, label: r.label, updatedAt: Number(r.updated_at) })),
      ...outputs.map((r): StoredLabel => ({ type: 'output', ref: `${r.txid}:${Number(r.vout)}`, label: r.label, frozen: Number(r.frozen) === 1, updatedAt: Number(r.updated_at) })),
    ];
  }

  async txLabels(walletId: string): Promise<Map<string, string>> {
    const rows = await this.db.selectFrom('wallet_tx_labels').select(['txid', 'label']).where('wallet_id', '=', walletId).execute();
    return new Map(rows.map((r) => [r.txid, r.label]));
  }

  async lock(walletId: string): Promise<boolean> {
    // A write that changes nothing still takes the row's lock (PostgreSQL) or the database's (SQLite).
    const held = await this.db.updateTable('wallets').set((eb) => ({ revision: eb.ref('revision') })).where('id', '=', walletId).executeTakeFirst();
    return Number(held.numUpdatedRows) === 1;
  }

  async setTxLabel(walletId: string, txid: string, label: string, at: number): Promise<void> {
    await this.db.deleteFrom('wallet_tx_labels').where('wallet_id', '=', walletId).where('txid', '=', txid).execute();
    if (label !== '') await this.db.insertInto('wallet_tx_labels').values({ wallet_id: walletId, txid, label, updated_at: at }).execute();
  }
}
