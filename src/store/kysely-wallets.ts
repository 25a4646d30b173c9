/** The wallet repository over Kysely (SQLite and PostgreSQL). */
import { sql, type ExpressionBuilder, type Kysely, type Selectable } from 'kysely';
import type { NetworkName } from '../core/network.js';
import { inSnapshot, readChainRowsOfMany, toChainRows, toTransactionRows, type LargeWallet, type WalletWithChainRows } from './kysely-chain-batch.js';
import { PreparedQuery } from './prepared-query.js';
import { StoreConflictError } from './repositories.js';
import type {
  ReceiveIndexes,
  RevealResult,
  StoredWallet,
  SyncBlockRow,
  UtxoFlagRow,
  WalletChainChange,
  WalletChainChanges,
  WalletChainHead,
  WalletChainRows,
  WalletRepository,
  WalletShare,
  WalletShareAccess,
  WalletSyncRow,
  WalletTransactionRow,
} from './wallet-records.js';

export interface WalletsTable {
  id: string;
  alias: string;
  name: string;
  description: string;
  owner_name: string;
  network: string;
  receive_descriptor: string;
  change_descriptor: string;
  address_type: string;
  sigs_required: number;
  sigs_total: number;
  keys_json: string;
  gap_limit: number;
  birthday: number;
  created_at: number;
  revision: number;
  tip_height: number | null;
  tip_hash: string | null;
  last_used_receive: number;
  last_used_change: number;
  last_revealed_receive: number;
  shown_receive: number;
  chain_base_revision: number;
}

export interface WalletDatabase {
  wallets: WalletsTable;
  wallet_shares: { wallet_id: string; user_name: string; access: string };
  wallet_addresses: { wallet_id: string; branch: number; idx: number; script: string; changed_revision: number };
  wallet_transactions: {
    wallet_id: string;
    txid: string;
    hex: string;
    status: string;
    block_height: number | null;
    block_hash: string | null;
    block_time: number | null;
    first_seen: number;
    replaceable: number | null;
    changed_revision: number;
  };
  wallet_transaction_removals: { wallet_id: string; txid: string; revision: number };
  wallet_address_labels: { wallet_id: string; address: string; label: string; updated_at: number };
  wallet_utxo_flags: { wallet_id: string; txid: string; vout: number; frozen: number; label: string; updated_at: number };
  wallet_tx_labels: { wallet_id: string; txid: string; label: string; updated_at: number };
  sync_blocks: { hash: string; height: number; prev_hash: string; time: number };
}

const ROWS_PER_INSERT = 200;
/** Sync rows per statement of applySyncRows (six parameters each: well under SQLite's and PostgreSQL's limits). */
const SYNC_ROWS_PER_UPDATE = 500;

/** The receive index after the last one revealed or used, whichever is higher. */
const nextReceive = (eb: ExpressionBuilder<WalletDatabase, 'wallets'>) =>
  eb.case().when('last_revealed_receive', '>', eb.ref('last_used_receive')).then(eb.ref('last_revealed_receive')).else(eb.ref('last_used_receive')).end();

/**
 * The receive index the wallet details show: the one fixed in `shown_receive` while nothing at or past it
 * is used on chain, otherwise the first index past every used and revealed one (ADR 0003).
 */
const shownReceive = (eb: ExpressionBuilder<WalletDatabase, 'wallets'>) =>
  eb.case().when('shown_receive', '>', eb.ref('last_used_receive')).then(eb.ref('shown_receive')).else(eb(nextReceive(eb), '+', 1)).end();

/** The highest receive index used, revealed or shown: `addresses/next` hands out the one after it. */
const highestReceiveOut = (eb: ExpressionBuilder<WalletDatabase, 'wallets'>) =>
  eb.case().when(shownReceive(eb), '>', nextReceive(eb)).then(shownReceive(eb)).else(nextReceive(eb)).end();

function chunks<T>(items: readonly T[], size = ROWS_PER_INSERT): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

