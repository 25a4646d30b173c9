/**
 * The scripthash histories of the watched scripts: each script subscribed (`blockchain.scripthash.subscribe`), its
 * history read (`get_history`) when first subscribed, when its status changes, and when the server's tip is another
 * than the one it was read at, all in batches; unless the follower read the blocks between and they do not touch the
 * script (`advance`). The statuses alone are not enough: Fulcrum tells a new header at once, and the block's new
 * statuses only after a timer (500 ms), answering a subscription meanwhile with the status it told last; and in a
 * reorg a transaction may keep its height and so its status. A new connection has no subscriptions: every script is
 * subscribed and read again. The scripts no group asked for during a whole pass of the sync (a deleted wallet's)
 * are unsubscribed (`blockchain.scripthash.unsubscribe`, protocol 1.4.2) and forgotten; one asked for again is
 * subscribed and read anew, so releasing too early costs a read, never a missed transaction.
 *
 * Fulcrum (2.1.1) does not refuse a history longer than its `max_history`: it answers the subscription with a
 * null status and `get_history` (and `listunspent`) with an empty list, as for an unused script, while
 * `get_balance` still counts the script's coins. An empty history is therefore checked against the balance when
 * first read and when it was not empty before; a balance is the refusal the server did not say.
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
  /** The script hash this state is kept under (the map's key). */
  hash: string;
  subscribed: boolean;
  /** The server's tip (its hash, as known here) before the history or status was last read. */
  readAt: string;
  /** The status the server reported last (null: no history). */
  status: string | null;
  history: HistoryEntry[] | undefined;
  /** The status of `history`, computed from it. */
  historyStatus: string | null | undefined;
  /** The sync pass that asked for the script last. */
  askedInPass: number;
}

const HASH = /^[0-9a-f]{64}$/;

/** The Electrum protocol's script hash: sha256 of the script, byte-reversed, hex. */
export const scriptHashOf = (script: Uint8Array): string => reverseHex(sha256(script));

/** The status of a history as the protocol defines it: sha256 of "txid:height:" for each entry, in order. */
export function statusOf(history: readonly HistoryEntry[]): string | null {
  if (history.length === 0) return null;
  return Buffer.from(sha256(Buffer.from(history.map((e) => `${e.txid}:${e.height}:`).join(''), 'latin1'))).toString('hex');
}

/** `readAt` of a history not known to be read on the server's chain now: never a tip's hash. */
const UNKNOWN_TIP = '';

/** A history held, subscribed, and agreeing with the status the server told last. */
const isCurrent = (state: ScriptState): boolean => state.subscribed && state.history !== undefined && state.historyStatus === state.status;

/** A server's refusal to serve a history because of its size (Fulcrum's and ElectrumX's words). */
const TOO_LARGE = /history too large|too large|excessive|too many/i;

export class ScriptHistories {
  private readonly scripts = new Map<string, ScriptState>();
  private pass = 0;
  /** Times the server switched chains (`chainSwitched`). */
  private chainSwitches = 0;
  /** Bumped when a script is followed or released: the states kept per list of hashes are then looked up again. */
  private followedChanges = 0;
  /** The states of each list of hashes the follower asks for (it keeps the same array per script list). */
  private readonly statesByList = new WeakMap<readonly string[], { followedChanges: number; states: Array<ScriptState | undefined> }>();
  /** Told when the server tells a watched script's new status (a transaction came, confirmed or left). */
  private readonly statusListeners = new Set<() => void>();

  constructor(private readonly client: ElectrumCalls) {
    client.onNotification((method, params) => {
      if (method !== 'blockchain.scripthash.subscribe') return;
      const [hash, status] = params;
      const state = typeof hash === 'string' ? this.scripts.get(hash) : undefined;
      if (!state) return;
      const told = typeof status === 'string' ? status : null;
      if (told === state.status) return;
      state.status = told;
      for (const listener of this.statusListeners) listener();
    });
    client.onReconnect(() => {
      for (const state of this.scripts.values()) state.subscribed = false;
    });
  }

  /** Calls `listener` at each new status the server tells; the answer stops that. */
  onStatusChange(listener: () => void): () => void {
    this.statusListeners.add(listener);
    return () => this.statusListeners.delete(listener);
  }

  /** The instance of `hash` this holds when it follows that script, else `hash`: lists of hashes then share strings. */
  shared(hash: string): string {
    return this.scripts.get(hash)?.hash ?? hash;
  }

  /** True when a held history may be out of date at the server's tip `tip` (or its status changed since it was read). */
  stale(hashes: readonly string[], tip: string): boolean {
    for (const state of this.statesOf(hashes)) {
      if (!state || !state.subscribed || state.readAt !== tip || state.historyStatus !== state.status) return true;
    }
    return false;
  }

