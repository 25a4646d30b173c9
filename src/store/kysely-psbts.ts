/** The PSBT repository over Kysely (SQLite and PostgreSQL). */
import type { Kysely, Selectable } from 'kysely';
import { isUniqueViolation } from './kysely-repositories.js';
import type { Outpoint, PsbtRepository, PsbtStatus, Reservation, StoredPsbt } from './psbt-records.js';
import { StoreConflictError } from './repositories.js';
import type { Database, PsbtsTable } from './schema.js';

const toStoredPsbt = (row: Selectable<PsbtsTable>): StoredPsbt => ({
  walletId: row.wallet_id,
  txid: row.txid,
  psbt: row.psbt,
  changeOutputs: JSON.parse(row.change_outputs) as number[],
  fullSize: Number(row.full_size),
  status: row.status as PsbtStatus,
  createdAt: Number(row.created_at),
  updatedAt: Number(row.updated_at),
  createdBy: row.created_by,
});

export class KyselyPsbts implements PsbtRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** A PSBT row and its reservations change together: a crash between two statements must not split them. */
  private atomically<T>(work: (db: Kysely<Database>) => Promise<T>): Promise<T> {
    return this.db.isTransaction ? work(this.db) : this.db.transaction().execute(work);
  }

  async insert(psbt: StoredPsbt, inputs: readonly Outpoint[]): Promise<void> {
    try {
      await this.db
        .insertInto('psbts')
        .values({
          wallet_id: psbt.walletId,
          txid: psbt.txid,
          psbt: psbt.psbt,
          change_outputs: JSON.stringify(psbt.changeOutputs),
          full_size: psbt.fullSize,
          status: psbt.status,
          created_at: Math.round(psbt.createdAt),
          updated_at: Math.round(psbt.updatedAt),
          created_by: psbt.createdBy,
        })
        .execute();
    } catch (error) {
      if (isUniqueViolation(error)) throw new StoreConflictError(`PSBT ${psbt.txid} already exists`);
      throw error;
    }
    if (inputs.length === 0) return;
    try {
      await this.db
        .insertInto('psbt_reservations')
        .values(inputs.map((o) => ({ wallet_id: psbt.walletId, txid: o.txid, vout: o.vout, psbt_txid: psbt.txid })))
        .execute();
    } catch (error) {
      if (isUniqueViolation(error)) throw new StoreConflictError('A coin is already reserved by another PSBT');
      throw error;
    }
  }

  async find(walletId: string, txid: string): Promise<StoredPsbt | undefined> {
    const row = await this.db.selectFrom('psbts').selectAll().where('wallet_id', '=', walletId).where('txid', '=', txid).executeTakeFirst();
    return row && toStoredPsbt(row);
  }

  async list(walletId: string, status?: PsbtStatus): Promise<StoredPsbt[]> {
    let query = this.db.selectFrom('psbts').selectAll().where('wallet_id', '=', walletId);
    if (status) query = query.where('status', '=', status);
    const rows = await query.orderBy('created_at', 'desc').orderBy('txid').execute();
    return rows.map(toStoredPsbt);
  }

  async updatePsbt(walletId: string, txid: string, psbt: string, updatedAt: number): Promise<boolean> {
    const result = await this.db
      .updateTable('psbts')
      .set({ psbt, updated_at: Math.round(updatedAt) })
      .where('wallet_id', '=', walletId)
      .where('txid', '=', txid)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async setStatus(walletId: string, txid: string, status: PsbtStatus, updatedAt: number): Promise<boolean> {
    return this.atomically(async (db) => {
      const result = await db
        .updateTable('psbts')
        .set({ status, updated_at: Math.round(updatedAt) })
        .where('wallet_id', '=', walletId)
        .where('txid', '=', txid)
        .executeTakeFirst();
      if (status !== 'pending') {
        await db.deleteFrom('psbt_reservations').where('wallet_id', '=', walletId).where('psbt_txid', '=', txid).execute();
      }
      return Number(result.numUpdatedRows) > 0;
    });
  }

  async delete(walletId: string, txid: string): Promise<boolean> {
    return this.atomically(async (db) => {
      await db.deleteFrom('psbt_reservations').where('wallet_id', '=', walletId).where('psbt_txid', '=', txid).execute();
      const result = await db.deleteFrom('psbts').where('wallet_id', '=', walletId).where('txid', '=', txid).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    });
  }

  async reservations(walletId: string, psbtTxid?: string): Promise<Reservation[]> {
    let query = this.db.selectFrom('psbt_reservations').selectAll().where('wallet_id', '=', walletId);
    if (psbtTxid !== undefined) query = query.where('psbt_txid', '=', psbtTxid);
    const rows = await query.execute();
    return rows.map((r) => ({ walletId: r.wallet_id, txid: r.txid, vout: Number(r.vout), psbtTxid: r.psbt_txid }));
  }

  async deleteWallet(walletId: string): Promise<void> {
    await this.atomically(async (db) => {
      await db.deleteFrom('psbt_reservations').where('wallet_id', '=', walletId).execute();
      await db.deleteFrom('psbts').where('wallet_id', '=', walletId).execute();
    });
  }
}
