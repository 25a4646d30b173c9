/**
 * What PSBT creation needs of a wallet to spend from it, read from the store's truth at one revision.
 */
import type { WalletTxEntry, WalletUtxo } from '../../engine/index.js';
import type { StoredWallet } from '../../store/wallet-records.js';

/**
 * An unspent output as PSBT creation takes it. No confirmation count: it would change with every block, and
 * the record is kept from one revision to the next (`blockHeight` and the tip give the count).
 */
export interface SpendableUtxo extends Omit<WalletUtxo, 'confirmations'> {
  /** The full transaction that created the output (non_witness_utxo), hex. */
  prevTxHex: string;
  frozen: boolean;
}

export interface WalletForSpending {
  wallet: StoredWallet;
  /** The stored revision these coins were read at: a PSBT built from them is stored only while it holds. */
  revision: number;
  /** Shared by the requests on one revision with the same frozen coins: never change it. */
  utxos: readonly SpendableUtxo[];
  tipHeight: number;
  /** First change index not yet used on chain. */
  nextChangeIndex: number;
  /** One of the wallet's transactions (engine entry incl. hex), for BIP125 replacements. */
  transaction(txid: string): WalletTxEntry | undefined;
  /** Where a script (hex) sits among the wallet's derived addresses, if it is one of them. */
  ownerOfScript(script: string): { branch: 0 | 1; index: number } | undefined;
}
