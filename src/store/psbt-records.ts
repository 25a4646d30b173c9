/** What the PSBT use cases store: PSBTs and the coins the pending ones reserve. */

export type PsbtStatus = 'pending' | 'broadcast' | 'invalid';

export interface StoredPsbt {
  walletId: string;
  /** The unsigned transaction's id (64 hex). */
  txid: string;
  /** The PSBT as base64, with every signature merged so far. */
  psbt: string;
  /** Indexes of the outputs that pay the wallet's own change. */
  changeOutputs: number[];
  /** Estimated virtual size once fully signed. */
  fullSize: number;
  status: PsbtStatus;
  /** Epoch milliseconds (fractions allowed). */
  createdAt: number;
  updatedAt: number;
  /** User who created it. */
  createdBy: string;
  /** Raised by every change of the stored row: what a compare-and-set compares. */
  version: number;
  /** Miniscript wallets: the index of the spending path in the wallet's plan (absent: the primary, 0). */
  spendingPath?: number;
}

export interface Outpoint {
  txid: string;
  vout: number;
}

export interface Reservation extends Outpoint {
  walletId: string;
  /** The PSBT holding the coin. */
  psbtTxid: string;
}

/**
 * Every change of a stored PSBT is a compare-and-set: it names the version it was computed from and
 * applies only to a pending PSBT still at that version. False (or undefined) means the PSBT changed,
 * left `pending` or was removed meanwhile: read it again and decide again.
 */
export interface PsbtRepository {
  /**
   * Inserts the PSBT (version 0) with a reservation of each of its inputs. Call inside a store transaction
   * so both happen or neither. Throws StoreConflictError when the PSBT exists or a coin is reserved.
   */
  insert(psbt: Omit<StoredPsbt, 'version'>, inputs: readonly Outpoint[]): Promise<void>;
  find(walletId: string, txid: string): Promise<StoredPsbt | undefined>;
  /** The wallet's PSBTs with this status, newest first. */
  list(walletId: string, status?: PsbtStatus): Promise<StoredPsbt[]>;
  countPending(walletId: string): Promise<number>;
  /** Replaces the PSBT text (signatures merged, finalized); the new version, or undefined on conflict. */
  updatePsbt(walletId: string, txid: string, psbt: string, updatedAt: number, expectedVersion: number): Promise<number | undefined>;
  /** Moves a pending PSBT to `broadcast` or `invalid` and frees its reservations. */
  setStatus(walletId: string, txid: string, status: Exclude<PsbtStatus, 'pending'>, updatedAt: number, expectedVersion: number): Promise<boolean>;
  /** Removes a pending PSBT and frees its coins. */
  delete(walletId: string, txid: string, expectedVersion: number): Promise<boolean>;
  /** Every coin of the wallet held by a pending PSBT, or by the one PSBT given. */
  reservations(walletId: string, psbtTxid?: string): Promise<Reservation[]>;
  /** Removes every PSBT and reservation of the wallet (wallet deletion). */
  deleteWallet(walletId: string): Promise<void>;
}
