/**
 * A wallet's lists for reads (transactions, unspent outputs, balances), kept across the changes
 * `applyStoredChanges` makes to its state in place: after a change only the entries it can have touched are
 * built again, and each list is sorted again from its previous order (nearly sorted: about linear time).
 *
 * Entries keep the confirmations of the tip they were built at, so a new block does not rebuild every entry:
 * read confirmations with `entryAtTip` / `utxoAtTip` and the lists' `tipHeight`.
 */
import { spendersOf, walletOutputsValue, type EngineState, type TrackedTx, type WalletState } from './state.js';
import type { AppliedChanges } from './wallets.js';
import { byOutpoint, COINBASE_MATURITY_CONFIRMATIONS, entryOf, isImmature, mostConfirmedFirst, newestFirst, oldestFirst, trustChecker, unspentOutputsOf } from './views.js';
import type { WalletBalances, WalletTxEntry, WalletUtxo } from './types.js';

export interface WalletListsAtTip {
  tipHeight: number | null;
  /** Every transaction, dropped ones included, oldest first. */
  transactions: readonly WalletTxEntry[];
  /** Live transactions (not dropped), newest first. */
  liveNewestFirst: readonly WalletTxEntry[];
  /** Unspent outputs by outpoint. */
  unspent: readonly WalletUtxo[];
  /** Unspent outputs, most confirmations first, then by outpoint. */
  unspentByConfirmations: readonly WalletUtxo[];
  balances: WalletBalances;
}

/** Transactions whose entries are built between two pauses of `build`: a few milliseconds' work. */
const BUILD_PART = 2_000;

const confirmationsAt = (blockHeight: number | null, tipHeight: number | null) => (blockHeight === null || tipHeight === null ? 0 : tipHeight - blockHeight + 1);

/** The entry with its confirmations at `tipHeight` (the entry itself when they are already right). */
export function entryAtTip(e: WalletTxEntry, tipHeight: number | null): WalletTxEntry {
  const confirmations = e.status === 'confirmed' ? confirmationsAt(e.blockHeight, tipHeight) : 0;
  return confirmations === e.confirmations ? e : { ...e, confirmations };
}

export function utxoAtTip(u: WalletUtxo, tipHeight: number | null): WalletUtxo {
  const confirmations = confirmationsAt(u.blockHeight, tipHeight);
  return confirmations === u.confirmations ? u : { ...u, confirmations };
}

export class WalletListCache {
  private readonly entries = new Map<string, WalletTxEntry>();
  /** Funding txid -> its unspent outputs paying the wallet. */
  private readonly coins = new Map<string, WalletUtxo[]>();
  private readonly coinbases = new Set<string>();
  private readonly dirtyEntries = new Set<string>();
  private readonly dirtyCoins = new Set<string>();
  private current: WalletListsAtTip | undefined;
  /** A `build` under way: changes of the state are noted meanwhile and applied once it ends. */
  private building = false;

  constructor(
    private readonly state: EngineState,
    private readonly walletId: string,
  ) {}

  private get wallet(): WalletState {
    return this.state.wallets.get(this.walletId)!;
  }

  /** Notes what a change of the state touched; the lists are brought up to date on the next `lists()`. */
  changed(applied: AppliedChanges): void {
    if (!this.current && !this.building) return; // nothing built yet: the first `lists()` builds everything
    const wallet = this.wallet;
    if (this.current && applied.replaced.size + applied.newlyPaying.size > wallet.txs.size / 4) {
      // Most of the wallet changed (a first scan read in one go): building everything again is cheaper.
      this.current = undefined;
      this.entries.clear();
      this.coins.clear();
      this.coinbases.clear();
      return;
    }
    const touched = [...applied.replaced.keys(), ...applied.newlyPaying];
    for (const txid of touched) {
      this.dirtyEntries.add(txid);
      this.dirtyCoins.add(txid);
      for (const version of [applied.replaced.get(txid), wallet.txs.get(txid)]) if (version) this.touchNeighbours(wallet, version);
    }
    const before = applied.previousTip?.height ?? null;
    const after = wallet.tip?.height ?? null;
    if (before !== after) {
      // A coinbase matures with the tip (and becomes immature again when it goes back).
      for (const txid of this.coinbases) {
        const t = wallet.txs.get(txid);
        if (t && isImmatureAt(t, before) !== isImmatureAt(t, after)) this.dirtyCoins.add(txid);
      }
    }
  }

