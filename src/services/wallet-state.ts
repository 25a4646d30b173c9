/**
 * Wallet state for reads, rebuilt from the store's truth: an in-process engine per wallet, kept
 * while the wallet's stored revision is unchanged. Any instance (syncing or not) answers the same.
 */
import {
  addWalletInParts,
  applyStoredChanges,
  createEngineState,
  EngineError,
  entryAtTip,
  hexOf,
  parseStoredTransaction,
  utxoAtTip,
  walletSummary,
  WalletListCache,
  type BlockRef,
  type BlocksSeen,
  type EngineChangeset,
  type EngineState,
  type ParsedStoredTransaction,
  type StoredTransaction,
  type WalletBalances,
  type WalletListsAtTip,
  type WalletSummary,
  type WalletTxEntry,
  type WalletState,
  type WalletUtxo,
} from '../engine/index.js';
import { heldAsStored } from './held-states.js';
import type { Store, StoredWallet, WalletChainHead, WalletChainRows } from '../store/repositories.js';
import { mapInParts, nextTurn } from './turns.js';
import { WalletScripts, WalletScriptsCache } from './wallet-scripts.js';
import type { Page } from './wallet-format.js';
import type { BalanceSummaries } from './balance-summaries.js';
import { KeptStates, type KeepingBounds } from './kept-states.js';
import { ServiceError } from './errors.js';
import type { SharedLists, SharedListsAt } from './shared-lists.js';

/** Scripts are kept apart (wallet-scripts.ts); those who load wallets find them here too. */
export { WalletScripts, WalletScriptsCache };

/**
 * Loads the wallet from its stored rows into `state` (no rescan). The transactions, most of the work, are parsed
 * in parts before the state is touched, the process answering other requests between them: a wallet of 200,000
 * transactions takes seconds. The returned changeset is what derivation added: scripts for a grown gap limit, or
 * for receive addresses revealed since the rows were written.
 */
export async function loadWalletInto(state: EngineState, wallet: StoredWallet, rows: WalletChainRows, scripts: WalletScripts) {
  await deriveStoredInParts(rows, scripts); // read, not derived again; those missing derived in parts, not all at once by the engine
  return loadParsedInto(state, wallet, rows, await parseInParts(wallet.id, rows.sync.tip, rows.transactions, heldElsewhere(wallet.id, scripts)), scripts);
}

/** Rows taken in a load: those of a large wallet's transactions read in one slice. */
const LOAD_SLICE_ROWS = 1_000;

/**
 * Loads the wallet as `loadWalletInto` does, its transactions read from the store and parsed one slice at a time:
 * the rows of a large wallet, hex included, are never all held at once (they would make the process grow by
 * more than the state it keeps). 'changed' when the wallet was written during the read: nothing was loaded.
 */
export async function loadStoredWalletInto(
  state: EngineState,
  wallet: StoredWallet,
  store: Store,
  scripts: WalletScripts,
): Promise<{ revision: number; changes: EngineChangeset } | 'changed' | undefined> {
  const parsed: ParsedStoredTransaction[] = [];
  const blocks: BlocksSeen = new Map();
  const held = heldElsewhere(wallet.id, scripts);
  const head = await store.wallets.chainRowsInSlices(wallet.id, LOAD_SLICE_ROWS, async (transactions, { sync }) => {
    for (const one of await parseInParts(wallet.id, sync.tip, transactions, held, blocks)) parsed.push(one);
    await nextTurn(); // the store may answer synchronously (SQLite): others go between two slices
  });
  if (head === undefined || head === 'changed') return head;
  await deriveStoredInParts(head, scripts);
  return { revision: head.revision, changes: await loadParsedInto(state, wallet, head, parsed, scripts) };
}

async function loadParsedInto(state: EngineState, wallet: StoredWallet, rows: WalletChainHead, parsedTransactions: readonly ParsedStoredTransaction[], scripts: WalletScripts) {
  await deriveAheadOfLoad(wallet, rows, scripts);
  const changes = await addWalletInParts(state, { walletId: wallet.id, gapLimit: wallet.gapLimit, derive: scripts.derive, deriveHex: scripts.deriveHex, knownScript: scripts.knownScript }, {
    sync: rows.sync,
    lastRevealedReceive: rows.lastRevealedReceive,
    addresses: rows.addresses,
    parsedTransactions,
  }, nextTurn);
  scripts.held?.add(state);
  return changes;
}

