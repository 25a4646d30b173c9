/** The PSBT repository over Kysely (SQLite and PostgreSQL). */
import type { ExpressionBuilder, Kysely, Selectable } from 'kysely';
import { isUniqueViolation } from './kysely-repositories.js';
import type { Outpoint, PsbtRepository, PsbtStatus, Reservation, StoredPsbt } from './psbt-records.js';
import { StoreConflictError } from './repositories.js';
import type { Database, PsbtsTable } from './schema.js';

/** The compare of every compare-and-set: this pending PSBT, still at the version the change was computed from. */
const pendingAt = (walletId: string, txid: string, version: number) => (eb: ExpressionBuilder<Database, 'psbts'>) =>
  eb.and([eb('wallet_id', '=', walletId), eb('txid', '=', txid), eb('status', '=', 'pending'), eb('version', '=', version)]);

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
  version: Number(row.version),
  ...(row.spending_path !== null && row.spending_path !== undefined && { spendingPath: Number(row.spending_path) }),
});

export class KyselyPsbts implements PsbtRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** A PSBT row and its reservations change together: a crash between two statements must not split them. */
  private atomically<T>(work: (db: Kysely<Database>) => Promise<T>): Promise<T> {
    return this.db.isTransaction ? work(this.db) : this.db.transaction().execute(work);
  }

  async insert(psbt: Omit<StoredPsbt, 'version'>, inputs: readonly Outpoint[]): Promise<void> {
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
          version: 0,
          spending_path: psbt.spendingPath ?? null,
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

  async countPending(walletId: string): Promise<number> {
    const row = await this.db
      .selectFrom('psbts')
      .select((eb) => eb.fn.countAll().as('pending'))
      .where('wallet_id', '=', walletId)
      .where('status', '=', 'pending')
      .executeTakeFirstOrThrow();
    return Number(row.pending);
  }

  async updatePsbt(walletId: string, txid: string, psbt: string, updatedAt: number, expectedVersion: number): Promise<number | undefined> {
    const row = await this.db
      .updateTable('psbts')
      .where(pendingAt(walletId, txid, expectedVersion))
      .set((eb) => ({ psbt, updated_at: Math.round(updatedAt), version: eb('version', '+', 1) }))
      .returning('version')
      .executeTakeFirst();
    return row === undefined ? undefined : Number(row.version);
  }

  async setStatus(walletId: string, txid: string, status: Exclude<PsbtStatus, 'pending'>, updatedAt: number, expectedVersion: number): Promise<boolean> {
    return this.atomically(async (db) => {
      const result = await db
        .updateTable('psbts')
        .where(pendingAt(walletId, txid, expectedVersion))
        .set((eb) => ({ status, updated_at: Math.round(updatedAt), version: eb('version', '+', 1) }))
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return false;
      await db.deleteFrom('psbt_reservations').where('wallet_id', '=', walletId).where('psbt_txid', '=', txid).execute();
      return true;
    });
  }

  async delete(walletId: string, txid: string, expectedVersion: number): Promise<boolean> {
    return this.atomically(async (db) => {
      const result = await db.deleteFrom('psbts').where(pendingAt(walletId, txid, expectedVersion)).executeTakeFirst();
      if (Number(result.numDeletedRows) === 0) return false;
      await db.deleteFrom('psbt_reservations').where('wallet_id', '=', walletId).where('psbt_txid', '=', txid).execute();
      return true;
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