  /** What depends on one version of a transaction: its parents' coins, its conflicts, its children. */
  private touchNeighbours(wallet: WalletState, t: TrackedTx): void {
    if (!t.coinbase) {
      for (const input of t.tx.inputs) {
        this.dirtyCoins.add(input.txid); // spent or unspent again
        for (const sibling of spendersOf(wallet, input.txid, input.vout)) this.dirtyEntries.add(sibling); // conflicts
      }
    }
    // Children count what they spend of it, and unconfirmed ones are trusted through it.
    const pending = [t];
    const seen = new Set<string>([t.txid]);
    while (pending.length > 0) {
      const parent = pending.pop()!;
      for (let vout = 0; vout < parent.tx.outputs.length; vout++) {
        for (const childId of spendersOf(wallet, parent.txid, vout)) {
          if (parent === t) this.dirtyEntries.add(childId);
          if (seen.has(childId)) continue;
          seen.add(childId);
          const child = wallet.txs.get(childId);
          if (!child) continue;
          this.dirtyCoins.add(childId);
          if (child.status === 'mempool') pending.push(child);
        }
      }
    }
  }

  lists(): WalletListsAtTip {
    const wallet = this.wallet;
    if (!this.current) this.current = this.buildAll(wallet);
    else if (this.dirtyEntries.size + this.dirtyCoins.size > 0 || this.current.tipHeight !== (wallet.tip?.height ?? null)) this.current = this.update(wallet, this.current);
    this.dirtyEntries.clear();
    this.dirtyCoins.clear();
    return this.current;
  }

  /** Whether the lists are built: `lists()` then only follows the changes noted since, never builds them all at once. */
  get built(): boolean {
    return this.current !== undefined;
  }

  /**
   * Builds the lists ahead of the first `lists()`, in parts with `pause` awaited between them, so that a
   * process loading a large wallet answers other requests meanwhile. The state may change between two parts if
   * each change is told to `changed()` (the sync's state, changed by its passes): the entries it touched are built
   * again at the next `lists()`.
   */
  async build(pause: () => Promise<void>): Promise<void> {
    if (this.current) return;
    this.dirtyEntries.clear(); // whatever changed before is in what is built now
    this.dirtyCoins.clear();
    this.building = true;
    try {
      const parts = this.buildParts(this.wallet);
      let step = parts.next();
      for (; !step.done; step = parts.next()) await pause();
      this.current = step.value;
    } finally {
      this.building = false;
    }
  }

  private buildAll(wallet: WalletState): WalletListsAtTip {
    const parts = this.buildParts(wallet);
    for (;;) {
      const step = parts.next();
      if (step.done) return step.value;
    }
  }

  /** The lists from every transaction of the wallet, yielding between parts of the work (a few milliseconds each). */
  private *buildParts(wallet: WalletState): Generator<void, WalletListsAtTip> {
    const trusted = trustChecker(wallet);
    let done = 0;
    for (const t of wallet.txs.values()) {
      this.addEntry(wallet, t, trusted);
      if (++done % BUILD_PART === 0) yield;
    }
    const transactions = yield* sortedInParts([...this.entries.values()], oldestFirst);
    yield;
    const live = yield* sortedInParts(transactions.filter((e) => e.status !== 'dropped'), newestFirst);
    yield;
    const unspent = yield* sortedInParts([...this.coins.values()].flat(), byOutpoint);
    yield;
    const spendable = sumCoins({ confirmed: 0n, unconfirmed: 0n }, unspent, 1n);
    return this.freeze(wallet, spendable, transactions, live, unspent, yield* sortedInParts([...unspent], mostConfirmedFirst));
  }