function toWallet(row: Selectable<WalletsTable>): StoredWallet {
  return {
    id: row.id,
    alias: row.alias,
    name: row.name,
    description: row.description,
    ownerName: row.owner_name,
    network: row.network as NetworkName,
    receiveDescriptor: row.receive_descriptor,
    changeDescriptor: row.change_descriptor,
    addressType: row.address_type as StoredWallet['addressType'],
    sigsRequired: Number(row.sigs_required),
    sigsTotal: Number(row.sigs_total),
    keys: JSON.parse(row.keys_json) as StoredWallet['keys'],
    gapLimit: Number(row.gap_limit),
    birthday: Number(row.birthday),
    createdAt: Number(row.created_at),
    revision: Number(row.revision),
    tip: row.tip_hash == null || row.tip_height == null ? null : { height: Number(row.tip_height), hash: row.tip_hash },
  };
}

function txRow(t: WalletTransactionRow, revision: number): WalletDatabase['wallet_transactions'] {
  return {
    changed_revision: revision,
    wallet_id: t.walletId,
    txid: t.txid,
    hex: t.hex,
    status: t.status,
    block_height: t.blockHeight,
    block_hash: t.blockHash,
    block_time: t.blockTime,
    first_seen: t.firstSeen,
    replaceable: t.replaceable === null ? null : t.replaceable ? 1 : 0,
  };
}

/** Owned and shared wallets in one query: it runs on every wallet listing and service-details read. */
function accessibleWallets(db: Kysely<WalletDatabase>) {
  return new PreparedQuery(db, (db: Kysely<WalletDatabase>, userName: string) =>
    db
      .selectFrom('wallets')
      .leftJoin('wallet_shares', (join) => join.onRef('wallet_shares.wallet_id', '=', 'wallets.id').on('wallet_shares.user_name', '=', userName))
      .selectAll('wallets')
      .select('wallet_shares.access')
      .where((eb) => eb.or([eb('wallets.owner_name', '=', userName), eb('wallet_shares.user_name', '=', userName)])),
  );
}

export class KyselyWallets implements WalletRepository {
  private readonly db: Kysely<WalletDatabase>;
  private readonly accessibleQuery: ReturnType<typeof accessibleWallets>;

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  constructor(db: Kysely<any>) {
    // The wallet tables are declared here rather than in the shared Database type.
    this.db = db as unknown as Kysely<WalletDatabase>;
    this.accessibleQuery = accessibleWallets(this.db);
  }

  async insert(wallet: StoredWallet, shares: readonly WalletShare[]): Promise<void> {
    const existing = await this.db.selectFrom('wallets').select('id').where('alias', '=', wallet.alias).executeTakeFirst();
    if (existing) throw new StoreConflictError(`A wallet with alias ${wallet.alias} already exists`);
    try {
      await this.db
        .insertInto('wallets')
        .values({
          id: wallet.id,
          alias: wallet.alias,
          name: wallet.name,
          description: wallet.description,
          owner_name: wallet.ownerName,
          network: wallet.network,
          receive_descriptor: wallet.receiveDescriptor,
          change_descriptor: wallet.changeDescriptor,
          address_type: wallet.addressType,
          sigs_required: wallet.sigsRequired,
          sigs_total: wallet.sigsTotal,
          keys_json: JSON.stringify(wallet.keys),
          gap_limit: wallet.gapLimit,
          birthday: wallet.birthday,
          created_at: wallet.createdAt,
          revision: wallet.revision,
          tip_height: wallet.tip?.height ?? null,
          tip_hash: wallet.tip?.hash ?? null,
          last_used_receive: -1,
          last_used_change: -1,
          last_revealed_receive: -1,
          shown_receive: -1,
          chain_base_revision: wallet.revision,
        })
        .execute();
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      if (code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
        throw new StoreConflictError(`A wallet with alias ${wallet.alias} already exists`);
      }
      throw error;
    }
    await this.replaceShares(wallet.id, shares);
  }

  async findByAlias(alias: string): Promise<StoredWallet | undefined> {
    const row = await this.db.selectFrom('wallets').selectAll().where('alias', '=', alias).executeTakeFirst();
    return row && toWallet(row);
  }

  async findById(id: string): Promise<StoredWallet | undefined> {
    const row = await this.db.selectFrom('wallets').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toWallet(row);
  }

  async listAll(): Promise<StoredWallet[]> {
    return (await this.db.selectFrom('wallets').selectAll().orderBy('created_at').orderBy('alias').execute()).map(toWallet);
  }

