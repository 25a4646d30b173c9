/**
 * What a wallet's users read (read access): the wallet list, one wallet's details, transactions, coins,
 * addresses and scan progress. Nothing here writes. Coins held by pending PSBTs come from the store's
 * reservations, which the sync keeps in step with the chain.
 */
import { createHash } from 'node:crypto';
import { bytesOfBinary, toHex } from '../../core/bytes.js';
import { HARDENED } from '../../core/keys/derive.js';
import { parseTransaction } from '../../core/tx.js';
import { entryAtTip, newestFirst, type WalletBalances, type WalletTxEntry } from '../../engine/index.js';
import type { ChainSource, ChainTip } from '../../chain/types.js';
import type { Store, StoredWallet, UtxoFlagRow } from '../../store/repositories.js';
import { invalidField, ServiceError } from '../errors.js';
import type { Principal } from '../principal.js';
import { mapInParts, nextTurn } from '../turns.js';
import { DEFAULT_TIMELOCK_WARNING_BLOCKS, expiringCoins, isMiniscriptText, MiniscriptDeriver, spendableFrom, spendingPathViews, type SpendingPathView } from '../miniscript-wallet.js';
import type { WalletDirectory, WalletListing } from '../service-details.js';
import {
  balanceView,
  scriptAddress,
  txListEntry,
  utxoView,
  type AddressEntry,
  type Page,
  type ScanState,
  type TxListEntry,
  type UtxoContext,
  type UtxoView,
  type WalletDetails,
  type WalletListItem,
} from '../wallet-format.js';
import {
  isInconsistentRows,
  liveTransactionsPage,
  unspentPage,
  walletBalances,
  type WalletScriptsCache,
  type WalletStateCache,
  type WalletView,
} from '../wallet-state.js';
import { walletNotFound, type WalletAccess } from './access.js';

/** Where the wallet part reaches the chain; null when no node is configured. */
export interface ChainAccess {
  readonly source: ChainSource | null;
  /** The node's tip, cached briefly; null when the node does not answer. */
  tip(): Promise<ChainTip | null>;
  /** The last tip the node told, while it does not answer now (null: none yet). */
  lastKnownTip?(): ChainTip | null;
}

export interface WalletReadsDeps {
  store: Store;
  access: WalletAccess;
  chain: ChainAccess;
  states: WalletStateCache;
  scripts: WalletScriptsCache;
  /** Why the chain source refuses to follow a wallet, if it does. */
  refusals?: { of(walletId: string): { code: string; message: string } | undefined };
  /** Miniscript wallets: coins whose recovery opens within this many blocks are listed as expiring. */
  timelockWarningBlocks?: number;
}

/** A page of the wallet list and the number of wallets in the whole list. */
export interface WalletListPage {
  wallets: WalletListItem[];
  total: number;
}

export interface DetailsOptions {
  /** False: no coins in the answer. */
  utxos?: boolean;
  /** One page of the coins (default: every coin). */
  utxoPage?: Page;
}

export class WalletReads implements WalletDirectory {
  constructor(private readonly deps: WalletReadsDeps) {}

  /** Every wallet the caller can read, with balances (each wallet's state loaded; for the command line). */
  async list(principal: Principal): Promise<WalletListItem[]> {
    return (await this.listPage(principal, {}, { unpagedMax: Number.POSITIVE_INFINITY })).wallets;
  }