  /**
   * The states of the scripts (undefined for one not followed), kept per list while no script is followed or released:
   * looking up 400,000 hashes took tens of milliseconds, several times a block.
   */
  private statesOf(hashes: readonly string[]): Array<ScriptState | undefined> {
    const kept = this.statesByList.get(hashes);
    if (kept && kept.followedChanges === this.followedChanges) return kept.states;
    const states = hashes.map((hash) => this.scripts.get(hash));
    this.statesByList.set(hashes, { followedChanges: this.followedChanges, states });
    return states;
  }

  /** A state for a script released while its subscription was asked for: subscribed again at the next read. */
  private follow(hash: string): ScriptState {
    const state: ScriptState = { hash, subscribed: false, readAt: UNKNOWN_TIP, status: null, history: undefined, historyStatus: undefined, askedInPass: this.pass };
    this.scripts.set(hash, state);
    this.followedChanges++;
    return state;
  }

  /**
   * The tips other than `tip` that held histories were read at, with how many scripts each: the histories that
   * `advance` may bring to `tip` (subscribed, held, agreeing with the status last told; any other is read again).
   */
  readTips(tip: string): Map<string, number> {
    const tips = new Map<string, number>();
    for (const state of this.scripts.values()) {
      if (state.readAt === tip || state.readAt === UNKNOWN_TIP || !isCurrent(state)) continue;
      tips.set(state.readAt, (tips.get(state.readAt) ?? 0) + 1);
    }
    return tips;
  }

  /**
   * The server's chain grew from `fromTip` to `toTip` by blocks whose transactions pay the script hashes `paid` and
   * spend outputs of the txids `spent`. A history read at `fromTip` that holds none of `spent` nor any unconfirmed
   * transaction, and whose script is not in `paid`, is the same at `toTip` (no transaction of those blocks touches the
   * script: one spending its coin spends an output of a transaction in its history), so it is now read at `toTip`;
   * the others stay read at `fromTip`, hence stale, and are read again when asked for. Returns how many of each.
   */
  advance(fromTip: string, toTip: string, touches: { paid: ReadonlySet<string>; spent: ReadonlySet<string> }): { advanced: number; touched: number } {
    let advanced = 0;
    let touched = 0;
    for (const state of this.scripts.values()) {
      if (state.readAt !== fromTip || !isCurrent(state)) continue;
      // An unconfirmed entry may be confirmed, or left out by a conflict the block confirms elsewhere: read again.
      if (touches.paid.has(state.hash) || state.history!.some((entry) => entry.height <= 0 || touches.spent.has(entry.txid))) {
        touched++;
        continue;
      }
      state.readAt = toTip;
      advanced++;
    }
    return { advanced, touched };
  }

  /**
   * The server switched to another chain: no held history is known to be read on the chain it follows now, so none
   * is advanced; each is read again when asked for. Reads under way then are marked the same when they end.
   */
  chainSwitched(): void {
    this.chainSwitches++;
    for (const state of this.scripts.values()) state.readAt = UNKNOWN_TIP;
  }

  /**
   * The histories of the scripts (by script hash, in the same order) at the server's tip `tip` (its hash as known
   * now, before asking). ChainError `history_too_large` when the server refuses one as too large; the scripts it
   * could serve keep what was read. The list is walked as few times as can be: it is every watched script.
   */
  async histories(hashes: readonly string[], tip: string): Promise<Array<readonly HistoryEntry[]>> {
    const switches = this.chainSwitches;
    // What a read gives reflects `tip`'s chain, unless the server switched chains while it ran.
    const readAt = () => (this.chainSwitches === switches ? tip : UNKNOWN_TIP);
    const unsubscribed: string[] = [];
    this.statesOf(hashes).forEach((state, i) => {
      if (state) state.askedInPass = this.pass;
      if (!state?.subscribed) unsubscribed.push(hashes[i]!);
    });
    if (unsubscribed.length > 0) {
      const answers = await this.client.batchSettled(unsubscribed.map((hash) => ({ method: 'blockchain.scripthash.subscribe', params: [hash] })));
      answers.forEach((answer, i) => {
        if (!answer.ok) throw refusal(answer.error);
        const status = answer.result;
        if (status !== null && (typeof status !== 'string' || !HASH.test(status))) throw new ChainError('bad_response', 'The Electrum server sent an unexpected script status');
        const hash = unsubscribed[i]!;
        const state = this.scripts.get(hash);
        if (state) Object.assign(state, { subscribed: true, status, readAt: readAt() });
        else {
          this.scripts.set(hash, { hash, subscribed: true, readAt: readAt(), status, history: undefined, historyStatus: undefined, askedInPass: this.pass });
          this.followedChanges++;
        }
      });
    }
    // A new subscription's status may be the one Fulcrum told last too (it keeps one per script for all its
    // clients): a script's history is read at least once.
    const fresh = new Set(unsubscribed);
    // Every script of the list is followed now (a pass ending meanwhile may have dropped some: followed again).
    const states = this.statesOf(hashes).map((state, i) => state ?? this.follow(hashes[i]!));
    const outdated = states.filter((state) => state.readAt !== tip || fresh.has(state.hash) || state.historyStatus !== state.status);
    if (outdated.length > 0) {
      const emptied: string[] = [];
      const answers = await this.client.batchSettled(outdated.map((state) => ({ method: 'blockchain.scripthash.get_history', params: [state.hash] })));
      answers.forEach((answer, i) => {
        if (!answer.ok) throw refusal(answer.error);
        const history = parseHistory(answer.result);
        // The status computed from what was read: a change told while the read was under way leaves it stale.
        const state = outdated[i]!;
        const historyStatus = statusOf(history);
        if (history.length === 0 && (state.history === undefined || state.history.length > 0)) emptied.push(state.hash);
        // Read after the tip was known: newer than any status told before it.
        if (state.readAt !== tip || fresh.has(state.hash)) Object.assign(state, { status: historyStatus, readAt: readAt() });
        Object.assign(state, { history, historyStatus });
      });
      await this.checkEmptied(emptied);
    }
    return states.map((state) => state.history ?? []);
  }