/**
 * Derives in parts the scripts the engine is about to derive: the gap limit past the last used (or, for
 * receive, revealed) index, when it reaches past the stored addresses (a new wallet, a raised gap limit).
 */
async function deriveAheadOfLoad(wallet: StoredWallet, rows: WalletChainHead, scripts: WalletScripts): Promise<void> {
  const stored = storedCounts(rows);
  const wanted = watchedCounts(wallet, rows);
  for (const branch of [0, 1] as const) if (wanted[branch] > stored[branch]) await scripts.deriveInParts(branch, wanted[branch]);
}

/** Per branch, the scripts a load watches: the gap limit past the last used (or, for receive, revealed) index. */
function watchedCounts(wallet: StoredWallet, rows: WalletChainHead): [number, number] {
  return [Math.max(rows.sync.lastUsedReceive, rows.lastRevealedReceive) + 1 + wallet.gapLimit, rows.sync.lastUsedChange + 1 + wallet.gapLimit];
}

/**
 * A wallet the sync never followed (no tip: created, the sync not yet at it) whose load would derive its first gap.
 * A restart's first load leaves such wallets for after it: readiness waits for the wallets followed before, and
 * thousands of new ones would make it wait for their derivations (milliseconds each).
 */
export function neverFollowedAndUnderived(wallet: StoredWallet, rows: WalletChainHead): boolean {
  if (rows.sync.tip !== null) return false;
  const stored = storedCounts(rows);
  const wanted = watchedCounts(wallet, rows);
  return wanted[0] > stored[0] || wanted[1] > stored[1];
}

/**
 * Asks the gap worker now for the scripts a load of these rows will derive (`deriveStoredInParts`, then the gap past
 * the last used or revealed index), without waiting: a load of many wallets asks for the next ones' while it loads
 * one, and the worker never waits for this thread. Nothing happens without a worker.
 */
export function prepareLoad(wallet: StoredWallet, rows: WalletChainHead, scripts: WalletScripts): void {
  scripts.remember(rows.addresses);
  const stored = storedCounts(rows);
  const wanted = watchedCounts(wallet, rows);
  for (const branch of [0, 1] as const) scripts.prepare(branch, Math.max(stored[branch], wanted[branch]));
}

/**
 * Makes the stored addresses' scripts, which the sync watches, known before the wallet is in the state (the sync
 * would otherwise derive them all at once): read from the rows, so nothing is derived but what they lack.
 */
async function deriveStoredInParts(rows: WalletChainHead, scripts: WalletScripts): Promise<void> {
  scripts.remember(rows.addresses);
  const stored = storedCounts(rows);
  for (const branch of [0, 1] as const) await scripts.deriveInParts(branch, stored[branch]);
}

/** Number of stored addresses per branch (their indexes run from 0). */
function storedCounts(rows: WalletChainHead): [number, number] {
  const counts: [number, number] = [0, 0];
  for (const row of rows.addresses) if (row.branch === 0 || row.branch === 1) counts[row.branch] = Math.max(counts[row.branch], row.index + 1);
  return counts;
}

/**
 * Stored transactions checked and parsed in parts, the process answering other work between them; those another
 * state of the wallet holds as stored are taken from it.
 */
function parseInParts(walletId: string, tip: BlockRef | null, rows: readonly StoredTransaction[], held: readonly WalletState[], blocks: BlocksSeen = new Map()): Promise<ParsedStoredTransaction[]> {
  return mapInParts(rows, (row) => parseStoredTransaction(walletId, tip, row, blocks, held.length > 0 ? heldAsStored(held, row) : undefined));
}

/** The wallet as the other states of the process hold it (ADR 0018). */
const heldElsewhere = (walletId: string, scripts: WalletScripts): WalletState[] => scripts.held?.walletsOf(walletId) ?? [];