  /**
   * One page of the wallets the caller can read, oldest first then by alias, with how many there are. The
   * store reads only the page, and only the page's wallets have their state read for the balance: a page of
   * 50 among 10,000 wallets costs 50 rows and 50 loads, not 10,000. Without `limit`, every wallet up to `unpagedMax`; past it 422 `page_required`
   * (a first load is some 20 ms a wallet: 10,000 unpaged would take minutes).
   */
  async listPage(principal: Principal, page: Page = {}, { unpagedMax = UNPAGED_WALLET_LIST_MAX } = {}): Promise<WalletListPage> {
    // Unpaged, one wallet past the cap is enough to know the list is too long.
    const asked = page.limit === undefined && Number.isFinite(unpagedMax) ? { ...page, limit: unpagedMax + 1 } : page;
    const { wallets: readable, total } = await this.deps.access.readablePage(principal, asked);
    if (page.limit === undefined && total > unpagedMax) {
      throw new ServiceError('unprocessable', 'page_required', `You can access ${total} wallets, more than ${unpagedMax} in one answer: page the list with limit and offset`, {
        errors: [{ path: '/querystring/limit', message: `required with more than ${unpagedMax} wallets` }],
      });
    }
    const wallets: WalletListItem[] = [];
    for (const wallet of readable) {
      // Loaded states answer without a turn: an unpaged list of thousands gives way between parts.
      if (wallets.length > 0 && wallets.length % LISTED_PER_TURN === 0) await nextTurn();
      // A summary, not the wallet's state, when the sync counted it. A wallet whose rows are damaged is listed with why,
      // not the whole list refused: the others stay reachable, and it can be rescanned.
      const balance = await this.deps.states.balances(wallet).then(balanceView, (error: unknown) => {
        if (isInconsistentRows(error)) return { error: { code: error.code, message: error.message } };
        throw error;
      });
      wallets.push({
        alias: wallet.alias,
        name: wallet.name,
        description: wallet.description,
        address_type: wallet.addressType,
        sigs_required: wallet.sigsRequired,
        sigs_total: wallet.sigsTotal,
        ...('error' in balance ? { balance: null, error: balance.error } : { balance }),
        ...this.pathsOf(wallet),
      });
    }
    return { wallets, total };
  }

  async listFor(principal: Principal): Promise<WalletListing> {
    // Names only: the service details list every wallet, and reading each one's whole row cost 0.2-0.6 s at 10,000.
    const wallets = await this.deps.access.reachableNames(principal);
    const listing: WalletListing = { wallets_names: [], alias_name: {}, name_alias: {}, wallets_alias: [] };
    for (const wallet of wallets) {
      listing.wallets_names.push(wallet.name);
      listing.wallets_alias.push(wallet.alias);
      listing.alias_name[wallet.alias] = wallet.name;
      listing.name_alias[wallet.name] = wallet.alias;
    }
    return listing;
  }

  /**
   * `page` pages the transaction list, `options.utxoPage` the coin list (default: every coin); `utxos: false`
   * leaves the coin list empty (pages that show coins page them with utxoPage).
   */
  async details(principal: Principal, alias: string, page: Page = {}, options: DetailsOptions = {}): Promise<WalletDetails> {
    return this.detailsOf(await this.deps.access.resolve(principal, alias, 'read'), page, options);
  }

  /** The details of a wallet the caller was already checked for. */
  async detailsOf(wallet: StoredWallet, page: Page = {}, options: DetailsOptions = {}): Promise<WalletDetails> {
    const view = await this.deps.states.view(wallet);
    const labels = await this.deps.store.wallets.addressLabels(wallet.id);
    return this.formatDetails(wallet, {
      tip: view.summary.tip,
      lastUsedChange: view.summary.lastUsedChange,
      balances: walletBalances(view),
      utxo: options.utxos === false ? [] : await this.utxoViews(view, labels, options.utxoPage),
      txlist: await this.txEntries(view, labels, await this.deps.store.labels.txLabels(wallet.id), page),
    });
  }

  /**
   * The details of a wallet just created: nothing about its chain is stored yet, so there is no state to load,
   * and only the two addresses shown are derived. The sync derives the rest of its gap, in parts, when it loads it.
   */
  async newWalletDetails(wallet: StoredWallet): Promise<WalletDetails> {
    return this.formatDetails(wallet, { tip: null, lastUsedChange: -1, balances: { confirmed: 0n, unconfirmed: 0n, immature: 0n }, utxo: [], txlist: [] });
  }