  private addEntry(wallet: WalletState, t: TrackedTx, trusted: (t: TrackedTx) => boolean): void {
    this.entries.set(t.txid, entryOf(wallet, t));
    this.keepCoins(t.txid, unspentOutputsOf(wallet, t, trusted));
    if (t.coinbase) this.coinbases.add(t.txid);
  }

  /** Only transactions with unspent outputs are kept (most of a large wallet's have none left). */
  private keepCoins(txid: string, coins: WalletUtxo[]): void {
    if (coins.length > 0) this.coins.set(txid, coins);
    else this.coins.delete(txid);
  }

  private update(wallet: WalletState, previous: WalletListsAtTip): WalletListsAtTip {
    const trusted = trustChecker(wallet);
    const oldEntries: WalletTxEntry[] = [];
    const newEntries: WalletTxEntry[] = [];
    for (const txid of this.dirtyEntries) {
      const old = this.entries.get(txid);
      if (old) oldEntries.push(old);
      const t = wallet.txs.get(txid);
      this.coinbases.delete(txid);
      if (!t) {
        this.entries.delete(txid);
        continue;
      }
      if (t.coinbase) this.coinbases.add(txid);
      const entry = entryOf(wallet, t);
      this.entries.set(txid, entry);
      newEntries.push(entry);
    }
    const oldCoins: WalletUtxo[] = [];
    const newCoins: WalletUtxo[] = [];
    for (const txid of this.dirtyCoins) {
      oldCoins.push(...(this.coins.get(txid) ?? []));
      const t = wallet.txs.get(txid);
      if (!t) {
        this.coins.delete(txid);
        continue;
      }
      const coins = unspentOutputsOf(wallet, t, trusted);
      this.keepCoins(txid, coins);
      newCoins.push(...coins);
    }
    const live = (entries: WalletTxEntry[]) => entries.filter((e) => e.status !== 'dropped');
    const spendable = sumCoins(sumCoins({ ...previous.balances }, oldCoins, -1n), newCoins, 1n);
    return this.freeze(
      wallet,
      spendable,
      replaceSorted(previous.transactions, oldEntries, newEntries, oldestFirst),
      replaceSorted(previous.liveNewestFirst, live(oldEntries), live(newEntries), newestFirst),
      replaceSorted(previous.unspent, oldCoins, newCoins, byOutpoint),
      replaceSorted(previous.unspentByConfirmations, oldCoins, newCoins, mostConfirmedFirst),
    );
  }

  private freeze(wallet: WalletState, spendable: Omit<WalletBalances, 'immature'>, transactions: readonly WalletTxEntry[], live: readonly WalletTxEntry[], unspent: readonly WalletUtxo[], byConfirmations: readonly WalletUtxo[]): WalletListsAtTip {
    return Object.freeze({
      tipHeight: wallet.tip?.height ?? null,
      transactions: Object.freeze(transactions),
      liveNewestFirst: Object.freeze(live),
      unspent: Object.freeze(unspent),
      unspentByConfirmations: Object.freeze(byConfirmations),
      balances: { confirmed: spendable.confirmed, unconfirmed: spendable.unconfirmed, immature: this.immature(wallet) },
    });
  }

  /** The outputs of immature coinbases (Core's getbalances `immature`). */
  private immature(wallet: WalletState): bigint {
    let immature = 0n;
    for (const txid of this.coinbases) {
      const t = wallet.txs.get(txid);
      if (!t || t.status === 'dropped' || !isImmature(wallet, t)) continue;
      immature += walletOutputsValue(t);
    }
    return immature;
  }
}

/** The balances `lists()` gives, counted from the state alone (no lists built): what a list of wallets shows. */
export function balancesOf(state: EngineState, walletId: string): WalletBalances {
  const wallet = state.wallets.get(walletId)!;
  const trusted = trustChecker(wallet);
  const balances: WalletBalances = { confirmed: 0n, unconfirmed: 0n, immature: 0n };
  for (const t of wallet.txs.values()) {
    sumCoins(balances, unspentOutputsOf(wallet, t, trusted), 1n);
    if (t.coinbase && t.status !== 'dropped' && isImmature(wallet, t)) balances.immature += walletOutputsValue(t);
  }
  return balances;
}

