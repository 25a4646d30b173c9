/**
 * The seam between the wallet part and its users (PSBT creation, broadcast): who may touch a
 * wallet, and everything needed to spend from it, read from the store's truth.
 */
import type { WalletTxEntry, WalletUtxo } from '../engine/index.js';
import type { Repositories } from '../store/repositories.js';
import type { StoredWallet, WalletKeyRow } from '../store/wallet-records.js';
import type { Principal } from './principal.js';

/** `read`: every GET; `spend`: also PSBT creation, update, broadcast; `owner`: manage the wallet itself. */
export type WalletAccessNeed = 'read' | 'spend' | 'owner';

export type WalletAddressType = StoredWallet['addressType'];
export type WalletKeyRecord = WalletKeyRow;

/** A wallet as its users see it: the stored wallet without its sync bookkeeping. */
export type WalletRecord = Omit<StoredWallet, 'birthday' | 'createdAt' | 'revision' | 'tip'>;

export interface SpendableUtxo extends WalletUtxo {
  /** The full transaction that created the output (non_witness_utxo), hex. */
  prevTxHex: string;
  frozen: boolean;
  label: string;
}

export interface WalletForSpending {
  wallet: WalletRecord;
  utxos: SpendableUtxo[];
  tipHeight: number;
  /** First change index not yet used on chain. */
  nextChangeIndex: number;
  /** Engine entries incl. hex (for BIP125 replacements). */
  transactions: WalletTxEntry[];
}

export interface WalletReader {
  /** Throws ServiceError with code `wallet_not_found` (404) when missing or not accessible with `need`. */
  resolve(principal: Principal, alias: string, need: WalletAccessNeed): Promise<WalletRecord>;
  loadForSpending(walletId: string): Promise<WalletForSpending>;
  /** The write of PSBT recipients' labels (checked by the caller), to run inside the transaction that stores the PSBT. */
  prepareAddressLabels(walletId: string, labels: { address: string; label: string }[]): (repos: Repositories) => Promise<void>;
}

/** Hook for the PSBT part: which pending PSBT holds an outpoint, and how many are pending. */
export interface PsbtReservations {
  /** Map `txid:vout` -> the PSBT's txid holding it. */
  reservedOutpoints(walletId: string): Promise<Map<string, string>>;
  pendingCount(walletId: string): Promise<number>;
}

export const NO_RESERVATIONS: PsbtReservations = {
  reservedOutpoints: async () => new Map(),
  pendingCount: async () => 0,
};
