/**
 * The scripthash histories of the watched scripts: each script subscribed (`blockchain.scripthash.subscribe`), its
 * history read (`get_history`) when first subscribed, when its status changes, and when the server's tip is another
 * than the one it was read at, all in batches. The statuses alone are not enough: Fulcrum tells a new header, and
 * answers a subscription with the status it told last, before it tells the block's new statuses; and in a reorg a
 * transaction may keep its height and so its status. A new connection has no subscriptions: every script is
 * subscribed and read again.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { reverseHex } from '../../core/bytes.js';
import { ChainError } from '../types.js';
import type { ElectrumCalls } from './calls.js';

/** One transaction of a script's history; height 0 or -1: unconfirmed (-1: it spends unconfirmed outputs). */
export interface HistoryEntry {
  txid: string;
  height: number;
}

interface ScriptState {
  subscribed: boolean;
  /** The server's tip (its hash, as known here) before the history or status was last read. */
  readAt: string;
  /** The status the server reported last (null: no history). */
  status: string | null;
  history: HistoryEntry[] | undefined;
  /** The status of `history`, computed from it. */
  historyStatus: string | null | undefined;
}

const HASH = /^[0-9a-f]{64}$/;

/** The Electrum protocol's script hash: sha256 of the script, byte-reversed, hex. */
export const scriptHashOf = (script: Uint8Array): string => reverseHex(sha256(script));

/** The status of a history as the protocol defines it: sha256 of "txid:height:" for each entry, in order. */
export function statusOf(history: readonly HistoryEntry[]): string | null {
  if (history.length === 0) return null;
  return Buffer.from(sha256(Buffer.from(history.map((e) => `${e.txid}:${e.height}:`).join(''), 'latin1'))).toString('hex');
}

/** A server's refusal to serve a history because of its size (Fulcrum's and ElectrumX's words). */
const TOO_LARGE = /history too large|too large|excessive|too many/i;

export class ScriptHistories {
  private readonly scripts = new Map<string, ScriptState>();

  constructor(private readonly client: ElectrumCalls) {
    client.onNotification((method, params) => {
      if (method !== 'blockchain.scripthash.subscribe') return;
      const [hash, status] = params;
      const state = typeof hash === 'string' ? this.scripts.get(hash) : undefined;
      if (state) state.status = typeof status === 'string' ? status : null;
    });
    client.onReconnect(() => {
      for (const state of this.scripts.values()) state.subscribed = false;
    });
  }

  /** True when a held history may be out of date at the server's tip `tip` (or its status changed since it was read). */
  stale(hashes: Iterable<string>, tip: string): boolean {
    for (const hash of hashes) {
      const state = this.scripts.get(hash);
      if (!state || !state.subscribed || state.readAt !== tip || state.historyStatus !== state.status) return true;
    }
    return false;
  }

  /**
   * The histories of the scripts (by script hash) at the server's tip `tip` (its hash as known now, before asking).
   * ChainError `history_too_large` when the server refuses one as too large; the scripts it could serve keep what
   * was read.
   */
  async histories(hashes: readonly string[], tip: string): Promise<Map<string, readonly HistoryEntry[]>> {
    const unsubscribed = hashes.filter((hash) => !this.scripts.get(hash)?.subscribed);
    if (unsubscribed.length > 0) {
      const answers = await this.client.batchSettled(unsubscribed.map((hash) => ({ method: 'blockchain.scripthash.subscribe', params: [hash] })));
      answers.forEach((answer, i) => {
        if (!answer.ok) throw refusal(answer.error);
        const status = answer.result;
        if (status !== null && (typeof status !== 'string' || !HASH.test(status))) throw new ChainError('bad_response', 'The Electrum server sent an unexpected script status');
        const hash = unsubscribed[i]!;
        const state = this.scripts.get(hash);
        if (state) Object.assign(state, { subscribed: true, status, readAt: tip });
        else this.scripts.set(hash, { subscribed: true, readAt: tip, status, history: undefined, historyStatus: undefined });
      });
    }
    // A new subscription's status may be the one Fulcrum told last too (it keeps one per script for all its
    // clients): a script's history is read at least once.
    const fresh = new Set(unsubscribed);
    const outdated = hashes.filter((hash) => {
      const state = this.scripts.get(hash)!;
      return state.readAt !== tip || fresh.has(hash) || state.historyStatus !== state.status;
    });
    if (outdated.length > 0) {
      const answers = await this.client.batchSettled(outdated.map((hash) => ({ method: 'blockchain.scripthash.get_history', params: [hash] })));
      answers.forEach((answer, i) => {
        if (!answer.ok) throw refusal(answer.error);
        const history = parseHistory(answer.result);
        // The status computed from what was read: a change told while the read was under way leaves it stale.
        const state = this.scripts.get(outdated[i]!)!;
        const historyStatus = statusOf(history);
        // Read after the tip was known: newer than any status told before it.
        if (state.readAt !== tip || fresh.has(outdated[i]!)) Object.assign(state, { status: historyStatus, readAt: tip });
        Object.assign(state, { history, historyStatus });
      });
    }
    return new Map(hashes.map((hash) => [hash, this.scripts.get(hash)!.history ?? []]));
  }
}

function refusal(error: ChainError): ChainError {
  if (error.code === 'rpc_error' && TOO_LARGE.test(error.reason ?? error.message)) {
    return new ChainError('history_too_large', 'The Electrum server refuses to serve the history of a watched address: it is too large for the server\'s limits', {
      ...(error.rpcCode !== undefined ? { rpcCode: error.rpcCode } : {}),
      reason: error.reason ?? error.message,
    });
  }
  return error;
}

function parseHistory(answer: unknown): HistoryEntry[] {
  if (!Array.isArray(answer)) throw new ChainError('bad_response', 'The Electrum server sent an unexpected script history');
  return answer.map((entry: { tx_hash?: unknown; height?: unknown } | null) => {
    const txid = entry?.tx_hash;
    const height = entry?.height;
    if (typeof txid !== 'string' || !HASH.test(txid) || typeof height !== 'number' || !Number.isSafeInteger(height) || height < -1) {
      throw new ChainError('bad_response', 'The Electrum server sent an unexpected script history entry');
    }
    return { txid, height };
  });
}