  private async formatDetails(wallet: StoredWallet, chain: { tip: ChainTip | null; lastUsedChange: number; balances: WalletBalances; utxo: UtxoView[]; txlist: TxListEntry[] }): Promise<WalletDetails> {
    const scripts = this.deps.scripts.get(wallet);
    // The address `addresses/next` never hands out (ADR 0003): whoever reads it here may give it to a payer.
    const receiveIndex = (await this.deps.store.wallets.receiveIndexes(wallet.id))?.shown;
    if (receiveIndex === undefined) throw walletNotFound(); // deleted meanwhile
    const changeIndex = chain.lastUsedChange + 1;
    const address = (branch: 0 | 1, index: number) => scriptAddress(toHex(scripts.scriptAt(branch, index)), wallet.network);
    return {
      alias: wallet.alias,
      name: wallet.name,
      description: wallet.description,
      network: wallet.network,
      address_type: wallet.addressType,
      sigs_required: wallet.sigsRequired,
      sigs_total: wallet.sigsTotal,
      keys: wallet.keys.map((k) => ({ fingerprint: k.fingerprint, derivation: k.derivation, xpub: k.xpub, label: k.label })),
      recv_descriptor: wallet.receiveDescriptor,
      change_descriptor: wallet.changeDescriptor,
      address: address(0, receiveIndex),
      address_index: receiveIndex,
      change_address: address(1, changeIndex),
      change_index: changeIndex,
      balance: balanceView(chain.balances),
      utxo: chain.utxo,
      txlist: chain.txlist,
      scan: await this.scanState(wallet, chain.tip),
      pending_psbts: await this.deps.store.psbts.countPending(wallet.id),
      ...this.pathsOf(wallet),
      ...(isMiniscriptText(wallet.receiveDescriptor) && {
        timelock_expiring: expiringCoins(chain.utxo, chain.tip?.height ?? 0, this.deps.timelockWarningBlocks ?? DEFAULT_TIMELOCK_WARNING_BLOCKS),
      }),
    };
  }

  /** `{spending_paths}` of a miniscript wallet, nothing for the fixed shapes. */
  private pathsOf(wallet: StoredWallet): { spending_paths?: SpendingPathView[] } {
    if (!isMiniscriptText(wallet.receiveDescriptor)) return {};
    const deriver = this.deps.scripts.get(wallet).deriver(0);
    return deriver instanceof MiniscriptDeriver ? { spending_paths: spendingPathViews(deriver, wallet.keys) } : {};
  }

  /**
   * One page (default: all) of the coins, most confirmations first; only the page is formatted, in parts (an
   * unpaged list may hold 100,000 coins: other requests are answered meanwhile).
   */
  private async utxoViews(view: WalletView, labels: Map<string, string>, page: Page = {}): Promise<UtxoView[]> {
    const ctx = await this.utxoContext(view.wallet, labels);
    return mapInParts(unspentPage(view, page), (u) => utxoView(u, ctx));
  }

  private async utxoContext(wallet: StoredWallet, labels: Map<string, string>, flags?: UtxoFlagRow[]): Promise<UtxoContext> {
    const coinFlags = flags ?? (await this.deps.store.wallets.utxoFlags(wallet.id));
    const reservations = await this.deps.store.psbts.reservations(wallet.id);
    const scripts = this.deps.scripts.get(wallet);
    const deriver = isMiniscriptText(wallet.receiveDescriptor) ? scripts.deriver(0) : undefined;
    const miniscript = deriver instanceof MiniscriptDeriver ? deriver : undefined;
    return {
      addressOf: (utxo) => scripts.addressOf(utxo.branch, utxo.index, utxo.script),
      ...(miniscript && { spendableFrom: (height: number | null) => spendableFrom(miniscript, height) }),
      addressLabels: labels,
      coinLabels: new Map(coinFlags.filter((f) => f.label !== '').map((f) => [`${f.txid}:${f.vout}`, f.label])),
      reservedBy: new Map(reservations.map((r) => [`${r.txid}:${r.vout}`, r.psbtTxid])),
    };
  }

  /**
   * Live transactions (confirmed and in the mempool), newest first; replaced or evicted ones are left out.
   * Sorted on the engine's entries and only the page formatted: a page of a wallet with many transactions
   * costs the sort, not an address encoding per transaction.
   */
  /** One page (default: all) of the transactions, newest first, formatted in parts like the coins. */
  private txEntries(view: WalletView, labels: Map<string, string>, txLabels: Map<string, string>, page: Page = {}): Promise<TxListEntry[]> {
    return mapInParts(liveTransactionsPage(view, page), (e) => txListEntry(e, view.wallet.alias, view.wallet.network, labels, txLabels));
  }

  private async scanState(wallet: StoredWallet, tip: ChainTip | null): Promise<ScanState | null> {
    const scan = await this.scanProgress(wallet, tip);
    const refusal = this.deps.refusals?.of(wallet.id);
    if (!refusal) return scan;
    const error = { code: refusal.code, message: refusal.message };
    return { ...(scan ?? { progress: 1, height: Math.max(tip?.height ?? wallet.birthday - 1, 0) }), error };
  }

