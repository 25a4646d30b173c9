/**
 * What the wallet use cases and the chain sync store. Row shapes mirror the wallet engine's stored
 * rows (structurally: the store layer does not import the engine).
 */
import type { NetworkName } from '../core/network.js';

export interface WalletKeyRow {
  fingerprint: string;
  derivation: string;
  xpub: string;
  label: string;
  /** When the label last changed (epoch ms); absent for labels set at creation. */
  labelUpdatedAt?: number;
}

export interface StoredWallet {
  id: string;
  alias: string;
  name: string;
  description: string;
  ownerName: string;
  network: NetworkName;
  receiveDescriptor: string;
  changeDescriptor: string;
  addressType: 'bech32' | 'bech32m' | 'p2sh-segwit' | 'legacy';
  sigsRequired: number;
  sigsTotal: number;
  keys: WalletKeyRow[];
  gapLimit: number;
  /** First block height the sync looks at. */
  birthday: number;
  /** Epoch milliseconds. */
  createdAt: number;
  /** Grows with every change of the wallet's chain rows. */
  revision: number;
  tip: { height: number; hash: string } | null;
}

export type WalletShareAccess = 'read' | 'spend';

export interface WalletShare {
  userName: string;
  access: WalletShareAccess;
}

export interface WalletAddressRow {
  walletId: string;
  branch: 0 | 1;
  index: number;
  script: string;
}

export interface WalletTransactionRow {
  walletId: string;
  txid: string;
  hex: string;
  status: 'confirmed' | 'mempool' | 'dropped';
  blockHeight: number | null;
  blockHash: string | null;
  blockTime: number | null;
  firstSeen: number;
  replaceable: boolean | null;
}

export interface WalletSyncRow {
  walletId: string;
  tip: { height: number; hash: string } | null;
  lastUsedReceive: number;
  lastUsedChange: number;
}

/** Everything the engine needs to rebuild one wallet, with the revision it was read at. */
export interface WalletChainRows {
  revision: number;
  sync: WalletSyncRow;
  /**
   * Highest receive index handed out by `revealNextReceive` (-1: none). Not part of the sync row: a
   * changeset never writes it, so a sync pass cannot undo a reveal that committed meanwhile.
   */
  lastRevealedReceive: number;
  addresses: WalletAddressRow[];
  transactions: WalletTransactionRow[];
}

/**
 * What changed in a wallet's chain rows after a revision a reader holds: the wallet's sync state now, the
 * addresses and transactions written since (full rows), and the transactions removed since.
 */
/** A wallet's chain rows but its transactions. */
export type WalletChainHead = Omit<WalletChainRows, 'transactions'>;

export interface WalletChainChanges extends WalletChainRows {
  removedTransactions: string[];
}

/** One wallet's part of an engine changeset. */
export interface WalletChainChange {
  walletId: string;
  addressesAdded: WalletAddressRow[];
  transactionsAdded: WalletTransactionRow[];
  transactionsUpdated: WalletTransactionRow[];
  transactionsRemoved: string[];
  sync: WalletSyncRow;
}

export interface SyncBlockRow {
  hash: string;
  height: number;
  prevHash: string;
  time: number;
}

export interface UtxoFlagRow {
  txid: string;
  vout: number;
  frozen: boolean;
  label: string;
}

/** A revealed receive index; `gap_limit_reached` when it would pass the gap limit; `not_found` without the wallet. */
export type RevealResult = { index: number } | 'gap_limit_reached' | 'not_found';

/** Where a wallet's receive addresses stand in the store (ADR 0003). */
export interface ReceiveIndexes {
  /** The index the wallet details show as its address; `revealNextReceive` never hands it out. */
  shown: number;
  /** The highest index handed out by `revealNextReceive` (-1: none). */
  lastRevealed: number;
  /** The highest index used on chain as the sync last wrote it (-1: none). */
  lastUsed: number;
}

