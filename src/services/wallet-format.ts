/** The API shapes of wallet details, UTXOs and transaction-list entries (API-DECISIONS), from engine views. */
import { encodeAddress } from '../core/address.js';
import { satsToBtcNumber } from '../core/amount.js';
import { fromHex } from '../core/bytes.js';
import { NETWORKS, type NetworkName } from '../core/network.js';
import { hexOf, type WalletBalances, type WalletTxEntry, type WalletUtxo } from '../engine/index.js';
import type { ExpiringCoin, SpendingPathView } from './miniscript-wallet.js';

export interface BalanceView {
  confirmed: number;
  unconfirmed: number;
  immature: number;
  total: number;
  confirmed_sat: number;
  unconfirmed_sat: number;
  immature_sat: number;
  total_sat: number;
}

export interface UtxoView {
  txid: string;
  vout: number;
  address: string;
  amount: number;
  amount_sat: number;
  confirmations: number;
  label: string;
  reserved_by: string | null;
  /** Miniscript wallets: path id -> first block height that path can spend the coin in. */
  spendable_from?: Record<string, number>;
}

export interface TxListEntry {
  txid: string;
  wallet_alias: string;
  category: 'receive' | 'send' | 'selftransfer';
  amount: number;
  amount_sat: number;
  fee: number | null;
  address: string | null;
  label: string;
  confirmations: number;
  blockheight: number | null;
  blockhash: string | null;
  time: number;
  vsize: number;
  'bip125-replaceable': 'yes' | 'no' | 'unknown';
  conflicts: readonly string[];
  hex: string;
}

/** Satoshis as a JSON integer: every amount of bitcoin fits a safe integer. */
export const satsNumber = (sats: bigint): number => Number(sats);

export function scriptAddress(scriptHex: string, network: NetworkName): string {
  return encodeAddress(fromHex(scriptHex), NETWORKS[network]) ?? `script:${scriptHex}`;
}

export function balanceView(b: WalletBalances): BalanceView {
  const total = b.confirmed + b.unconfirmed + b.immature;
  return {
    confirmed: satsToBtcNumber(b.confirmed),
    unconfirmed: satsToBtcNumber(b.unconfirmed),
    immature: satsToBtcNumber(b.immature),
    total: satsToBtcNumber(total),
    confirmed_sat: satsNumber(b.confirmed),
    unconfirmed_sat: satsNumber(b.unconfirmed),
    immature_sat: satsNumber(b.immature),
    total_sat: satsNumber(total),
  };
}

export interface UtxoContext {
  /** The coin's address (the wallet's scripts keep those they encoded). */
  addressOf: (utxo: WalletUtxo) => string;
  addressLabels: Map<string, string>;
  /** `txid:vout` -> label of the coin itself. */
  coinLabels: Map<string, string>;
  reservedBy: Map<string, string>;
  /** Miniscript wallets: from which height each spending path can spend a coin mined at a height (null: unconfirmed). */
  spendableFrom?: (blockHeight: number | null) => Record<string, number>;
}

export function utxoView(u: WalletUtxo, ctx: UtxoContext): UtxoView {
  const address = ctx.addressOf(u);
  const outpoint = `${u.txid}:${u.vout}`;
  return {
    txid: u.txid,
    vout: u.vout,
    address,
    amount: satsToBtcNumber(u.valueSat),
    amount_sat: satsNumber(u.valueSat),
    confirmations: u.confirmations,
    label: ctx.coinLabels.get(outpoint) || ctx.addressLabels.get(address) || '',
    reserved_by: ctx.reservedBy.get(outpoint) ?? null,
    ...(ctx.spendableFrom && { spendable_from: ctx.spendableFrom(u.blockHeight) }),
  };
}

/** `txLabels`: labels of transactions themselves (BIP329 `tx`), shown before the address's label. */
export function txListEntry(e: WalletTxEntry, walletAlias: string, network: NetworkName, labels: Map<string, string>, txLabels?: Map<string, string>): TxListEntry {
  const address = e.addressScript === null ? null : scriptAddress(e.addressScript, network);
  return {
    txid: e.txid,
    wallet_alias: walletAlias,
    category: e.category,
    amount: satsToBtcNumber(e.netSat),
    amount_sat: satsNumber(e.netSat),
    fee: e.feeSat === null ? null : satsToBtcNumber(e.feeSat),
    address,
    label: txLabels?.get(e.txid) || (address !== null && labels.get(address)) || '',
    confirmations: e.confirmations,
    blockheight: e.blockHeight,
    blockhash: e.blockHash,
    time: e.time,
    vsize: e.vsize,
    'bip125-replaceable': e.replaceable,
    conflicts: e.conflicts,
    hex: hexOf(e),
  };
}

export interface ScanState {
  progress: number;
  height: number;
  /** The chain source refuses to follow the wallet (it stays where it is until it does). */
  error?: { code: string; message: string };
}

export interface WalletDetails {
  alias: string;
  name: string;
  description: string;
  network: NetworkName;
  address_type: string;
  sigs_required: number;
  sigs_total: number;
  keys: { fingerprint: string; derivation: string; xpub: string; label: string }[];
  recv_descriptor: string;
  change_descriptor: string;
  address: string;
  address_index: number;
  change_address: string;
  change_index: number;
  balance: BalanceView;
  utxo: UtxoView[];
  txlist: TxListEntry[];
  scan: ScanState | null;
  pending_psbts: number;
  /** Miniscript wallets: each way to spend, the primary first. */
  spending_paths?: SpendingPathView[];
  /** Miniscript wallets: the listed coins whose recovery path opens within the warning window. */
  timelock_expiring?: ExpiringCoin[];
}

export interface WalletListItem {
  alias: string;
  name: string;
  description: string;
  address_type: string;
  sigs_required: number;
  sigs_total: number;
  /** Null only with `error`: the wallet's stored chain data is inconsistent, its balance unknown until a rescan. */
  balance: BalanceView | null;
  error?: { code: string; message: string };
  spending_paths?: SpendingPathView[];
}

export interface AddressEntry {
  index: number;
  address: string;
  label: string;
  used: boolean;
}

export interface Page {
  limit?: number;
  offset?: number;
}