/**
 * One wallet as read at one stored revision. `lists` and `summary` are that revision's and never change.
 * `state` is the wallet's engine state, which later reads bring forward in place: use it only for what never
 * goes away (which scripts are the wallet's).
 */
export interface WalletView {
  wallet: StoredWallet;
  revision: number;
  state: EngineState;
  summary: WalletSummary;
  /** Entries keep the confirmations of the tip they were built at: read them through the helpers below. */
  lists: WalletListsAtTip;
}

/** The engine's lists of one stored revision with confirmations at its tip (frozen: callers map and filter, never change them). */
export interface WalletLists {
  transactions: readonly WalletTxEntry[];
  unspent: readonly WalletUtxo[];
  /** Raw transactions of the wallet by txid. */
  hexByTxid: { get(txid: string): string | undefined; has(txid: string): boolean };
}

const listsAtTip = new WeakMap<WalletListsAtTip, WalletLists>();

/**
 * Every transaction and unspent output of the view, confirmations included: built on first use per revision
 * (a pass over every entry). Pages are cheaper through `liveTransactionsPage` and `unspentPage`.
 */
export function walletLists(view: WalletView): WalletLists {
  let lists = listsAtTip.get(view.lists);
  if (!lists) {
    const { tipHeight, transactions, unspent } = view.lists;
    lists = {
      transactions: Object.freeze(transactions.map((e) => entryAtTip(e, tipHeight))),
      unspent: Object.freeze(unspent.map((u) => utxoAtTip(u, tipHeight))),
      hexByTxid: { get: (txid) => transactionHex(view, txid), has: (txid) => transactionHex(view, txid) !== undefined },
    };
    listsAtTip.set(view.lists, lists);
  }
  return lists;
}

/**
 * A wallet transaction's raw hex. Looked up in the state, which may be newer than the view: a transaction
 * keeps its txid, so its hex differs at most in the witness, and a transaction gone since is undefined.
 */
export function transactionHex(view: WalletView, txid: string): string | undefined {
  const held = view.state.wallets.get(view.wallet.id)?.txs.get(txid);
  return held && hexOf(held);
}

export function walletBalances(view: WalletView): WalletBalances {
  return view.lists.balances;
}

/** A page of the live transactions (not dropped), newest first. */
export function liveTransactionsPage(view: WalletView, page: Page): WalletTxEntry[] {
  return paginate(view.lists.liveNewestFirst, page).map((e) => entryAtTip(e, view.lists.tipHeight));
}

/** A page of the unspent outputs, most confirmations first, then by outpoint. */
export function unspentPage(view: WalletView, page: Page): WalletUtxo[] {
  return paginate(view.lists.unspentByConfirmations, page).map((u) => utxoAtTip(u, view.lists.tipHeight));
}

export function paginate<T>(items: readonly T[], page: Page): T[] {
  const offset = page.offset ?? 0;
  return page.limit === undefined ? items.slice(offset) : items.slice(offset, offset + page.limit);
}

/**
 * Stored rows the engine refuses (a damaged store, a hand edit) are the store's failure, not a bug of the request:
 * said as such, with the way out. The sync leaves such a wallet aside until a rescan rewrites its rows.
 */
function refusedRowsSaid(error: unknown): never {
  if (error instanceof EngineError && error.code === 'invalid_stored_state') {
    throw new ServiceError('unavailable', WALLET_ROWS_INCONSISTENT, "This wallet's stored chain data is inconsistent; a rescan of the wallet rebuilds it");
  }
  throw error;
}

export const WALLET_ROWS_INCONSISTENT = 'wallet_rows_inconsistent';

/** Whether `error` is a wallet's read refused for its inconsistent stored rows (503 `wallet_rows_inconsistent`). */
export const isInconsistentRows = (error: unknown): error is ServiceError => error instanceof ServiceError && error.code === WALLET_ROWS_INCONSISTENT;

/**
 * One wallet's engine state for reads, loaded once and then brought forward by the rows written since; or, for a
 * large wallet the sync follows, the sync's (`lists` undefined: the lists are those the sync keeps, shared-lists.ts).
 */