export interface WalletRepository {
  /** Throws StoreConflictError when the alias is taken. */
  insert(wallet: StoredWallet, shares: readonly WalletShare[]): Promise<void>;
  findByAlias(alias: string): Promise<StoredWallet | undefined>;
  findById(id: string): Promise<StoredWallet | undefined>;
  /** Every wallet, oldest first. */
  listAll(): Promise<StoredWallet[]>;
  /** Every wallet's id and revision, oldest first (two columns: what the sync compares at each pass). */
  listRevisions(): Promise<Array<{ id: string; revision: number }>>;
  /** One wallet of another network than `network`, if any (the start's check, whatever the number of wallets). */
  findOfOtherNetwork(network: NetworkName): Promise<StoredWallet | undefined>;
  /** Wallets the user owns or that are shared with them, oldest first, with the user's access. */
  listAccessible(userName: string): Promise<Array<{ wallet: StoredWallet; access: 'owner' | WalletShareAccess }>>;
  /** The id, alias and name of each wallet the user owns or that is shared with them, oldest first then by alias (no other column read). */
  listAccessibleNames(userName: string): Promise<Array<{ id: string; alias: string; name: string }>>;
  /** How many wallets the user owns. */
  countOwned(userName: string): Promise<number>;
  /**
   * One page of the wallets the user owns or that are shared with them (only those of `walletIds` when given),
   * oldest first then by alias, and how many there are in all: read with the page's cost, whatever the total.
   */
  listAccessiblePage(userName: string, page: { limit?: number; offset?: number; walletIds?: readonly string[] }): Promise<{ wallets: StoredWallet[]; total: number }>;
  shares(walletId: string): Promise<WalletShare[]>;
  /** Hands the wallet to another owner (a user deletion); shares stay as they are. */
  setOwner(walletId: string, ownerName: string): Promise<void>;
  replaceShares(walletId: string, shares: readonly WalletShare[]): Promise<void>;
  updateDetails(walletId: string, details: { name: string; description: string; keys: WalletKeyRow[] }): Promise<void>;
  /** Changes the gap limit and raises the revision (every reader and the sync derive again). False when absent. */
  updateGapLimit(walletId: string, gapLimit: number): Promise<boolean>;
  /** Removes the wallet and all its rows. False when absent. */
  delete(walletId: string): Promise<boolean>;
  revision(walletId: string): Promise<number | undefined>;
  chainRows(walletId: string): Promise<WalletChainRows | undefined>;
  /**
   * The wallet's chain rows as `chainRows` reads them, its transactions handed to `take` in slices of up to
   * `sliceRows` (by txid) with the rest, each read once `take` is done with the one before: a large wallet's rows
   * are never all held at once. Each slice is read in a snapshot of its own (the first with the rest) at the first
   * one's revision; `changed` when the wallet was written meanwhile (read it with `chainRows`), undefined without
   * the wallet.
   */
  chainRowsInSlices(walletId: string, sliceRows: number, take: (transactions: WalletTransactionRow[], head: WalletChainHead) => Promise<void>): Promise<WalletChainHead | 'changed' | undefined>;
  /**
   * The wallets at the start of `walletIds` whose chain rows (addresses and transactions) add up to at most
   * `maxRows` (at least the first, whatever its size), each with its row, read in one snapshot: each wallet's
   * rows are those of its revision, as `chainRows` reads them. `taken` is how many ids were read; a wallet
   * deleted meanwhile is absent. With `largeInSlices`, a first wallet larger than `maxRows` comes with its row
   * alone (`rows: 'in slices'`), to be read with `chainRowsInSlices`: its rows are not all held at once.
   */
  chainRowsOfMany(walletIds: readonly string[], maxRows: number): Promise<{ taken: number; wallets: Map<string, { wallet: StoredWallet; rows: WalletChainRows }> }>;
  chainRowsOfMany(
    walletIds: readonly string[],
    maxRows: number,
    options: { largeInSlices: true },
  ): Promise<{ taken: number; wallets: Map<string, { wallet: StoredWallet; rows: WalletChainRows | 'in slices' }> }>;
  /**
   * The chain rows written after `revision`, read at one revision (undefined without the wallet).
   * `reload` when the rows started again since (a rescan, a new gap limit): read them all.
   */
  chainChangesSince(walletId: string, revision: number): Promise<WalletChainChanges | 'reload' | undefined>;
  /**
   * Writes one wallet's changeset if the wallet is still at `expectedRevision`; returns the new revision.
   * Throws StoreConflictError when the wallet changed meanwhile (or was deleted). Call inside a transaction.
   */
  applyChange(change: WalletChainChange, expectedRevision: number): Promise<number>;
  /**
   * Writes the sync rows of wallets whose change adds, updates and removes no row (a block that only moved their
   * tip), a few hundred wallets a statement, each if still at its expected revision; returns the new revisions.
   * Throws StoreConflictError when any of them changed meanwhile (or was deleted). Call inside a transaction.
   */
  applySyncRows(rows: readonly { sync: WalletSyncRow; expectedRevision: number }[]): Promise<Map<string, number>>;
  /**
   * Inside a store transaction: true when the wallet's chain rows are still at `revision`, and then held
   * there until the transaction ends (a sync write of the wallet waits for it). What a write computed from
   * the wallet's coins (a PSBT's reservations) compares before it commits.
   */
  holdRevision(walletId: string, revision: number): Promise<boolean>;
  /**
   * Hands out the next receive index in one atomic statement: one past the last revealed, the last used
   * and the shown index (fixing the shown index where it stands), remembered as the last revealed, but
   * never more than the gap limit past the last used index. Concurrent callers (of any instance) never
   * get the same index, nor the shown one. Leaves `revision` alone (see migrations 0004 and 0013).
   */
  revealNextReceive(walletId: string): Promise<RevealResult>;
  /** The shown, last revealed and last used receive indexes of a wallet; undefined when it is gone. */
  receiveIndexes(walletId: string): Promise<ReceiveIndexes | undefined>;
  /** The last revealed receive index of every wallet that revealed one (id -> index; a wallet that revealed none is absent). */
  revealedReceiveIndexes(): Promise<Map<string, number>>;
  /**
   * Drops the wallet's chain rows and restarts it at `birthday` (a rescan). Returns the new revision.
   * The last revealed receive index stays: those addresses were handed out and are still watched.
   */
  resetChain(walletId: string, birthday: number): Promise<number>;
  /** Remembers applied block headers (idempotent). */
  recordBlocks(blocks: readonly SyncBlockRow[]): Promise<void>;
  findBlock(hash: string): Promise<SyncBlockRow | undefined>;
  addressLabels(walletId: string): Promise<Map<string, string>>;
  /** Sets labels; an empty label removes it. `at`: their modification time (epoch ms), default now. */
  setAddressLabels(walletId: string, labels: readonly { address: string; label: string }[], at?: number): Promise<void>;
  utxoFlags(walletId: string): Promise<UtxoFlagRow[]>;
  setUtxoFlag(walletId: string, flag: UtxoFlagRow, at?: number): Promise<void>;
}
