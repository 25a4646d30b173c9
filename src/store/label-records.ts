/** Every label of a wallet with its modification time, for BIP329 export and import. */

export interface StoredLabel {
  type: 'tx' | 'addr' | 'output';
  /** txid, address, or `txid:vout`. */
  ref: string;
  label: string;
  /** Outputs only: a frozen coin is never spent. */
  frozen?: boolean;
  /** Epoch milliseconds; 0 when written before labels had times. */
  updatedAt: number;
}

/** What a label is of. */
export type LabelRef = Pick<StoredLabel, 'type' | 'ref'>;

export interface WalletLabelRepository {
  /** Transaction, address and output labels (frozen outputs included), ordered by type and reference. */
  list(walletId: string): Promise<StoredLabel[]>;
  /**
   * Inside a store transaction: holds the wallet's row until the transaction ends, so that label imports of
   * one wallet (on any instance) apply one after the other. False when the wallet is gone.
   */
  lock(walletId: string): Promise<boolean>;
  /** Transaction labels by txid. */
  txLabels(walletId: string): Promise<Map<string, string>>;
  /** The stored labels among `refs` (any order), for an import to compare against. */
  find(walletId: string, refs: readonly LabelRef[]): Promise<StoredLabel[]>;
  /** Writes each label in place of the stored one; an empty label (an output's: and not frozen) removes it. */
  write(walletId: string, labels: readonly StoredLabel[]): Promise<void>;
  /** Sets a transaction's label; an empty label removes it. */
  setTxLabel(walletId: string, txid: string, label: string, at: number): Promise<void>;
}