interface LoadedWallet {
  state: EngineState;
  lists: WalletListCache | undefined;
  view: WalletView;
}

/**
 * What the reads keep by default (settings `wallet_states_kept`, `wallet_states_budget`, `wallet_states_idle`). A
 * service of thousands of wallets, each read now and then (a listing's pages), would otherwise hold every one of
 * them twice, once for the sync and once for the reads. The budget counts transactions plus coins: about 650 bytes
 * of reads' state and lists each on a wallet of 200,000 transactions and 100,000 coins (195 MB, ADR 0018), which
 * fits alone; two such do not. Shared with the sync (ADR 0023), such a wallet's lists alone weigh about 300 bytes each.
 */
export const READ_STATES_KEPT = 1_000;
export const READ_STATES_BUDGET = 500_000;
export const READ_STATES_IDLE_MS = 600_000;

/** What a loaded wallet weighs against the budget: its transactions plus its coins, both counted already. */
function weightOf(view: WalletView): number {
  return view.lists.transactions.length + view.lists.unspent.length;
}

export class WalletStateCache {
  /** By wallet id; past the bounds the least recently read is dropped and loaded again from the store when next read. */
  private readonly loaded: KeptStates<LoadedWallet>;
  /** The read under way per wallet: readers of a new revision share it, and the state changes one read at a time. */
  private readonly reading = new Map<string, Promise<WalletView>>();

  constructor(
    private readonly store: Store,
    private readonly scripts: WalletScriptsCache,
    bounds: Partial<KeepingBounds> = {},
    private readonly summaries?: BalanceSummaries,
    private readonly shared?: SharedLists,
  ) {
    const dropped = (id: string, loaded: LoadedWallet) => {
      if (!loaded.lists) shared?.release(id); // the sync no longer keeps its lists for the reads
    };
    this.loaded = new KeptStates({ count: READ_STATES_KEPT, budget: READ_STATES_BUDGET, idleMs: READ_STATES_IDLE_MS, ...bounds }, undefined, dropped);
  }

  /** The wallet's balances as stored now: its summary at the stored revision when known, else from its state loaded. */
  async balances(wallet: StoredWallet): Promise<WalletBalances> {
    // Revision 0: no chain row was ever written (the sync has not reached the wallet), so it holds nothing. Its state
    // would derive its first gap just to count no coins: a listing of thousands of new wallets waited for that.
    if (wallet.revision === 0) return { confirmed: 0n, unconfirmed: 0n, immature: 0n };
    const known = this.summaries?.at(wallet.id, wallet.revision);
    if (known) return known;
    const view = await this.view(wallet);
    this.summaries?.note(wallet.id, view.revision, view.lists.balances);
    return view.lists.balances;
  }

  /** The wallet as stored now (or newer: a view read meanwhile). */
  async view(wallet: StoredWallet): Promise<WalletView> {
    this.loaded.dropIdle();
    for (;;) {
      const current = this.loaded.get(wallet.id)?.view;
      if (current && current.revision >= wallet.revision) {
        this.loaded.touch(wallet.id);
        return { ...current, wallet };
      }
      const under = this.reading.get(wallet.id);
      if (under) {
        await under; // its failure is this reader's too; after it, look again (it may have read an older revision)
        continue;
      }
      this.loaded.touch(wallet.id); // read now: not idle while it follows the rows written since
      const read = this.read(wallet).catch(refusedRowsSaid).finally(() => this.reading.delete(wallet.id));
      this.reading.set(wallet.id, read);
      return { ...(await read), wallet };
    }
  }

  forget(walletId: string): void {
    this.loaded.delete(walletId);
    this.summaries?.forget(walletId);
  }

  /** The wallets whose states are kept, least recently read first. */
  keptWallets(): string[] {
    return this.loaded.ids();
  }

  /** What the states kept weigh together: transactions plus coins. */
  keptWeight(): number {
    return this.loaded.weight();
  }

  /** Stops looking for idle states (the service is stopping). */
  stop(): void {
    this.loaded.stop();
  }