  async listRevisions(): Promise<Array<{ id: string; revision: number }>> {
    const rows = await this.db.selectFrom('wallets').select(['id', 'revision']).orderBy('created_at').orderBy('alias').execute();
    return rows.map((row) => ({ id: row.id, revision: Number(row.revision) }));
  }

  async findOfOtherNetwork(network: NetworkName): Promise<StoredWallet | undefined> {
    const row = await this.db.selectFrom('wallets').selectAll().where('network', '!=', network).orderBy('created_at').orderBy('alias').limit(1).executeTakeFirst();
    return row && toWallet(row);
  }

  async listAccessible(userName: string): Promise<Array<{ wallet: StoredWallet; access: 'owner' | WalletShareAccess }>> {
    const rows = await this.accessibleQuery.run(userName);
    const all = rows.map((row) => ({ wallet: toWallet(row), access: row.owner_name === userName ? ('owner' as const) : (row.access as WalletShareAccess) }));
    return all.sort((a, b) => a.wallet.createdAt - b.wallet.createdAt || (a.wallet.alias < b.wallet.alias ? -1 : 1));
  }

  async listAccessibleNames(userName: string): Promise<Array<{ id: string; alias: string; name: string }>> {
    return this.db
      .selectFrom('wallets')
      .select(['wallets.id', 'wallets.alias', 'wallets.name'])
      .where((eb) => eb.or([eb('wallets.owner_name', '=', userName), eb.exists(eb.selectFrom('wallet_shares').select('wallet_shares.wallet_id').whereRef('wallet_shares.wallet_id', '=', 'wallets.id').where('wallet_shares.user_name', '=', userName))]))
      .orderBy('wallets.created_at')
      .orderBy('wallets.alias')
      .execute();
  }

  async countOwned(userName: string): Promise<number> {
    const counted = await this.db.selectFrom('wallets').select((eb) => eb.fn.countAll<number | string>().as('n')).where('owner_name', '=', userName).executeTakeFirstOrThrow();
    return Number(counted.n);
  }

  async listAccessiblePage(userName: string, page: { limit?: number; offset?: number; walletIds?: readonly string[] }): Promise<{ wallets: StoredWallet[]; total: number }> {
    if (page.walletIds?.length === 0) return { wallets: [], total: 0 };
    const accessible = this.db
      .selectFrom('wallets')
      .where((eb) => eb.or([eb('wallets.owner_name', '=', userName), eb.exists(eb.selectFrom('wallet_shares').select('wallet_shares.wallet_id').whereRef('wallet_shares.wallet_id', '=', 'wallets.id').where('wallet_shares.user_name', '=', userName))]))
      .$if(page.walletIds !== undefined, (q) => q.where('wallets.id', 'in', page.walletIds!));
    const total = page.walletIds === undefined ? await this.countAccessible(userName) : Number((await accessible.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow()).n);
    const offset = page.offset ?? 0;
    // SQLite takes no OFFSET without a LIMIT: the rest of the list is total - offset rows.
    const limit = Math.min(page.limit ?? Number.POSITIVE_INFINITY, total - offset);
    if (limit <= 0) return { wallets: [], total };
    const rows = await accessible.selectAll('wallets').orderBy('wallets.created_at').orderBy('wallets.alias').limit(limit).offset(offset).execute();
    return { wallets: rows.map(toWallet), total };
  }

  /**
   * The wallets the user owns (counted in the owner index) plus those shared with them that they do not own: the
   * query of the page itself, counted, reads every wallet's row (tens of milliseconds at 10,000 wallets).
   */
  private async countAccessible(userName: string): Promise<number> {
    const owned = await this.db.selectFrom('wallets').select((eb) => eb.fn.countAll<number | string>().as('n')).where('owner_name', '=', userName).executeTakeFirstOrThrow();
    const shared = await this.db
      .selectFrom('wallet_shares')
      .innerJoin('wallets', 'wallets.id', 'wallet_shares.wallet_id')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('wallet_shares.user_name', '=', userName)
      .where('wallets.owner_name', '!=', userName)
      .executeTakeFirstOrThrow();
    return Number(owned.n) + Number(shared.n);
  }

  async shares(walletId: string): Promise<WalletShare[]> {
    const rows = await this.db.selectFrom('wallet_shares').selectAll().where('wallet_id', '=', walletId).orderBy('user_name').execute();
    return rows.map((r) => ({ userName: r.user_name, access: r.access as WalletShareAccess }));
  }

