/** The chain rows of many wallets in one read (the sync's first load), over Kysely (SQLite and PostgreSQL). */
import { sql, type Kysely, type Selectable } from 'kysely';
import type { WalletDatabase, WalletsTable } from './kysely-wallets.js';
import type { StoredWallet, WalletChainRows, WalletTransactionRow } from './wallet-records.js';

/** One wallet of a batched read: its row and its chain rows, of the same revision. */
export interface WalletWithChainRows {
  wallet: StoredWallet;
  rows: WalletChainRows;
}

/** A wallet read alone whose rows pass the batch's bound: its caller reads them in slices. */
export interface LargeWallet {
  wallet: StoredWallet;
  rows: 'in slices';
}

type TransactionRecord = Selectable<WalletDatabase['wallet_transactions']>;
type AddressRecord = Pick<Selectable<WalletDatabase['wallet_addresses']>, 'branch' | 'idx' | 'script'>;

const nullableNumber = (v: unknown): number | null => (v == null ? null : Number(v));

/** A wallet's chain rows from its stored rows (addresses by branch then index, transactions by txid). */
export function toChainRows(wallet: Selectable<WalletsTable>, stored: StoredWallet, addresses: readonly AddressRecord[], transactions: readonly TransactionRecord[]): WalletChainRows {
  const walletId = wallet.id;
  return {
    revision: stored.revision,
    sync: { walletId, tip: stored.tip, lastUsedReceive: Number(wallet.last_used_receive), lastUsedChange: Number(wallet.last_used_change) },
    lastRevealedReceive: Number(wallet.last_revealed_receive),
    addresses: addresses.map((a) => ({ walletId, branch: Number(a.branch) === 1 ? 1 : 0, index: Number(a.idx), script: a.script })),
    transactions: toTransactionRows(walletId, transactions),
  };
}

/**
 * Stored transaction rows from their records. Each block's hash is one string for all its rows (`blockHashes`,
 * kept across the slices of one read): the driver reads a copy per row, 80 bytes each of a large wallet's read.
 */
export function toTransactionRows(walletId: string, transactions: readonly TransactionRecord[], blockHashes = new Map<string, string>()): WalletTransactionRow[] {
  return transactions.map((t) => {
    let blockHash = t.block_hash;
    if (blockHash !== null) {
      const known = blockHashes.get(blockHash);
      if (known === undefined) blockHashes.set(blockHash, blockHash);
      else blockHash = known;
    }
    return {
      walletId,
      txid: t.txid,
      hex: t.hex,
      status: t.status as WalletTransactionRow['status'],
      blockHeight: nullableNumber(t.block_height),
      blockHash,
      blockTime: nullableNumber(t.block_time),
      firstSeen: Number(t.first_seen),
      replaceable: t.replaceable == null ? null : Number(t.replaceable) === 1,
    };
  });
}

/**
 * Reads, in one snapshot, the wallets at the start of `walletIds` whose chain rows (addresses and transactions)
 * add up to at most `maxRows`, and at least the first one whatever its size: a large wallet is read alone, or with
 * `largeInSlices` left for its caller to read in slices (its row only). `taken` is how many ids were read; a wallet
 * deleted meanwhile is absent from `wallets`.
 */