  private async read(wallet: StoredWallet): Promise<WalletView> {
    // The sync's lists when it holds the wallet at this revision: also in place of a state the reads loaded while it
    // did not (after a rescan), which is then given back.
    const shared = await this.shared?.at(wallet.id, wallet.revision);
    if (shared) return this.keepShared(wallet, shared);
    const loaded = this.loaded.get(wallet.id);
    if (loaded && !loaded.lists) this.loaded.delete(wallet.id); // the sync no longer holds it so: loaded from the store below
    else if (loaded?.lists) {
      const changes = await this.store.wallets.chainChangesSince(wallet.id, loaded.view.revision);
      if (changes === undefined) throw new Error(`Wallet ${wallet.id} vanished while being read`);
      if (changes !== 'reload') {
        if (changes.revision === loaded.view.revision) return loaded.view;
        // Parsed before the state changes: a first scan's changes hold every transaction of the wallet.
        const { transactions, ...rest } = changes;
        const scripts = this.scripts.get(wallet);
        scripts.remember(rest.addresses);
        const parsedTransactions = await parseInParts(wallet.id, changes.sync.tip, transactions, heldElsewhere(wallet.id, scripts));
        try {
          const lists = loaded.lists;
          lists.changed(applyStoredChanges(loaded.state, wallet.id, { ...rest, parsedTransactions }));
          await lists.build(nextTurn); // only when most of the wallet changed: otherwise the lists follow the change
          loaded.view = this.viewOf(wallet, changes.revision, loaded.state, lists);
          this.loaded.reweigh(wallet.id, loaded, weightOf(loaded.view)); // unless dropped meanwhile
          return loaded.view;
        } catch (error) {
          // Rows are checked before anything changes, but a state in doubt is never kept: the next read loads it.
          this.loaded.delete(wallet.id);
          throw error;
        }
      }
    }
    let state = createEngineState();
    const scripts = this.scripts.get(wallet);
    const inSlices = await loadStoredWalletInto(state, wallet, this.store, scripts);
    let revision = typeof inSlices === 'object' ? inSlices.revision : undefined;
    if (inSlices === 'changed') {
      // Written during the read in slices (a sync write): read it whole, in one snapshot.
      const rows = await this.store.wallets.chainRows(wallet.id);
      if (rows) {
        state = createEngineState();
        await loadWalletInto(state, wallet, rows, scripts);
      }
      revision = rows?.revision;
    }
    if (revision === undefined) throw new Error(`Wallet ${wallet.id} vanished while being read`);
    const lists = new WalletListCache(state, wallet.id);
    await lists.build(nextTurn);
    const fresh: LoadedWallet = { state, lists, view: this.viewOf(wallet, revision, state, lists) };
    // Drops others past the bounds, never this one. A view handed out before stays valid: views never change, and a
    // state dropped is no longer brought forward (its transactions' bodies stay shared while a view holds it).
    this.loaded.keep(wallet.id, fresh, weightOf(fresh.view));
    return fresh.view;
  }

  /** The view of `revision`, whose balances are noted: the wallet list shows them without a state, once dropped too. */
  private viewOf(wallet: StoredWallet, revision: number, state: EngineState, lists: WalletListCache): WalletView {
    return this.noted({ wallet, revision, state, summary: walletSummary(state, wallet.id), lists: lists.lists() });
  }

  private noted(view: WalletView): WalletView {
    this.summaries?.note(view.wallet.id, view.revision, view.lists.balances);
    return view;
  }

  /** Keeps the view of the sync's lists (the entry kept before, when shared too, brought forward in place). */
  private keepShared(wallet: StoredWallet, shared: SharedListsAt): WalletView {
    const view = this.noted({ wallet, ...shared });
    const kept = this.loaded.get(wallet.id);
    if (kept && !kept.lists) {
      kept.state = shared.state;
      kept.view = view;
      this.loaded.reweigh(wallet.id, kept, weightOf(view));
    } else this.loaded.keep(wallet.id, { state: shared.state, lists: undefined, view }, weightOf(view));
    return view;
  }
}