  async setOwner(walletId: string, ownerName: string): Promise<void> {
    await this.db.updateTable('wallets').set({ owner_name: ownerName }).where('id', '=', walletId).execute();
  }

  async replaceShares(walletId: string, shares: readonly WalletShare[]): Promise<void> {
    await this.db.deleteFrom('wallet_shares').where('wallet_id', '=', walletId).execute();
    if (shares.length === 0) return;
    await this.db
      .insertInto('wallet_shares')
      .values(shares.map((s) => ({ wallet_id: walletId, user_name: s.userName, access: s.access })))
      .execute();
  }

  async updateDetails(walletId: string, details: { name: string; description: string; keys: StoredWallet['keys'] }): Promise<void> {
    await this.db
      .updateTable('wallets')
      .set({ name: details.name, description: details.description, keys_json: JSON.stringify(details.keys) })
      .where('id', '=', walletId)
      .execute();
  }

  async delete(walletId: string): Promise<boolean> {
    // The wallet row first, as the sync takes its locks (wallet row, then its rows and PSBTs): the other
    // order could deadlock with a sync write of this wallet on PostgreSQL.
    await this.db.updateTable('wallets').set((eb) => ({ revision: eb('revision', '+', 1) })).where('id', '=', walletId).execute();
    // Explicit deletes: never depend on the connection's foreign-key setting.
    for (const table of ['wallet_shares', 'wallet_addresses', 'wallet_transactions', 'wallet_transaction_removals', 'wallet_address_labels', 'wallet_utxo_flags', 'wallet_tx_labels'] as const) {
      await this.db.deleteFrom(table).where('wallet_id', '=', walletId).execute();
    }
    const result = await this.db.deleteFrom('wallets').where('id', '=', walletId).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async revision(walletId: string): Promise<number | undefined> {
    const row = await this.db.selectFrom('wallets').select('revision').where('id', '=', walletId).executeTakeFirst();
    return row ? Number(row.revision) : undefined;
  }

  async chainRows(walletId: string): Promise<WalletChainRows | undefined> {
    const rows = await this.readChain(walletId, undefined);
    return rows === undefined || rows === 'reload' ? undefined : { revision: rows.revision, sync: rows.sync, lastRevealedReceive: rows.lastRevealedReceive, addresses: rows.addresses, transactions: rows.transactions };
  }

  async chainRowsInSlices(walletId: string, sliceRows: number, take: (transactions: WalletTransactionRow[], head: WalletChainHead) => Promise<void>): Promise<WalletChainHead | 'changed' | undefined> {
    let head: WalletChainHead | undefined;
    const blockHashes = new Map<string, string>();
    for (let after: string | undefined; ; ) {
      // Each slice in a snapshot of its own, at the first one's revision: every chain write raises it.
      const read = await inSnapshot(this.db, async (db) => {
        const wallet = await db.selectFrom('wallets').selectAll().where('id', '=', walletId).executeTakeFirst();
        if (wallet === undefined) return head === undefined ? undefined : ('changed' as const); // deleted meanwhile
        if (head !== undefined && Number(wallet.revision) !== head.revision) return 'changed' as const;
        const addresses = head === undefined ? await this.addressRecords(db, walletId, undefined) : [];
        const transactions = await db
          .selectFrom('wallet_transactions')
          .selectAll()
          .where('wallet_id', '=', walletId)
          .$if(after !== undefined, (q) => q.where('txid', '>', after!))
          .orderBy('txid')
          .limit(sliceRows)
          .execute();
        return { wallet, addresses, transactions };
      });
      if (read === undefined || read === 'changed') return read;
      if (head === undefined) {
        const { revision, sync, lastRevealedReceive, addresses } = toChainRows(read.wallet, toWallet(read.wallet), read.addresses, []);
        head = { revision, sync, lastRevealedReceive, addresses };
      }
      if (read.transactions.length > 0) await take(toTransactionRows(walletId, read.transactions, blockHashes), head);
      if (read.transactions.length < sliceRows) return head;
      after = read.transactions.at(-1)!.txid;
    }
  }

  chainRowsOfMany(walletIds: readonly string[], maxRows: number): Promise<{ taken: number; wallets: Map<string, WalletWithChainRows> }>;
  chainRowsOfMany(walletIds: readonly string[], maxRows: number, options: { largeInSlices: true }): Promise<{ taken: number; wallets: Map<string, WalletWithChainRows | LargeWallet> }>;
  chainRowsOfMany(walletIds: readonly string[], maxRows: number, options?: { largeInSlices: true }): Promise<{ taken: number; wallets: Map<string, WalletWithChainRows | LargeWallet> }> {
    return readChainRowsOfMany(this.db, walletIds, maxRows, toWallet, options?.largeInSlices ?? false);
  }

  async chainChangesSince(walletId: string, revision: number): Promise<WalletChainChanges | 'reload' | undefined> {
    return this.readChain(walletId, revision);
  }

  /** The wallet's chain rows, all of them (`since` undefined) or those written after revision `since`. */
  private async readChain(walletId: string, since: number | undefined): Promise<WalletChainChanges | 'reload' | undefined> {
    // Several reads of one revision: a changeset committing between them would pair transactions with
    // addresses of another revision, and a coin paying an address not yet read would vanish from the view.
    // On PostgreSQL only repeatable read gives all statements one snapshot; SQLite serialises on its connection.
    const read = async (db: Kysely<WalletDatabase>) => {
      const wallet = await db.selectFrom('wallets').selectAll().where('id', '=', walletId).executeTakeFirst();
      if (!wallet) return undefined;
      if (since !== undefined && since < Number(wallet.chain_base_revision)) return 'reload' as const;
      const addresses = await this.addressRecords(db, walletId, since);
      const transactions = await db
        .selectFrom('wallet_transactions')
        .selectAll()
        .where('wallet_id', '=', walletId)
        .$if(since !== undefined, (q) => q.where('changed_revision', '>', since!))
        .orderBy('txid')
        .execute();
      const removed =
        since === undefined
          ? []
          : await db.selectFrom('wallet_transaction_removals').select('txid').where('wallet_id', '=', walletId).where('revision', '>', since).execute();
      return { wallet, addresses, transactions, removed };
    };
    const rows = await inSnapshot(this.db, read);
    if (rows === undefined || rows === 'reload') return rows;
    const { wallet, addresses, transactions, removed } = rows;
    const present = new Set(transactions.map((t) => t.txid));
    return {
      ...toChainRows(wallet, toWallet(wallet), addresses, transactions),
      // A transaction removed and written again later is present, not removed.
      removedTransactions: removed.map((r) => r.txid).filter((txid) => !present.has(txid)),
    };
  }

  /** The wallet's address rows (those written after revision `since`, if given), by branch then index. */
  private addressRecords(db: Kysely<WalletDatabase>, walletId: string, since: number | undefined) {
    return db
      .selectFrom('wallet_addresses')
      .select(['branch', 'idx', 'script'])
      .where('wallet_id', '=', walletId)
      .$if(since !== undefined, (q) => q.where('changed_revision', '>', since!))
      .orderBy('branch')
      .orderBy('idx')
      .execute();
  }

  async applyChange(change: WalletChainChange, expectedRevision: number): Promise<number> {
    const id = change.walletId;
    const updated = await this.db
      .updateTable('wallets')
      .set((eb) => ({
        revision: eb('revision', '+', 1),
        tip_height: change.sync.tip?.height ?? null,
        tip_hash: change.sync.tip?.hash ?? null,
        last_used_receive: change.sync.lastUsedReceive,
        last_used_change: change.sync.lastUsedChange,
      }))
      .where('id', '=', id)
      .where('revision', '=', expectedRevision)
      .returning('revision')
      .executeTakeFirst();
    if (updated === undefined) throw new StoreConflictError(`Wallet ${id} changed while it was being synced`);
    const revision = Number(updated.revision);
    for (const part of chunks(change.addressesAdded)) {
      await this.db
        .insertInto('wallet_addresses')
        .values(part.map((a) => ({ wallet_id: id, branch: a.branch, idx: a.index, script: a.script, changed_revision: revision })))
        .execute();
    }
    const removed = [...change.transactionsRemoved, ...change.transactionsUpdated.map((t) => t.txid)];
    for (const part of chunks(removed)) {
      await this.db.deleteFrom('wallet_transactions').where('wallet_id', '=', id).where('txid', 'in', part).execute();
    }
    for (const part of chunks(change.transactionsRemoved)) {
      await this.db
        .insertInto('wallet_transaction_removals')
        .values(part.map((txid) => ({ wallet_id: id, txid, revision })))
        .onConflict((oc) => oc.columns(['wallet_id', 'txid']).doUpdateSet({ revision }))
        .execute();
    }
    for (const part of chunks([...change.transactionsAdded, ...change.transactionsUpdated], 50)) {
      await this.db.insertInto('wallet_transactions').values(part.map((t) => txRow(t, revision))).execute();
    }
    return revision;
  }

  async applySyncRows(rows: readonly { sync: WalletSyncRow; expectedRevision: number }[]): Promise<Map<string, number>> {
    const revisions = new Map<string, number>();
    for (const part of chunks(rows, SYNC_ROWS_PER_UPDATE)) {
      // One `update ... from (values ...)` for both stores; the casts type PostgreSQL's parameters (text otherwise).
      // The unary `+` keeps SQLite's planner off an index on the revision: without it, it scanned every wallet per
      // statement (0.2 s a chunk at 10,000 wallets) instead of finding each by its id.
      const values = sql.join(
        part.map(({ sync, expectedRevision }) => sql`(${sync.walletId}, cast(${expectedRevision} as bigint), cast(${sync.tip?.height ?? null} as integer), cast(${sync.tip?.hash ?? null} as text), cast(${sync.lastUsedReceive} as integer), cast(${sync.lastUsedChange} as integer))`),
      );
      const updated = await sql<{ id: string; revision: number | string }>`
        update wallets set revision = revision + 1, tip_height = moved.column3, tip_hash = moved.column4,
          last_used_receive = moved.column5, last_used_change = moved.column6
        from (values ${values}) as moved
        where wallets.id = moved.column1 and wallets.revision = +moved.column2
        returning id, revision`.execute(this.db);
      for (const row of updated.rows) revisions.set(row.id, Number(row.revision));
      const conflicted = part.find(({ sync }) => !revisions.has(sync.walletId));
      if (conflicted) throw new StoreConflictError(`Wallet ${conflicted.sync.walletId} changed while it was being synced`);
    }
    return revisions;
  }

  async holdRevision(walletId: string, revision: number): Promise<boolean> {
    // A write that changes nothing still takes the row's lock (PostgreSQL) or the database's (SQLite).
    const held = await this.db.updateTable('wallets').set((eb) => ({ revision: eb.ref('revision') })).where('id', '=', walletId).where('revision', '=', revision).executeTakeFirst();
    return Number(held.numUpdatedRows) === 1;
  }

  async revealNextReceive(walletId: string): Promise<RevealResult> {
    // One statement: PostgreSQL re-reads a row another transaction updated before applying this one,
    // and SQLite has one writer, so two callers never compute the same index. Both columns are set from
    // the row as it was: the shown index is fixed where the details showed it, and the index handed out
    // comes after it. `revision` stays: the reveal changes no chain row, and moving it would make an
    // in-flight sync pass conflict (and, under a steady stream of reveals, never commit) and every reader
    // reload the wallet.
    const row = await this.db
      .updateTable('wallets')
      .set((eb) => ({ shown_receive: shownReceive(eb), last_revealed_receive: eb(highestReceiveOut(eb), '+', 1) }))
      .where('id', '=', walletId)
      // Past the gap limit a wallet restored from the same keys would not see the payment.
      .where((eb) => eb(highestReceiveOut(eb), '<', eb('last_used_receive', '+', eb.ref('gap_limit'))))
      .returning('last_revealed_receive')
      .executeTakeFirst();
    if (row !== undefined) return { index: Number(row.last_revealed_receive) };
    return (await this.revision(walletId)) === undefined ? 'not_found' : 'gap_limit_reached';
  }

  async receiveIndexes(walletId: string): Promise<ReceiveIndexes | undefined> {
    const row = await this.db
      .selectFrom('wallets')
      .select((eb) => [shownReceive(eb).as('shown'), 'last_revealed_receive', 'last_used_receive'])
      .where('id', '=', walletId)
      .executeTakeFirst();
    return row && { shown: Number(row.shown), lastRevealed: Number(row.last_revealed_receive), lastUsed: Number(row.last_used_receive) };
  }

  async revealedReceiveIndexes(): Promise<Map<string, number>> {
    // The wallets that revealed none (most) are not read: the index holds only the others (migration 18).
    const rows = await this.db.selectFrom('wallets').select(['id', 'last_revealed_receive']).where(sql<boolean>`last_revealed_receive >= 0`).execute(); // a literal: the planner matches it to the index
    return new Map(rows.map((r) => [r.id, Number(r.last_revealed_receive)]));
  }

  async resetChain(walletId: string, birthday: number): Promise<number> {
    await this.db.deleteFrom('wallet_addresses').where('wallet_id', '=', walletId).execute();
    await this.db.deleteFrom('wallet_transactions').where('wallet_id', '=', walletId).execute();
    await this.db.deleteFrom('wallet_transaction_removals').where('wallet_id', '=', walletId).execute();
    // The rows start again: no reader can follow from before (chain_base_revision).
    const row = await this.db
      .updateTable('wallets')
      .set((eb) => ({
        revision: eb('revision', '+', 1),
        chain_base_revision: eb('revision', '+', 1),
        birthday,
        tip_height: null,
        tip_hash: null,
        last_used_receive: -1,
        last_used_change: -1,
      }))
      .where('id', '=', walletId)
      .returning('revision')
      .executeTakeFirst();
    if (row === undefined) throw new StoreConflictError(`Wallet ${walletId} does not exist`);
    return Number(row.revision);
  }

  async updateGapLimit(walletId: string, gapLimit: number): Promise<boolean> {
    const result = await this.db
      .updateTable('wallets')
      // Readers derive scripts by the gap limit: they load the wallet again (chain_base_revision).
      .set((eb) => ({ gap_limit: gapLimit, revision: eb('revision', '+', 1), chain_base_revision: eb('revision', '+', 1) }))
      .where('id', '=', walletId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async recordBlocks(blocks: readonly SyncBlockRow[]): Promise<void> {
    for (const part of chunks(blocks)) {
      await this.db
        .insertInto('sync_blocks')
        .values(part.map((b) => ({ hash: b.hash, height: b.height, prev_hash: b.prevHash, time: b.time })))
        .onConflict((oc) => oc.column('hash').doNothing())
        .execute();
    }
  }

  async findBlock(hash: string): Promise<SyncBlockRow | undefined> {
    const row = await this.db.selectFrom('sync_blocks').selectAll().where('hash', '=', hash).executeTakeFirst();
    return row && { hash: row.hash, height: Number(row.height), prevHash: row.prev_hash, time: Number(row.time) };
  }

  async addressLabels(walletId: string): Promise<Map<string, string>> {
    const rows = await this.db.selectFrom('wallet_address_labels').select(['address', 'label']).where('wallet_id', '=', walletId).execute();
    return new Map(rows.map((r) => [r.address, r.label]));
  }

  async setAddressLabels(walletId: string, labels: readonly { address: string; label: string }[], at = Date.now()): Promise<void> {
    for (const { address, label } of labels) {
      await this.db.deleteFrom('wallet_address_labels').where('wallet_id', '=', walletId).where('address', '=', address).execute();
      if (label !== '') await this.db.insertInto('wallet_address_labels').values({ wallet_id: walletId, address, label, updated_at: at }).execute();
    }
  }

  async utxoFlags(walletId: string): Promise<UtxoFlagRow[]> {
    const rows = await this.db.selectFrom('wallet_utxo_flags').selectAll().where('wallet_id', '=', walletId).execute();
    return rows.map((r) => ({ txid: r.txid, vout: Number(r.vout), frozen: Number(r.frozen) === 1, label: r.label }));
  }

  async setUtxoFlag(walletId: string, flag: UtxoFlagRow, at = Date.now()): Promise<void> {
    await this.db.deleteFrom('wallet_utxo_flags').where('wallet_id', '=', walletId).where('txid', '=', flag.txid).where('vout', '=', flag.vout).execute();
    if (!flag.frozen && flag.label === '') return;
    await this.db
      .insertInto('wallet_utxo_flags')
      .values({ wallet_id: walletId, txid: flag.txid, vout: flag.vout, frozen: flag.frozen ? 1 : 0, label: flag.label, updated_at: at })
      .execute();
  }
}