export async function readChainRowsOfMany(
  db: Kysely<WalletDatabase>,
  walletIds: readonly string[],
  maxRows: number,
  toWallet: (row: Selectable<WalletsTable>) => StoredWallet,
  largeInSlices = false,
): Promise<{ taken: number; wallets: Map<string, WalletWithChainRows | LargeWallet> }> {
  if (walletIds.length === 0) return { taken: 0, wallets: new Map() };
  // One snapshot for every statement, as for one wallet (see KyselyWallets.readChain): each wallet's rows are
  // those of the revision read with it.
  const read = async (tx: Kysely<WalletDatabase>) => {
    const ids = [...walletIds];
    const sizes = new Map<string, number>();
    // One wallet is read whatever its size: nothing to count (a pass after a creation reads one), unless a large one
    // is left for slices.
    for (const table of ids.length > 1 || largeInSlices ? (['wallet_addresses', 'wallet_transactions'] as const) : []) {
      const counts = await tx.selectFrom(table).select(['wallet_id', (eb) => eb.fn.countAll().as('n')]).where('wallet_id', 'in', ids).groupBy('wallet_id').execute();
      for (const { wallet_id, n } of counts) sizes.set(wallet_id, (sizes.get(wallet_id) ?? 0) + Number(n));
    }
    let taken = 1;
    let rows = sizes.get(ids[0]!) ?? 0;
    while (taken < ids.length && rows + (sizes.get(ids[taken]!) ?? 0) <= maxRows) rows += sizes.get(ids[taken++]!) ?? 0;
    const chosen = ids.slice(0, taken);
    const wallets = await tx.selectFrom('wallets').selectAll().where('id', 'in', chosen).execute();
    if (largeInSlices && rows > maxRows) return { taken, wallets, large: true as const };
    const addresses = await tx.selectFrom('wallet_addresses').select(['wallet_id', 'branch', 'idx', 'script']).where('wallet_id', 'in', chosen).orderBy('wallet_id').orderBy('branch').orderBy('idx').execute();
    return { taken, wallets, addresses, transactionsOf: await transactionsInSlices(tx, chosen) };
  };
  const batch = await inSnapshot(db, read);
  if ('large' in batch) return { taken: batch.taken, wallets: new Map(batch.wallets.map((row) => [row.id, { wallet: toWallet(row), rows: 'in slices' as const }])) };
  const { taken, wallets, addresses, transactionsOf } = batch;
  const addressesOf = groupBy(addresses);
  const out = new Map<string, WalletWithChainRows | LargeWallet>();
  for (const row of wallets) {
    const wallet = toWallet(row);
    out.set(row.id, { wallet, rows: { ...toChainRows(row, wallet, addressesOf.get(row.id) ?? [], []), transactions: transactionsOf.get(row.id) ?? [] } });
  }
  return { taken, wallets: out };
}

/** Transaction records read per statement: a batch's rows in one, a large wallet's in slices. */
const TRANSACTIONS_PER_SLICE = 5_000;

/**
 * The wallets' transaction rows by wallet, by txid, read in slices and each slice made rows before the next is read:
 * the driver's records of a large wallet (another copy of every row) are never all held at once.
 */
async function transactionsInSlices(tx: Kysely<WalletDatabase>, walletIds: readonly string[]): Promise<Map<string, WalletTransactionRow[]>> {
  const out = new Map<string, WalletTransactionRow[]>();
  const blockHashes = new Map<string, string>();
  for (let after: TransactionRecord | undefined; ; ) {
    const slice = await tx
      .selectFrom('wallet_transactions')
      .selectAll()
      .where('wallet_id', 'in', walletIds)
      .$if(after !== undefined, (q) => q.where(sql<boolean>`(wallet_id, txid) > (${after!.wallet_id}, ${after!.txid})`))
      .orderBy('wallet_id')
      .orderBy('txid')
      .limit(TRANSACTIONS_PER_SLICE)
      .execute();
    for (const [walletId, records] of groupBy(slice)) {
      const rows = out.get(walletId) ?? [];
      for (const row of toTransactionRows(walletId, records, blockHashes)) rows.push(row);
      out.set(walletId, rows);
    }
    if (slice.length < TRANSACTIONS_PER_SLICE) return out;
    after = slice.at(-1);
  }
}

/** `read` in one snapshot: on PostgreSQL only repeatable read gives all its statements one; SQLite serialises on its connection. */
export function inSnapshot<T>(db: Kysely<WalletDatabase>, read: (db: Kysely<WalletDatabase>) => Promise<T>): Promise<T> {
  return db.isTransaction ? read(db) : db.transaction().setIsolationLevel('repeatable read').setAccessMode('read only').execute(read);
}

function groupBy<T extends { wallet_id: string }>(rows: readonly T[]): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const row of rows) {
    const list = out.get(row.wallet_id);
    if (list) list.push(row);
    else out.set(row.wallet_id, [row]);
  }
  return out;
}