  /**
   * A new sync pass begins: the scripts not asked for during the pass before are released (unsubscribed where the
   * server knows the method; an error answer or a server without it changes nothing here). Returns how many.
   */
  async newPass(): Promise<number> {
    const released = [...this.scripts].filter(([, state]) => state.askedInPass < this.pass);
    this.pass++;
    for (const [hash] of released) this.scripts.delete(hash);
    if (released.length > 0) this.followedChanges++;
    const subscribed = released.filter(([, state]) => state.subscribed).map(([hash]) => hash);
    if (subscribed.length > 0 && knowsUnsubscribe(this.client.serverInfo?.protocol)) {
      // Best effort: a lost connection took the subscriptions with it.
      await this.client.batchSettled(subscribed.map((hash) => ({ method: 'blockchain.scripthash.unsubscribe', params: [hash] }))).catch(() => undefined);
    }
    return released.length;
  }

  /**
   * Scripts read with an empty history that hold coins: a history the server hides as too large. Such a script is
   * read again next time (its history is forgotten), so that the check is made again until the server serves it.
   */
  private async checkEmptied(hashes: readonly string[]): Promise<void> {
    if (hashes.length === 0) return;
    const answers = await this.client.batchSettled(hashes.map((hash) => ({ method: 'blockchain.scripthash.get_balance', params: [hash] })));
    let hidden = 0;
    answers.forEach((answer, i) => {
      if (!answer.ok) throw refusal(answer.error);
      const { confirmed, unconfirmed } = (answer.result ?? {}) as { confirmed?: unknown; unconfirmed?: unknown };
      if (typeof confirmed !== 'number' || typeof unconfirmed !== 'number') throw new ChainError('bad_response', 'The Electrum server sent an unexpected script balance');
      if (confirmed === 0 && unconfirmed === 0) return;
      Object.assign(this.scripts.get(hashes[i]!)!, { history: undefined, historyStatus: undefined });
      hidden++;
    });
    if (hidden > 0) throw tooLarge(`the server answered an empty history for ${hidden} script(s) holding coins`);
  }
}

/** Protocol 1.4.2 and later have `blockchain.scripthash.unsubscribe`. */
function knowsUnsubscribe(protocol: string | undefined): boolean {
  const [major = 0, minor = 0, patch = 0] = (protocol ?? '').split('.').map(Number);
  return major > 1 || (major === 1 && (minor > 4 || (minor === 4 && patch >= 2)));
}

/** The words a wallet shows (the server's own stay in the log). */
export const HISTORY_TOO_LARGE_MESSAGE =
  "The Electrum server refuses to send the history of one of this wallet's addresses: it holds more transactions than the server allows (its max_history setting)";

function tooLarge(reason: string, rpcCode?: number): ChainError {
  return new ChainError('history_too_large', HISTORY_TOO_LARGE_MESSAGE, { ...(rpcCode !== undefined ? { rpcCode } : {}), reason });
}

function refusal(error: ChainError): ChainError {
  if (error.code === 'rpc_error' && TOO_LARGE.test(error.reason ?? error.message)) {
    return tooLarge(error.reason ?? error.message, error.rpcCode);
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