/**
 * Adds (sign 1n) or takes away (-1n) coins from Core's getbalances `trusted` (coins marked safe) and
 * `untrusted_pending` (the others): the unspent outputs are exactly what these two count.
 */
function sumCoins(balances: Omit<WalletBalances, 'immature'>, coins: readonly WalletUtxo[], sign: 1n | -1n): Omit<WalletBalances, 'immature'> {
  for (const u of coins) {
    if (u.safe) balances.confirmed += sign * u.valueSat;
    else balances.unconfirmed += sign * u.valueSat;
  }
  return balances;
}

/**
 * `previous` (sorted by `order`) without `removed` and with `added`, sorted. A few changes are found by binary
 * search and spliced into a copy; many are filtered out and the whole list sorted again.
 */
export function replaceSorted<T>(previous: readonly T[], removed: readonly T[], added: readonly T[], order: (a: T, b: T) => number): readonly T[] {
  if (removed.length + added.length === 0) return previous; // a block that only moved the tip
  if (removed.length + added.length > 64) {
    const gone = new Set(removed);
    return previous.filter((item) => !gone.has(item)).concat(added).sort(order);
  }
  const list = [...previous]; // not slice(): on a frozen array it takes a path ten times slower
  for (const item of removed) {
    let at = firstNotBefore(list, item, order);
    if (list[at] !== item) at = list.indexOf(item); // cannot happen while entries keep their sort keys; never guess
    if (at >= 0) list.splice(at, 1);
  }
  for (const item of added) list.splice(firstNotBefore(list, item, order), 0, item);
  return list;
}

/** Items sorted or merged between two pauses of `sortedInParts`: about 15 ms of work. */
const SORT_PART = 20_000;

/**
 * `items` sorted by `order` (stable, as Array.prototype.sort), yielding between parts: runs of SORT_PART sorted, then
 * merged two by two, SORT_PART items merged between two yields. A 200,000-entry list sorted at once held the process
 * for 150-190 ms. Returns the sorted items: `items` itself, sorted in place, when it fits one part.
 */
export function* sortedInParts<T>(items: T[], order: (a: T, b: T) => number): Generator<void, T[]> {
  if (items.length <= SORT_PART) return items.sort(order);
  let runs: T[][] = [];
  for (let from = 0; from < items.length; from += SORT_PART) {
    runs.push(items.slice(from, from + SORT_PART).sort(order));
    yield;
  }
  let work = 0;
  while (runs.length > 1) {
    const merged: T[][] = [];
    for (let i = 0; i < runs.length; i += 2) {
      const left = runs[i]!;
      const right = runs[i + 1];
      if (!right) {
        merged.push(left);
        continue;
      }
      const out: T[] = new Array(left.length + right.length);
      let a = 0;
      let b = 0;
      for (let k = 0; k < out.length; k++) {
        // Left first on ties: the merge keeps the order of equal items, as the sort does.
        out[k] = b >= right.length || (a < left.length && order(left[a]!, right[b]!) <= 0) ? left[a++]! : right[b++]!;
        if (++work % SORT_PART === 0) yield;
      }
      merged.push(out);
    }
    runs = merged;
  }
  return runs[0]!;
}

/** The first position of `list` whose item does not sort before `item`. */
function firstNotBefore<T>(list: readonly T[], item: T, order: (a: T, b: T) => number): number {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (order(list[middle]!, item) < 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

function isImmatureAt(t: TrackedTx, tipHeight: number | null): boolean {
  const confirmations = t.status === 'confirmed' && t.block ? confirmationsAt(t.block.height, tipHeight) : 0;
  return confirmations < COINBASE_MATURITY_CONFIRMATIONS;
}
