/** What the PSBT use cases store: pending PSBTs and the coins they reserve. */

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

export interface PsbtRepository {
  /**
   * Inserts the PSBT with a reservation of each of its inputs. Call inside a store transaction so
   * both happen or neither. Throws StoreConflictError when the PSBT exists or a coin is reserved.
   */
  insert(psbt: StoredPsbt, inputs: readonly Outpoint[]): Promise<void>;
  find(walletId: string, txid: string): Promise<StoredPsbt | undefined>;
  /** The wallet's PSBTs with this status, newest first. */
  list(walletId: string, status?: PsbtStatus): Promise<StoredPsbt[]>;
  /** Replaces the PSBT text (signatures merged). False when absent. */
  updatePsbt(walletId: string, txid: string, psbt: string, updatedAt: number): Promise<boolean>;
  /** Changes the status; leaving `pending` frees the reservations. False when absent. */
  setStatus(walletId: string, txid: string, status: PsbtStatus, updatedAt: number): Promise<boolean>;
  /** Removes the PSBT and frees its coins. False when absent. */
  delete(walletId: string, txid: string): Promise<boolean>;
  /** Every coin of the wallet held by a PSBT, or by the one PSBT given. */
  reservations(walletId: string, psbtTxid?: string): Promise<Reservation[]>;
  /** Removes every PSBT and reservation of the wallet (wallet deletion). */
  deleteWallet(walletId: string): Promise<void>;
}
