/**
 * Wallet state for reads, rebuilt from the store's truth: an in-process engine per wallet, kept
 * while the wallet's stored revision is unchanged. Any instance (syncing or not) answers the same.
 */
import { DescriptorDeriver, parseDescriptor } from '../core/descriptor/index.js';
import { NETWORKS } from '../core/network.js';
import {
  addWallet,
  createEngineState,
  getBalances,
  listTransactions,
  listUnspent,
  type Branch,
  type EngineState,
  type WalletBalances,
  type ScriptDeriver,
  type WalletTxEntry,
  type WalletUtxo,
} from '../engine/index.js';
import type { Store, StoredWallet, WalletChainRows } from '../store/repositories.js';

const DERIVE_AHEAD = 100;

/** Derives scripts of a wallet's two branches, remembering what it derived (derivation is the slow part). */
export class WalletScripts {
  private readonly known: [Uint8Array[], Uint8Array[]] = [[], []];
  private readonly derivers: [DescriptorDeriver, DescriptorDeriver];

  constructor(wallet: Pick<StoredWallet, 'receiveDescriptor' | 'changeDescriptor' | 'network'>) {
    const network = NETWORKS[wallet.network];
    this.derivers = [
      new DescriptorDeriver(parseDescriptor(wallet.receiveDescriptor, network)),
      new DescriptorDeriver(parseDescriptor(wallet.changeDescriptor, network)),
    ];
  }

  readonly derive: ScriptDeriver = (branch: Branch, fromIndex: number, count: number) => {
    const known = this.known[branch];
    if (fromIndex > known.length + DERIVE_AHEAD) {
      // Far past what the wallet watches (an address listing paging ahead): derive that range alone and
      // keep nothing, rather than every script up to it (a listing at index 2^31 - 1000 would never end).
      return this.derivers[branch].deriveRange(fromIndex, count).map((output) => output.scriptPubKey);
    }
    if (known.length < fromIndex + count) {
      // Derive ahead: a batch costs a few field inversions whatever its size, and gaps grow one script at a time.
      const added = this.derivers[branch].deriveRange(known.length, Math.max(fromIndex + count - known.length, DERIVE_AHEAD));
      for (const output of added) known.push(output.scriptPubKey);
    }
    return known.slice(fromIndex, fromIndex + count);
  };

  deriver(branch: Branch): DescriptorDeriver {
    return this.derivers[branch];
  }
}

/** Derivers shared by everything in the process, per wallet id. */
export class WalletScriptsCache {
  private readonly byWallet = new Map<string, WalletScripts>();

  get(wallet: StoredWallet): WalletScripts {
    let scripts = this.byWallet.get(wallet.id);
    if (!scripts) this.byWallet.set(wallet.id, (scripts = new WalletScripts(wallet)));
    return scripts;
  }

  forget(walletId: string): void {
    this.byWallet.delete(walletId);
  }
}

/**
 * Loads the wallet from its stored rows into `state` (no rescan). The returned changeset is what derivation
 * added: scripts for a grown gap limit, or for receive addresses revealed since the rows were written.
 */
export function loadWalletInto(state: EngineState, wallet: StoredWallet, rows: WalletChainRows, scripts: WalletScripts) {
  return addWallet(state, { walletId: wallet.id, gapLimit: wallet.gapLimit, derive: scripts.derive }, {
    sync: rows.sync,
    lastRevealedReceive: rows.lastRevealedReceive,
    addresses: rows.addresses,
    transactions: rows.transactions,
  });
}

export interface WalletView {
  wallet: StoredWallet;
  state: EngineState;
  revision: number;
  /** Shared by every copy of the view of one revision: lists computed once per revision. */
  memo: { lists?: WalletLists; balances?: WalletBalances; sortedLive?: readonly WalletTxEntry[]; sortedUnspent?: readonly WalletUtxo[] };
}

/** The engine's lists of one stored revision (frozen: callers map and filter, never change them). */
export interface WalletLists {
  transactions: readonly WalletTxEntry[];
  unspent: readonly WalletUtxo[];
  hexByTxid: ReadonlyMap<string, string>;
}

/**
 * A view's transaction and UTXO lists, computed on first use. A loaded state never changes (the sync
 * writes a new revision, which loads a new state), so every request on one revision shares them.
 */
export function walletLists(view: WalletView): WalletLists {
  if (!view.memo.lists) {
    const transactions = Object.freeze(listTransactions(view.state, view.wallet.id));
    view.memo.lists = {
      transactions,
      unspent: Object.freeze(listUnspent(view.state, view.wallet.id)),
      hexByTxid: new Map(transactions.map((t) => [t.txid, t.hex])),
    };
  }
  return view.memo.lists;
}

/** The view's balances, computed once per loaded revision (a walk over every transaction of the wallet). */
export function walletBalances(view: WalletView): WalletBalances {
  view.memo.balances ??= getBalances(view.state, view.wallet.id);
  return view.memo.balances;
}

/** Live transactions (not dropped), newest first, sorted once per loaded revision. */
export function liveTransactionsNewestFirst(view: WalletView): readonly WalletTxEntry[] {
  if (!view.memo.sortedLive) {
    const rank = (e: WalletTxEntry) => e.blockHeight ?? Number.MAX_SAFE_INTEGER;
    view.memo.sortedLive = Object.freeze(
      walletLists(view)
        .transactions.filter((e) => e.status !== 'dropped')
        .sort((a, b) => rank(b) - rank(a) || b.time - a.time || (a.txid < b.txid ? -1 : a.txid > b.txid ? 1 : 0)),
    );
  }
  return view.memo.sortedLive;
}

/** Unspent outputs as the coin lists show them: most confirmations first, then by outpoint; sorted once per loaded revision. */
export function unspentByConfirmations(view: WalletView): readonly WalletUtxo[] {
  view.memo.sortedUnspent ??= Object.freeze(
    [...walletLists(view).unspent].sort((a, b) => b.confirmations - a.confirmations || (a.txid < b.txid ? -1 : a.txid > b.txid ? 1 : a.vout - b.vout)),
  );
  return view.memo.sortedUnspent;
}

export class WalletStateCache {
  private readonly views = new Map<string, WalletView>();
  /** Loads under way, per wallet id and revision: concurrent readers of a new revision share one load. */
  private readonly loading = new Map<string, Promise<WalletView>>();

  constructor(
    private readonly store: Store,
    private readonly scripts: WalletScriptsCache,
  ) {}

  /** The wallet's engine state as stored now. */
  async view(wallet: StoredWallet): Promise<WalletView> {
    const cached = this.views.get(wallet.id);
    if (cached && cached.revision === wallet.revision) return { ...cached, wallet };
    const key = `${wallet.id}@${wallet.revision}`;
    let loading = this.loading.get(key);
    if (!loading) {
      loading = this.load(wallet).finally(() => this.loading.delete(key));
      this.loading.set(key, loading);
    }
    return { ...(await loading), wallet };
  }

  forget(walletId: string): void {
    this.views.delete(walletId);
  }

  private async load(wallet: StoredWallet): Promise<WalletView> {
    const rows = await this.store.wallets.chainRows(wallet.id);
    if (!rows) throw new Error(`Wallet ${wallet.id} vanished while being read`);
    const state = createEngineState();
    loadWalletInto(state, wallet, rows, this.scripts.get(wallet));
    const view: WalletView = { wallet, state, revision: rows.revision, memo: {} };
    this.views.set(wallet.id, view);
    return view;
  }
}