  private async scanProgress(wallet: StoredWallet, tip: ChainTip | null): Promise<ScanState | null> {
    // While the node is away, a wallet short of the last tip it told is still scanning.
    const nodeTip = (await this.deps.chain.tip()) ?? this.deps.chain.lastKnownTip?.() ?? null;
    if (nodeTip === null) return tip === null ? { progress: 0, height: Math.max(wallet.birthday - 1, 0) } : null;
    const reached = tip?.height ?? wallet.birthday - 1;
    if (reached >= nodeTip.height) return null;
    const total = nodeTip.height - wallet.birthday + 1;
    const done = Math.max(reached - wallet.birthday + 1, 0);
    return { progress: total <= 0 ? 1 : Math.min(done / total, 1), height: Math.max(reached, 0) };
  }

  /**
   * Every readable wallet's live transactions, newest first. Each wallet's list is sorted once per revision;
   * they are merged up to the end of the page and only the page is formatted.
   */
  async fullTxList(principal: Principal, page: Page = {}): Promise<TxListEntry[]> {
    const lists: { wallet: StoredWallet; entries: readonly WalletTxEntry[]; tipHeight: number | null; next: number }[] = [];
    for (const wallet of await this.deps.access.readable(principal)) {
      const { liveNewestFirst, tipHeight } = (await this.deps.states.view(wallet)).lists;
      lists.push({ wallet, entries: liveNewestFirst, tipHeight, next: 0 });
    }
    const offset = page.offset ?? 0;
    const end = page.limit === undefined ? Number.POSITIVE_INFINITY : offset + page.limit;
    const merged: { wallet: StoredWallet; entry: WalletTxEntry }[] = [];
    for (let position = 0; position < end; position++) {
      if (position > 0 && position % MERGED_PER_TURN === 0) await nextTurn(); // every wallet's list may be long (ADR 0010)
      let pick: (typeof lists)[number] | undefined;
      for (const list of lists) {
        if (list.next >= list.entries.length) continue;
        if (!pick || newerEntry(list.entries[list.next]!, list.wallet.alias, pick.entries[pick.next]!, pick.wallet.alias) < 0) pick = list;
      }
      if (!pick) break;
      const entry = pick.entries[pick.next++]!;
      if (position >= offset) merged.push({ wallet: pick.wallet, entry: entryAtTip(entry, pick.tipHeight) });
    }
    const labels = new Map<string, { addresses: Map<string, string>; txs: Map<string, string> }>();
    for (const { wallet } of merged) {
      if (!labels.has(wallet.id)) labels.set(wallet.id, { addresses: await this.deps.store.wallets.addressLabels(wallet.id), txs: await this.deps.store.labels.txLabels(wallet.id) });
    }
    return mapInParts(merged, ({ wallet, entry }) => {
      const { addresses, txs } = labels.get(wallet.id)!;
      return txListEntry(entry, wallet.alias, wallet.network, addresses, txs);
    });
  }

  /** The coins, most confirmations first: one page, or every coin without `page`. */
  async utxos(principal: Principal, alias: string, page: Page = {}): Promise<Array<UtxoView & { frozen: boolean }>> {
    const wallet = await this.deps.access.resolve(principal, alias, 'read');
    return (await this.utxoPageOf(wallet, page)).coins;
  }

  /** One page of the coins (ordered as `utxos`), and how many there are: only the page is formatted. */
  async utxoPage(principal: Principal, alias: string, page: { offset: number; limit: number }): Promise<{ total: number; coins: Array<UtxoView & { frozen: boolean }> }> {
    return this.utxoPageOf(await this.deps.access.resolve(principal, alias, 'read'), page);
  }

  private async utxoPageOf(wallet: StoredWallet, page: Page): Promise<{ total: number; coins: Array<UtxoView & { frozen: boolean }> }> {
    const view = await this.deps.states.view(wallet);
    const flags = await this.deps.store.wallets.utxoFlags(wallet.id);
    const frozen = new Set(flags.filter((f) => f.frozen).map((f) => `${f.txid}:${f.vout}`));
    const ctx = await this.utxoContext(wallet, await this.deps.store.wallets.addressLabels(wallet.id), flags);
    // Formatted and marked in one pass, in parts: an unpaged list may hold 100,000 coins.
    const coins = await mapInParts(unspentPage(view, page), (u) => Object.assign(utxoView(u, ctx), { frozen: frozen.has(`${u.txid}:${u.vout}`) }));
    return { total: view.lists.unspentByConfirmations.length, coins };
  }

