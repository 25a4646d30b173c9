/**
 * Read-only views of one wallet, with Bitcoin Core's watch-only descriptor wallet semantics:
 * getbalances (trusted / untrusted_pending / immature), listunspent 0, and the transaction list.
 */
import { EngineError } from './errors.js';
import { hexOf, ownerOf, paysWallet, spendersOf, sumOfSats, walletOutputs, walletOutputsValue, type EngineState, type TrackedTx, type WalletState } from './state.js';
import type { Branch, TxCategory, TxStatus, WalletBalances, WalletTxEntry, WalletUtxo } from './types.js';

/** Core's wallet treats a coinbase as spendable from COINBASE_MATURITY + 1 = 101 confirmations. */
export const COINBASE_MATURITY_CONFIRMATIONS = 101;

function walletOf(state: EngineState, walletId: string): WalletState {
  const wallet = state.wallets.get(walletId);
  if (!wallet) throw new EngineError('unknown_wallet', `Unknown wallet ${walletId}`);
  return wallet;
}

const active = (t: TrackedTx | undefined): boolean => !!t && t.status !== 'dropped';

function confirmations(wallet: WalletState, t: TrackedTx): number {
  if (t.status !== 'confirmed' || !t.block || !wallet.tip) return 0;
  return wallet.tip.height - t.block.height + 1;
}

export const isImmature = (wallet: WalletState, t: TrackedTx) => t.coinbase && confirmations(wallet, t) < COINBASE_MATURITY_CONFIRMATIONS;

/** Spent by a confirmed or mempool wallet transaction (a dropped one spends nothing). */
function isSpent(wallet: WalletState, txid: string, vout: number): boolean {
  for (const s of spendersOf(wallet, txid, vout)) if (active(wallet.txs.get(s))) return true;
  return false;
}

/**
 * Core's CachedTxIsTrusted: confirmed; or in the mempool with every input an output of this wallet whose
 * transaction is itself trusted (the wallet's own unconfirmed change).
 */
export function trustChecker(wallet: WalletState): (t: TrackedTx) => boolean {
  const memo = new Map<string, boolean>();
  const trusted = (t: TrackedTx): boolean => {
    if (t.status === 'confirmed') return true;
    if (t.status !== 'mempool' || t.coinbase) return false;
    const known = memo.get(t.txid);
    if (known !== undefined) return known;
    memo.set(t.txid, false);
    const result = t.tx.inputs.every((input) => {
      const parent = wallet.txs.get(input.txid);
      return !!parent && paysWallet(parent, input.vout) && trusted(parent);
    });
    memo.set(t.txid, result);
    return result;
  };
  return trusted;
}

export function getBalances(state: EngineState, walletId: string): WalletBalances {
  const wallet = walletOf(state, walletId);
  const trusted = trustChecker(wallet);
  const balances: WalletBalances = { confirmed: 0n, unconfirmed: 0n, immature: 0n };
  for (const t of wallet.txs.values()) {
    if (!active(t)) continue;
    if (isImmature(wallet, t)) {
      balances.immature += walletOutputsValue(t);
      continue;
    }
    let available = 0n;
    for (const { vout, output } of walletOutputs(t)) if (!isSpent(wallet, t.txid, vout)) available += output.value;
    if (trusted(t)) balances.confirmed += available;
    else if (t.status === 'mempool') balances.unconfirmed += available;
  }
  return balances;
}

/** Core's `listunspent 0`: unspent outputs of confirmed and mempool transactions, mature coinbases only. */
export function listUnspent(state: EngineState, walletId: string): WalletUtxo[] {
  const wallet = walletOf(state, walletId);
  const trusted = trustChecker(wallet);
  const utxos: WalletUtxo[] = [];
  for (const t of wallet.txs.values()) utxos.push(...unspentOutputsOf(wallet, t, trusted));
  return utxos.sort(byOutpoint);
}

