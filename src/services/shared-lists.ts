/**
 * The reads of a large wallet this instance's sync follows use the sync's own record of it (docs/adr/0023): the
 * lists for reads are built over the sync's state, follow each change the sync applies to it, and are handed to the
 * reads at each revision the sync writes. The wallet's transactions are then held once per process, not once by the
 * sync and again by a state the reads loaded from the store. A wallet the sync does not hold at the revision asked
 * for (another instance follows it, a rescan wrote it since) is not shared: the reads load it as before.
 */
import { stateOfWallet, walletSummary, WalletListCache, type AppliedChanges, type EngineState, type WalletListsAtTip, type WalletState, type WalletSummary } from '../engine/index.js';
import { nextTurn } from './turns.js';

/** Transactions from which a wallet's reads share the sync's state (setting `wallet_states_shared_from`). */
export const SHARED_FROM_TRANSACTIONS = 5_000;

/** The sync's record of a wallet it follows. */
export interface SyncHeldWallet {
  wallet: WalletState;
  /** The stored revision the sync loaded or last wrote it at. */
  revision: number;
  /** Whether the sync applied changes to it not written yet: its state is then ahead of `revision`. */
  ahead: boolean;
}

export interface SyncHeldWallets {
  heldWallet(walletId: string): SyncHeldWallet | undefined;
}

/** The lists of one revision the sync wrote, over its state of the wallet (what a view of the reads is made of). */
export interface SharedListsAt {
  revision: number;
  /** The sync's wallet alone (`stateOfWallet`): newer than `revision` once the sync goes on, as a view's state may be. */
  state: EngineState;
  summary: WalletSummary;
  lists: WalletListsAtTip;
}

interface Shared {
  /** The sync's record the lists are built over: loaded again by the sync, it is another one and this is forgotten. */
  wallet: WalletState;
  lists: WalletListCache;
  building: boolean;
  published: SharedListsAt | undefined;
  waiting: { revision: number; answer: (at: SharedListsAt | undefined) => void }[];
}

export class SharedLists {
  private readonly shared = new Map<string, Shared>();
  private sync: SyncHeldWallets | undefined;

  /** `from`: transactions from which a wallet is shared (0: none is). */
  constructor(private readonly from = SHARED_FROM_TRANSACTIONS) {}

  /** The sync whose records are shared (one per service). */
  attach(sync: SyncHeldWallets): void {
    this.sync = sync;
  }

  // ---- The reads' side ----------------------------------------------------------------------------------------

  /**
   * The wallet's lists at `revision` or a later one the sync wrote, over the sync's record of it: built in parts on
   * first use, then kept following the sync until `release`. Undefined when the wallet is not shared: small, not
   * held by the sync, or held at an older revision than the store's (written by another: the reads load it). A sync
   * with changes of the wallet to write is waited for: the revision asked for may be the one it is writing.
   */
  at(walletId: string, revision: number): Promise<SharedListsAt | undefined> {
    const held = this.sync?.heldWallet(walletId);
    // Behind the store and with nothing to write: written by another (a rescan, another instance) since.
    const behind = held !== undefined && held.revision < revision && !held.ahead;
    if (this.from === 0 || !held || held.wallet.txs.size < this.from || behind) return Promise.resolve(undefined);
    let shared = this.shared.get(walletId);
    if (shared && shared.wallet !== held.wallet) {
      this.forget(walletId);
      shared = undefined;
    }
    if (shared?.published && shared.published.revision >= revision) return Promise.resolve(shared.published);
    if (!shared) {
      shared = { wallet: held.wallet, lists: new WalletListCache(stateOfWallet(held.wallet), walletId), building: false, published: undefined, waiting: [] };
      this.shared.set(walletId, shared);
      void this.build(walletId, shared);
    }
    const waiting = shared.waiting;
    return new Promise((answer) => waiting.push({ revision, answer }));
  }

  /** The reads no longer keep the wallet: its lists are no longer brought forward. */
  release(walletId: string): void {
    this.forget(walletId);
  }

  // ---- The sync's side ----------------------------------------------------------------------------------------

  has(walletId: string): boolean {
    return this.shared.has(walletId);
  }

  /** The sync applied `applied` to the wallet (in its state, ahead of the store until written). */
  changed(walletId: string, applied: AppliedChanges): void {
    this.shared.get(walletId)?.lists.changed(applied);
  }

  /** The sync wrote the wallet: its state of it is stored revision `revision`. */
  written(walletId: string, revision: number): void {
    const shared = this.shared.get(walletId);
    if (!shared || shared.building) return; // a build under way hands the lists over when it ends
    if (shared.lists.built) this.publish(walletId, shared, revision);
    else void this.build(walletId, shared); // most of the wallet changed at once: built again in parts
  }

  /** The sync lets the wallet go, or loads it again: its lists are of a record no longer followed. */
  forget(walletId: string): void {
    const shared = this.shared.get(walletId);
    if (!shared) return;
    this.shared.delete(walletId);
    for (const { answer } of shared.waiting) answer(undefined); // the reads load it themselves
  }

  /** The sync's state is gone (a failed write, a stop): nothing shared is followed any more. */
  forgetAll(): void {
    for (const walletId of [...this.shared.keys()]) this.forget(walletId);
  }

  private async build(walletId: string, shared: Shared): Promise<void> {
    shared.building = true;
    try {
      // The sync goes on meanwhile: what it changes is noted (`changed`) and brought in when the lists are handed over.
      await shared.lists.build(nextTurn);
    } finally {
      shared.building = false;
    }
    if (this.shared.get(walletId) !== shared) return;
    const held = this.sync?.heldWallet(walletId);
    if (held?.wallet !== shared.wallet) this.forget(walletId);
    else if (!held.ahead) this.publish(walletId, shared, held.revision); // else at the sync's next write
  }

  private publish(walletId: string, shared: Shared, revision: number): void {
    const state = stateOfWallet(shared.wallet);
    const published = { revision, state, summary: walletSummary(state, walletId), lists: shared.lists.lists() };
    shared.published = published;
    const still = [];
    for (const waiter of shared.waiting) {
      if (waiter.revision <= revision) waiter.answer(published);
      else still.push(waiter);
    }
    shared.waiting = still;
  }
}