  async addresses(principal: Principal, alias: string, branch: 0 | 1, from: number, count: number): Promise<AddressEntry[]> {
    // Addresses exist only at non-hardened indexes (BIP32); the query schema bounds from and count alone.
    if (from + count > HARDENED) throw invalidField('/from', `plus count must not pass ${HARDENED}: the last address index is ${HARDENED - 1}`);
    const wallet = await this.deps.access.resolve(principal, alias, 'read');
    const view = await this.deps.states.view(wallet);
    const used = receivingScripts(view);
    const labels = await this.deps.store.wallets.addressLabels(wallet.id);
    const scripts = this.deps.scripts.get(wallet).derive(branch, from, count);
    return scripts.map((script, i) => {
      const hex = toHex(script);
      const address = scriptAddress(hex, wallet.network);
      return { index: from + i, address, label: labels.get(address) ?? '', used: used.has(hex) };
    });
  }

  /**
   * A receive address to show again, by index, when it is one that `addresses/next` will never hand out to
   * anyone else (at or below the last revealed, used or shown index) and the sync watches; undefined for an
   * index past those.
   */
  async shownAgainReceive(principal: Principal, alias: string, index: number): Promise<AddressEntry | undefined> {
    if (!Number.isSafeInteger(index) || index < 0 || index >= HARDENED) return undefined;
    const wallet = await this.deps.access.resolve(principal, alias, 'read');
    const indexes = await this.deps.store.wallets.receiveIndexes(wallet.id);
    if (!indexes || index > Math.max(indexes.shown, indexes.lastRevealed, indexes.lastUsed)) return undefined;
    return (await this.addresses(principal, alias, 0, index, 1))[0];
  }

  /**
   * A short fingerprint of what a wallet page shows: it changes when the sync writes the wallet, a PSBT
   * is created, signed, settled or deleted, or the node's tip moves. Pages poll it to know when to reload.
   */
  async fingerprint(principal: Principal, alias: string): Promise<string> {
    const wallet = await this.deps.access.resolve(principal, alias, 'read');
    const psbts = await this.deps.store.psbts.list(wallet.id, 'pending');
    const tip = await this.deps.chain.tip();
    const parts = [String(wallet.revision), String(tip?.height ?? ''), ...psbts.map((p) => `${p.txid}:${p.version}:${p.status}`)];
    return createHash('sha256').update(parts.join('|')).digest('hex').slice(0, 16);
  }

  /** Scan progress of a wallet the caller can read (for the CLI progress bar). */
  async scan(principal: Principal, alias: string): Promise<ScanState | null> {
    const wallet = await this.deps.access.resolve(principal, alias, 'read');
    return this.scanState(wallet, wallet.tip);
  }
}

/** Transactions taken into the full list between two turns. */
const MERGED_PER_TURN = 2_000;

/** Most wallets in an unpaged wallet list (GET /wallets without `limit`). */
export const UNPAGED_WALLET_LIST_MAX = 1_000;

/** Wallets put in the wallet list between two turns (about 4 ms of balances once their states are loaded). */
const LISTED_PER_TURN = 100;

/** The full list's order: the engine's newest first (unconfirmed first, then height, time, txid), then the wallet. */
function newerEntry(a: WalletTxEntry, aliasA: string, b: WalletTxEntry, aliasB: string): number {
  return newestFirst(a, b) || (aliasA < aliasB ? -1 : aliasA > aliasB ? 1 : 0);
}

/** Scripts paid by the live transactions of each revision's lists (shared by every request on it). */
const receivingScriptsOf = new WeakMap<WalletView['lists'], Set<string>>();

/**
 * Output scripts of every live (confirmed or mempool) transaction of the wallet, worked out once per
 * revision from the transactions the state holds already parsed.
 */
function receivingScripts(view: WalletView): Set<string> {
  const cached = receivingScriptsOf.get(view.lists);
  if (cached) return cached;
  const scripts = new Set<string>();
  for (const entry of view.lists.transactions) {
    if (entry.status === 'dropped') continue;
    const tracked = view.state.wallets.get(view.wallet.id)?.txs.get(entry.txid);
    // Gone from the state since: parse it.
    const outputScripts = tracked ? tracked.tx.outputs.map((o) => o.script) : parseTransaction(bytesOfBinary(entry.raw)).outputs.map((o) => toHex(o.script));
    for (const script of outputScripts) scripts.add(script);
  }
  receivingScriptsOf.set(view.lists, scripts);
  return scripts;
}