/** The unspent outputs of one transaction paying the wallet, as `listUnspent` lists them. */
export function unspentOutputsOf(wallet: WalletState, t: TrackedTx, trusted: (t: TrackedTx) => boolean): WalletUtxo[] {
  if (!active(t) || isImmature(wallet, t)) return [];
  const utxos: WalletUtxo[] = [];
  for (const { vout, output, owner } of walletOutputs(t)) {
    if (isSpent(wallet, t.txid, vout)) continue;
    utxos.push({
      txid: t.txid,
      vout,
      valueSat: output.value,
      script: output.script,
      branch: owner.branch,
      index: owner.index,
      confirmations: confirmations(wallet, t),
      blockHeight: t.block?.height ?? null,
      safe: trusted(t),
      coinbase: t.coinbase,
    });
  }
  return utxos;
}

const rank = (e: { blockHeight: number | null }) => e.blockHeight ?? Number.MAX_SAFE_INTEGER;
const byTxid = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
/** The transaction list's order: by block (unconfirmed last), first seen, txid. */
export const oldestFirst = (a: WalletTxEntry, b: WalletTxEntry) => rank(a) - rank(b) || a.firstSeen - b.firstSeen || byTxid(a.txid, b.txid);
/** Newest first, as the API lists live transactions: unconfirmed first, then by block, time, txid. */
export const newestFirst = (a: WalletTxEntry, b: WalletTxEntry) => rank(b) - rank(a) || b.time - a.time || byTxid(a.txid, b.txid);
export const byOutpoint = (a: WalletUtxo, b: WalletUtxo) => byTxid(a.txid, b.txid) || a.vout - b.vout;
/** Most confirmations first is lowest block first, unconfirmed last, whatever the tip; then by outpoint. */
export const mostConfirmedFirst = (a: WalletUtxo, b: WalletUtxo) => rank(a) - rank(b) || byOutpoint(a, b);

/** The conflicts of nearly every entry: one list for all of them. */
const NO_CONFLICTS: readonly string[] = Object.freeze([]);

/** One transaction's entry of the transaction list. */
export function entryOf(wallet: WalletState, t: TrackedTx): WalletTxEntry {
  let spentSat = 0n;
  let inputsMine = 0;
  if (!t.coinbase) {
    for (const input of t.tx.inputs) {
      const parent = wallet.txs.get(input.txid);
      if (parent && paysWallet(parent, input.vout)) {
        spentSat = sumOfSats(spentSat, parent.tx.outputs[input.vout]!.value);
        inputsMine++;
      }
    }
  }
  const receivedSat = walletOutputsValue(t);
  const allInputsMine = inputsMine > 0 && inputsMine === t.tx.inputs.length;
  const outputTotal = t.tx.outputs.reduce((sum, o) => sum + o.value, 0n);
  const netSat = spentSat === 0n ? receivedSat : receivedSat - spentSat;
  let category: TxCategory;
  if (allInputsMine) category = t.tx.outputs.every((o) => o.owner) ? 'selftransfer' : 'send';
  else if (inputsMine === 0) category = 'receive';
  else category = netSat >= 0n ? 'receive' : 'send';

  let addressVout: number | undefined;
  if (category === 'send') addressVout = t.tx.outputs.findIndex((o) => !o.owner);
  else {
    // The first receive output, else the first of the wallet's (change).
    const receive = t.tx.outputs.findIndex((o) => o.owner?.branch === (0 as Branch));
    addressVout = receive >= 0 ? receive : t.tx.outputs.findIndex((o) => o.owner);
  }
  const addressOutput = addressVout === undefined || addressVout < 0 ? undefined : t.tx.outputs[addressVout];

  const conflicts = new Set<string>();
  if (!t.coinbase) {
    for (const input of t.tx.inputs) {
      for (const other of spendersOf(wallet, input.txid, input.vout)) if (other !== t.txid) conflicts.add(other);
    }
  }
  return {
    txid: t.txid,
    status: t.status,
    category,
    netSat,
    receivedSat,
    spentSat,
    feeSat: allInputsMine ? spentSat - outputTotal : null,
    addressScript: addressOutput ? addressOutput.script : null,
    confirmations: confirmations(wallet, t),
    blockHeight: t.block?.height ?? null,
    blockHash: t.block?.hash ?? null,
    time: t.block?.time ?? t.firstSeen,
    firstSeen: t.firstSeen,
    vsize: t.vsize,
    replaceable: t.status === 'confirmed' ? 'no' : t.replaceable === null ? 'unknown' : t.replaceable ? 'yes' : 'no',
    conflicts: conflicts.size === 0 ? NO_CONFLICTS : [...conflicts].sort(),
    coinbase: t.coinbase,
    raw: t.raw,
  };
}

