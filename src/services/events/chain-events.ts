/**
 * The events a sync write causes for one wallet, computed from the engine state after the change: a
 * transaction first seen (received or sent), confirmed at depth 1 and at the configured depth, replaced
 * (left the mempool unconfirmed), the PSBTs the change settled, and the wallet's scan reaching the tip.
 * Transaction events carry what they announce, and the outbox records each announcement once per wallet:
 * a rescan, which finds the wallet's transactions again, announces none of them a second time.
 */
import { selectTransactions, type EngineState, type WalletChangeset, type WalletTxEntry } from '../../engine/index.js';
import type { NewEvent } from '../../store/repositories.js';
import type { PsbtSettlement } from '../psbts/chain-reconciler.js';
import { newEvent } from './types.js';
import { listUnspent } from '../../engine/index.js';
import type { SpendPath } from '../../core/spend-plan.js';
import { pathId, spendableFromHeight } from '../miniscript-wallet.js';

/**
 * wallet.timelock_expiring for each confirmed coin whose recovery path came within the warning window with this
 * write: the tip reached the window's start, or the coin was confirmed already inside it.
 */
function expiringEvents(input: WalletEventInput, from: number, newHeight: number): NewEvent[] {
  const { paths, warningBlocks } = input.timelocks!;
  const events: NewEvent[] = [];
  for (const coin of listUnspent(input.state, input.wallet.id)) {
    if (coin.blockHeight === null) continue;
    paths.forEach((path, i) => {
      if (i === 0) return;
      const opens = spendableFromHeight(path, coin.blockHeight);
      if (opens === undefined) return;
      // Within the window once the next block is at most `warningBlocks` before it opens.
      const warnedAt = Math.max(opens - 1 - warningBlocks, coin.blockHeight!);
      if (warnedAt > from && warnedAt <= newHeight) {
        events.push(newEvent('wallet.timelock_expiring', input.wallet, input.at, { txid: coin.txid, vout: coin.vout, spending_path: pathId(i), from_height: opens, blocks_left: Math.max(0, opens - newHeight - 1) }));
      }
    });
  }
  return events;
}

export interface WalletEventInput {
  state: EngineState;
  wallet: { id: string; alias: string };
  /** The wallet's change in this write, if any. */
  change: WalletChangeset | undefined;
  /** Height of the wallet's tip before this write (null before its first block). */
  previousHeight: number | null;
  settlements: readonly PsbtSettlement[];
  /** Depths at which transaction.confirmed is recorded (1 and the configured one). */
  depths: readonly number[];
  /** True when this write brings a wallet that was scanning to the node's tip. */
  reachedTip: boolean;
  at: number;
  /** Miniscript wallets: the plan's paths (the primary first) and the warning window, in blocks. */
  timelocks?: { paths: readonly SpendPath[]; warningBlocks: number };
}

const sats = (value: bigint | null): number | null => (value === null ? null : Number(value));

function txFacts(entry: WalletTxEntry): Record<string, unknown> {
  return {
    txid: entry.txid,
    category: entry.category,
    amount_sat: sats(entry.netSat),
    fee_sat: sats(entry.feeSat),
    status: entry.status,
    block_height: entry.blockHeight,
    block_hash: entry.blockHash,
  };
}

export function walletEvents(input: WalletEventInput): NewEvent[] {
  const { wallet, change, at } = input;
  const events: NewEvent[] = input.settlements.map((s) => newEvent(s.status === 'broadcast' ? 'psbt.broadcast' : 'psbt.invalid', wallet, at, { txid: s.txid, status: s.status }));
  const newHeight = change?.sync.tip?.height ?? null;
  const tipRose = newHeight !== null && (input.previousHeight === null || newHeight > input.previousHeight);
  const touched = change !== undefined && change.transactionsAdded.length + change.transactionsUpdated.length + change.transactionsRemoved.length > 0;
  if (touched || tipRose) {
    // Only the entries this write can name: its transactions, their conflicts, and those reaching a depth now.
    // Building every entry of the wallet on each block costs seconds on a wallet of 200,000 transactions.
    const from = input.previousHeight ?? -1;
    const reachesDepth = (height: number | null) => tipRose && height !== null && input.depths.some((d) => height + d - 1 > from && height + d - 1 <= newHeight);
    const named = new Set([...(change?.transactionsAdded ?? []), ...(change?.transactionsUpdated ?? [])].map((t) => t.txid));
    const picked = selectTransactions(input.state, wallet.id, (t) => named.has(t.txid) || (t.status === 'confirmed' && reachesDepth(t.blockHeight)));
    const entries = new Map(picked.map((e) => [e.txid, e]));
    const conflicts = new Set(picked.filter((e) => e.status === 'dropped').flatMap((e) => e.conflicts).filter((txid) => !entries.has(txid)));
    if (conflicts.size > 0) for (const e of selectTransactions(input.state, wallet.id, (t) => conflicts.has(t.txid))) entries.set(e.txid, e);
    for (const added of change?.transactionsAdded ?? []) {
      const entry = entries.get(added.txid);
      if (!entry || entry.status === 'dropped') continue;
      events.push(newEvent(entry.category === 'receive' ? 'transaction.received' : 'transaction.sent', wallet, at, txFacts(entry)));
    }
    for (const updated of change?.transactionsUpdated ?? []) {
      const entry = entries.get(updated.txid);
      if (entry?.status !== 'dropped') continue;
      const replacedBy = entry.conflicts.filter((txid) => entries.get(txid)?.status !== 'dropped');
      events.push(newEvent('transaction.replaced', wallet, at, { ...txFacts(entry), replaced_by: replacedBy }));
    }
    for (const txid of change?.transactionsRemoved ?? []) events.push(newEvent('transaction.replaced', wallet, at, { txid, replaced_by: [] }));
    if (tipRose) {
      const confirmed = picked.filter((e) => e.status === 'confirmed' && e.blockHeight !== null).sort((a, b) => a.blockHeight! - b.blockHeight!);
      for (const depth of input.depths) {
        for (const entry of confirmed) {
          // The block at which the transaction reaches `depth` confirmations came with this write.
          const reachedAt = entry.blockHeight! + depth - 1;
          if (reachedAt > from && reachedAt <= newHeight) events.push(newEvent('transaction.confirmed', wallet, at, { ...txFacts(entry), confirmations: depth }));
        }
      }
    }
  }
  if (tipRose && input.timelocks) events.push(...expiringEvents(input, input.previousHeight ?? -1, newHeight));
  if (input.reachedTip && change?.sync.tip) events.push(newEvent('wallet.synced', wallet, at, { tip_height: change.sync.tip.height, tip_hash: change.sync.tip.hash }));
  return events.map(withAnnouncement);
}

const ANNOUNCING = new Set(['transaction.received', 'transaction.sent', 'transaction.replaced', 'transaction.confirmed']);

/**
 * A transaction event's announcement: its kind and txid, and for a confirmation the depth and the block
 * (a transaction confirmed again in another block after a reorg is announced again). Migration 15 gives
 * events recorded before it the same form.
 */
function withAnnouncement(event: NewEvent): NewEvent {
  if (!ANNOUNCING.has(event.type) || typeof event.data.txid !== 'string') return event;
  const { txid, confirmations, block_hash: blockHash } = event.data;
  const announcement = event.type === 'transaction.confirmed' ? `${event.type}:${txid}:${String(confirmations)}:${String(blockHash)}` : `${event.type}:${txid}`;
  return { ...event, announcement };
}
