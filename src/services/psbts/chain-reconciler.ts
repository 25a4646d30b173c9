/**
 * PSBT state follows the chain. The sync calls this inside the store transaction that writes a wallet's
 * changeset, with the wallet's state after the change, so that the wallet's transactions, its pending PSBTs
 * and their coin reservations are only ever seen agreeing with each other:
 * - a pending PSBT whose transaction the wallet now holds (mempool or block) becomes `broadcast`;
 * - one with a coin spent by another, confirmed, transaction becomes `invalid`;
 * - one with a coin whose own transaction left the mempool unconfirmed (replaced or double-spent, so the
 *   coin no longer exists) becomes `invalid`: the wallet keeps such a transaction as `dropped` when it spent
 *   the wallet's coins, and forgets it (the change being written removes it) when it only paid the wallet.
 * Either way its reservations are freed. A coin merely spent in the mempool by another transaction keeps
 * the PSBT pending (a replacement may still win), and so does a coin absent from the wallet's view (a
 * wallet scanning again after a rescan).
 */
import type { CoinHistory, CoinTx } from '../../engine/index.js';
import type { PsbtStatus, Repositories, Reservation } from '../../store/repositories.js';
import { unsignedTxid } from './unsigned-txid.js';

export type SettledStatus = Exclude<PsbtStatus, 'pending'>;

/** What the wallet knows of one of its coins, after the change being written. */
export type CoinLookup = (txid: string, vout: number) => CoinHistory;

export interface PsbtSettlement {
  walletId: string;
  txid: string;
  status: SettledStatus;
}

/** Network txid -> unsigned txid: a transaction never changes under its txid, so the memo never goes stale. */
const MEMO_LIMIT = 100_000;

export class PsbtChainReconciler {
  private readonly unsignedIds = new Map<string, string>();

  constructor(private readonly now: () => number) {}

  /**
   * Settles the wallet's pending PSBTs that the chain decided; returns what changed. `removed`: the txids
   * the change being written removes from the wallet.
   */
  async reconcile(repos: Repositories, walletId: string, coins: CoinLookup, removed: ReadonlySet<string> = new Set()): Promise<PsbtSettlement[]> {
    const byPsbt = new Map<string, Reservation[]>();
    for (const r of await repos.psbts.reservations(walletId)) {
      const held = byPsbt.get(r.psbtTxid);
      if (held) held.push(r);
      else byPsbt.set(r.psbtTxid, [r]);
    }
    const settled: PsbtSettlement[] = [];
    for (const [txid, reserved] of byPsbt) {
      const status = this.verdict(txid, reserved.map((r) => ({ ...coins(r.txid, r.vout), fundingRemoved: removed.has(r.txid) })));
      if (status && (await settle(repos, walletId, txid, status, this.now()))) settled.push({ walletId, txid, status });
    }
    return settled;
  }

  /** What the chain says of the PSBT `psbtTxid` holding these coins: settled, or still pending (undefined). */
  verdict(psbtTxid: string, coins: readonly (CoinHistory & { fundingRemoved: boolean })[]): SettledStatus | undefined {
    const live = (t: CoinTx) => t.status !== 'dropped';
    if (coins.some((c) => c.spenders.some((s) => live(s) && this.unsignedIdOf(s) === psbtTxid))) return 'broadcast';
    if (coins.some((c) => c.spenders.some((s) => s.status === 'confirmed'))) return 'invalid';
    if (coins.some((c) => c.funding?.status === 'dropped' || (c.funding === undefined && c.fundingRemoved))) return 'invalid';
    return undefined;
  }

  private unsignedIdOf(tx: CoinTx): string {
    let id = this.unsignedIds.get(tx.txid);
    if (id === undefined) {
      id = unsignedTxid(tx.hex);
      if (this.unsignedIds.size >= MEMO_LIMIT) this.unsignedIds.clear();
      this.unsignedIds.set(tx.txid, id);
    }
    return id;
  }
}

/**
 * Moves one pending PSBT to `status` by compare-and-set, reading it again when a cosigner's merge changed
 * it meanwhile. False when it was no longer pending (deleted or settled by someone else).
 */
export async function settle(repos: Repositories, walletId: string, txid: string, status: SettledStatus, at: number): Promise<boolean> {
  for (;;) {
    const stored = await repos.psbts.find(walletId, txid);
    if (stored?.status !== 'pending') return false;
    if (await repos.psbts.setStatus(walletId, txid, status, at, stored.version)) return true;
  }
}