/** All of the wallet's transactions, dropped ones included (status says so): oldest first. */
export function listTransactions(state: EngineState, walletId: string): WalletTxEntry[] {
  const wallet = walletOf(state, walletId);
  const entries = [...wallet.txs.values()].map((t) => entryOf(wallet, t));
  return entries.sort(oldestFirst);
}

/**
 * The entries of the transactions `pick` selects (by txid, status and block height), oldest first like
 * listTransactions, without building the others: a wallet of many transactions pays per entry built.
 */
export function selectTransactions(state: EngineState, walletId: string, pick: (t: { txid: string; status: TxStatus; blockHeight: number | null }) => boolean): WalletTxEntry[] {
  const wallet = walletOf(state, walletId);
  const entries: WalletTxEntry[] = [];
  for (const t of wallet.txs.values()) if (pick({ txid: t.txid, status: t.status, blockHeight: t.block?.height ?? null })) entries.push(entryOf(wallet, t));
  return entries.sort(oldestFirst);
}

export interface WalletSummary {
  walletId: string;
  tip: { height: number; hash: string } | null;
  gapLimit: number;
  lastUsedReceive: number;
  lastUsedChange: number;
  /** Highest receive index handed out, -1 for none. */
  lastRevealedReceive: number;
  derivedReceive: number;
  derivedChange: number;
}

export function walletSummary(state: EngineState, walletId: string): WalletSummary {
  const w = walletOf(state, walletId);
  return {
    walletId,
    tip: w.tip ? { ...w.tip } : null,
    gapLimit: w.gapLimit,
    lastUsedReceive: w.lastUsed[0],
    lastUsedChange: w.lastUsed[1],
    lastRevealedReceive: w.lastRevealedReceive,
    derivedReceive: w.derived[0],
    derivedChange: w.derived[1],
  };
}

/** One transaction of the wallet as a coin's history names it. */
export interface CoinTx {
  txid: string;
  status: TxStatus;
  hex: string;
}

/** What the wallet knows of one coin: the transaction that created it (if known) and every transaction spending it. */
export interface CoinHistory {
  funding: CoinTx | undefined;
  spenders: CoinTx[];
}

const coinTx = (t: TrackedTx): CoinTx => ({ txid: t.txid, status: t.status, hex: hexOf(t) });

export function coinHistory(state: EngineState, walletId: string, txid: string, vout: number): CoinHistory {
  const wallet = walletOf(state, walletId);
  const funding = wallet.txs.get(txid);
  const spenders = spendersOf(wallet, txid, vout).map((s) => wallet.txs.get(s)).filter((t): t is TrackedTx => !!t);
  return { funding: funding && coinTx(funding), spenders: spenders.map(coinTx) };
}

/** Where a script sits in the wallet's derived addresses, if it is one of them. */
export function scriptOwner(state: EngineState, walletId: string, script: string): { branch: Branch; index: number } | undefined {
  const owner = ownerOf(walletOf(state, walletId), script);
  return owner && { branch: owner.branch, index: owner.index };
}
