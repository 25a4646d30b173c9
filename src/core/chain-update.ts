/**
 * What a chain source tells about the chain, in Bitcoin terms: the updates the wallet engine applies
 * (`applyUpdate`) and that every chain follower emits, whatever its backend.
 */
import type { Transaction } from './tx.js';

/** A block added to the active chain, with the transactions that may touch the watched scripts. */
export interface BlockConnected {
  type: 'block_connected';
  height: number;
  hash: string;
  /** The genesis block's is 64 zeros. */
  prevHash: string;
  /** Block header time, seconds since the epoch. */
  time: number;
  /** Every transaction of the block that may touch the scripts (more is harmless, one less is not). */
  transactions: Transaction[];
}

/** A block that left the active chain; the wallets' tip goes back to its parent. */
export interface BlockDisconnected {
  type: 'block_disconnected';
  height: number;
  hash: string;
  prevHash: string;
}

export interface MempoolEntry {
  tx: Transaction;
  /** The txid if the source already knows it (saves hashing); computed from `tx` when absent. */
  txid?: string;
  /** When the source first saw the transaction, seconds since the epoch. */
  time: number;
}

/**
 * The unconfirmed transactions that may touch the watched scripts, all of them: a transaction the wallets held
 * as unconfirmed and no longer listed has left the mempool (mined elsewhere, replaced, evicted). A source that
 * sees the whole mempool may list more than the scripts need.
 */
export interface MempoolSnapshot {
  type: 'mempool';
  transactions: MempoolEntry[];
}

export type ChainUpdate = BlockConnected | BlockDisconnected | MempoolSnapshot;
