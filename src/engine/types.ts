/**
 * Public types of the wallet engine: chain updates in, changesets out, and the rows a store keeps so the
 * engine state can be rebuilt after a restart. Everything is plain data (bigint sats, hex strings, numbers).
 */

/** 0 = receive branch, 1 = change branch (BIP44 `.../0/*` and `.../1/*`). */
export type Branch = 0 | 1;

/** Scripts of `branch/fromIndex` .. `branch/fromIndex + count - 1`, in order. Must be deterministic. */
export type ScriptDeriver = (branch: Branch, fromIndex: number, count: number) => Uint8Array[];

/** The same scripts as hex: a deriver that keeps them as strings gives the engine those very strings (no copy). */
export type HexScriptDeriver = (branch: Branch, fromIndex: number, count: number) => string[];

export const DEFAULT_GAP_LIMIT = 20;

/** What the engine needs to know about a wallet beyond its stored rows. */
export interface WalletConfig {
  walletId: string;
  /** Unused scripts kept derived after the last used one, per branch. Default 20. */
  gapLimit?: number;
  derive: ScriptDeriver;
  /** Used instead of `derive` where the engine derives, if given. */
  deriveHex?: HexScriptDeriver;
  /**
   * The deriver's own string of the script at `branch`/`index` if it holds it already (never derives): the outputs
   * paying the wallet hold that string instead of a copy each.
   */
  knownScript?: (branch: Branch, index: number) => string | undefined;
}

export interface BlockRef {
  height: number;
  hash: string;
}

// ---- Chain updates -------------------------------------------------------------------------------------------

export type { BlockConnected, BlockDisconnected, ChainUpdate, MempoolEntry, MempoolSnapshot } from '../core/chain-update.js';

// ---- Stored rows (what a changeset carries and what restoring reads) ------------------------------------------

export interface StoredAddress {
  walletId: string;
  branch: Branch;
  index: number;
  /** scriptPubKey, lower-case hex. */
  script: string;
}

/**
 * `confirmed`: in a block of the wallet's chain. `mempool`: unconfirmed and in the node's mempool (or just
 * returned from a disconnected block). `dropped`: left the mempool unconfirmed (replaced, double-spent or
 * evicted); it spends nothing and pays nothing, and is kept only as history.
 */
export type TxStatus = 'confirmed' | 'mempool' | 'dropped';

export interface StoredTransaction {
  walletId: string;
  txid: string;
  /** Raw transaction, with witness, lower-case hex. */
  hex: string;
  status: TxStatus;
  blockHeight: number | null;
  blockHash: string | null;
  blockTime: number | null;
  /** First time the wallet saw it: mempool entry time, or the block time when first seen in a block. */
  firstSeen: number;
  /** BIP125 replaceability while in the mempool (it or an unconfirmed ancestor signals); null otherwise. */
  replaceable: boolean | null;
}

export interface StoredWalletSync {
  walletId: string;
  /** Last block applied to this wallet; null before the first one. */
  tip: BlockRef | null;
  /** Highest index seen used on each branch, -1 for none. */
  lastUsedReceive: number;
  lastUsedChange: number;
}

/** Everything stored about one wallet; `addWallet` rebuilds the engine from these. */
export interface StoredWalletRows {
  sync: StoredWalletSync;
  /**
   * Highest receive index handed out to someone (-1 or absent: none). Scripts stay derived and watched up
   * to `max(lastUsedReceive, lastRevealedReceive) + gapLimit`, so a payment to an address revealed beyond
   * the gap is seen. Not part of `sync`: it changes outside chain updates and no changeset carries it.
   */
  lastRevealedReceive?: number;
  addresses: StoredAddress[];
  transactions: StoredTransaction[];
}

// ---- Changeset ---------------------------------------------------------------------------------------------

export interface WalletChangeset {
  walletId: string;
  /** Newly derived scripts to insert. */
  addressesAdded: StoredAddress[];
  /** New transactions to insert (full rows). */
  transactionsAdded: StoredTransaction[];
  /** Known transactions whose row changed (full rows, replace by walletId + txid). */
  transactionsUpdated: StoredTransaction[];
  /** Transactions to delete (walletId + txid). */
  transactionsRemoved: string[];
  /** The wallet's sync row after the update (replace). */
  sync: StoredWalletSync;
}

/** Plain data; persist all of it in one store transaction. Wallets without changes are not listed. */
export interface EngineChangeset {
  wallets: WalletChangeset[];
}

// ---- Views -------------------------------------------------------------------------------------------------

/** Bitcoin Core `getbalances` (descriptor watch-only): trusted, untrusted_pending, immature. Sats. */
export interface WalletBalances {
  confirmed: bigint;
  unconfirmed: bigint;
  immature: bigint;
}

/** One entry of Bitcoin Core's `listunspent 0`. */
export interface WalletUtxo {
  txid: string;
  vout: number;
  valueSat: bigint;
  script: string;
  branch: Branch;
  index: number;
  confirmations: number;
  blockHeight: number | null;
  /** Core's `safe`: confirmed, or unconfirmed but funded entirely by this wallet's trusted coins. */
  safe: boolean;
  coinbase: boolean;
}

export type TxCategory = 'receive' | 'send' | 'selftransfer';

/** The data of one transaction-list entry (the API formats it). */
export interface WalletTxEntry {
  txid: string;
  status: TxStatus;
  category: TxCategory;
  /** Net effect on the wallet's balance (received - spent, fee included): positive for receive. */
  netSat: bigint;
  /** Sum of this wallet's outputs in the transaction. */
  receivedSat: bigint;
  /** Sum of this wallet's coins spent by the transaction. */
  spentSat: bigint;
  /** Fee, when the wallet paid all inputs (otherwise unknown: null). */
  feeSat: bigint | null;
  /** Counterparty script (first output not ours) for sends, our receiving script otherwise; hex. */
  addressScript: string | null;
  confirmations: number;
  blockHeight: number | null;
  blockHash: string | null;
  /** Block time when confirmed, else first-seen time. */
  time: number;
  firstSeen: number;
  vsize: number;
  replaceable: 'yes' | 'no' | 'unknown';
  /** Other wallet transactions spending any of the same coins. */
  conflicts: readonly string[];
  coinbase: boolean;
  /** The raw transaction, one character per byte, shared with the state (`hexOf` gives its hex). */
  raw: string;
}
