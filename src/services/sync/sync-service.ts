/**
 * Brings every wallet from its birthday (or stored tip) to the node's tip, then follows new blocks
 * and the mempool. Wallets are grouped by their tip; the group closest to the node tip goes first and
 * each group advances at most `batchBlocks` per round, so a wallet catching up never holds back the
 * others. Every changeset is written in one store transaction together with the applied blocks' header
 * links (for reorg detection) and the PSBTs the change settles (chain-reconciler.ts), and the wallets'
 * revisions grow, so other instances see the change. Blocks that touch no wallet, and the blocks of wallets
 * still scanning, are written several at a time (a crash loses at most those; the scan applies them again);
 * a block that touches a wallet at the tip is written at once.
 */
import type { ChainFollower, FollowRequest, ChainWatch, WatchedScripts } from '../../chain/follower.js';
import { ChainError, type ChainTip } from '../../chain/types.js';
import {
  applyUpdate,
  coinHistory,
  changedRows,
  EngineError,
  PendingWalletChange,
  createEngineState,
  gapAheadOf,
  removeWallet,
  walletSummary,
  watchRevealed,
  type ChainUpdate,
  type EngineChangeset,
  type EngineState,
  type WalletChangeset,
} from '../../engine/index.js';
import type { Store, StoredWallet, SyncBlockRow, WalletChainRows } from '../../store/repositories.js';
import type { PsbtChainReconciler, PsbtSettlement } from '../psbts/chain-reconciler.js';
import { loadStoredWalletInto, loadWalletInto, neverFollowedAndUnderived, prepareLoad, type WalletScriptsCache } from '../wallet-state.js';
import type { ReadinessCheck } from '../health.js';
import { nextTurn } from '../turns.js';
import type { SyncLeadership } from './leadership.js';
import { FOLLOW_ALL, type WalletFollowing } from './wallet-following.js';
import { WatchedScriptLists } from './watched-scripts.js';
import type { BalanceSummaries } from '../balance-summaries.js';
import type { SharedLists, SyncHeldWallet, SyncHeldWallets } from '../shared-lists.js';
import { SourceRefusals, type WalletRefusals } from './refusals.js';
import { SyncEvents, type SyncEventSettings } from './sync-events.js';

/**
 * Most blocks, and most transaction and address rows, written together while they touch no wallet or the
 * wallets are scanning (a crash loses at most these; the scan applies them again).
 */
const BLOCKS_PER_WRITE = 500;
/** Wallets loaded before what loading them derived is written (one store transaction per wallet cost most of a load). */
const WALLETS_PER_LOAD_WRITE = 50;
const ROWS_PER_WRITE = 5_000;
/**
 * Wallets whose change is their sync row alone, per transaction: a block moves every followed wallet's tip, and one
 * transaction of thousands held their row locks (PostgreSQL) or the one writer's lock (SQLite) for most of a second,
 * keeping users' writes of those wallets waiting; between two, the requests that came in meanwhile go first.
 */
const SYNC_ROWS_PER_TRANSACTION = 1_000;
/**
 * Wallets to load read together, in one snapshot: a read each cost a round trip (5-10 ms on PostgreSQL), most of
 * a restart with thousands of small wallets. Bounded by rows too, so that one read of many never holds SQLite's
 * connection long; a wallet larger than the bound is read alone, in slices parsed one after the other (ADR 0022).
 */
const WALLETS_PER_CHAIN_READ = 100;
const CHAIN_ROWS_PER_READ = 5_000;
/**
 * How long a pass loads new wallets before it follows the chain again; the rest load in the next round. Someone
 * creating thousands of wallets (each creation's first gap is milliseconds of derivation) otherwise held every
 * other wallet's blocks back until all were loaded. The first load after a start loads every wallet followed
 * before at once (readiness waits for them).
 */
const LOAD_TURN_MS = 500;
/** How often a long pass looks for a new node tip (wallets at the tip then take the new blocks first). */
const TIP_REFRESH_MS = 1_000;
/** How often a long pass brings the mempool of the wallets at the tip up to date unless told of a change sooner. */
const MEMPOOL_REFRESH_MS = 5_000;

const touchesTransactions = (c: WalletChangeset): boolean =>
  c.transactionsAdded.length > 0 || c.transactionsUpdated.length > 0 || c.transactionsRemoved.length > 0;
const onlyTipMoved = (c: WalletChangeset): boolean => changedRows(c) === 0;

export interface SyncStats {
  blocksConnected: number;
  blocksDisconnected: number;
  /** Blocks applied as empty because the filter matched none of the group's scripts. */
  blocksSkippedByFilter: number;
  blocksFetched: number;
}

export interface SyncPassResult extends SyncStats {
  /** False when another instance holds the sync leadership (nothing done). */
  ran: boolean;
  tip: ChainTip | null;
}

export interface SyncProgress {
  noteTip(tip: ChainTip): void;
  /** True while a pass brings wallets to the node's tip, false once they all reached it. */
  noteSyncing(syncing: boolean): void;
}

/** Besides what it needs, the settings of the events it records (confirmation depth, timelock warnings, clock). */
export interface SyncServiceDeps extends SyncEventSettings {
  store: Store;
  /** Follows the chain source for groups of wallets (null: no chain source configured). */
  follower: ChainFollower | null;
  scripts: WalletScriptsCache;
  leadership: SyncLeadership;
  /** The wallets this instance follows (default: all; a share of them with `sync_sharing` on, ADR 0014). */
  following?: WalletFollowing;
  /** Settles the PSBTs of a wallet whose transactions changed, in the transaction that writes the change. */
  psbts: PsbtChainReconciler;
  /** Blocks a group advances before the next group gets its turn. */
  batchBlocks?: number;
  /** Wallets whose change is their sync row alone written per transaction (default SYNC_ROWS_PER_TRANSACTION). */
  syncRowsPerTransaction?: number;
  /** Chain rows of the wallets loaded together (default CHAIN_ROWS_PER_READ); a wallet with more is read in slices. */
  chainRowsPerRead?: number;
  /** Told the node tips the sync reads and whether it is catching up (service details show both). */
  progress?: SyncProgress;
  /** Where the wallets the chain source refuses to follow are told, for their details. */
  refusals?: WalletRefusals;
  /** Told each wallet's balances at every revision the sync writes or loads (the wallet list reads them). */
  balances?: BalanceSummaries;
  /** Where the reads of a large wallet take their lists over the sync's record of it (docs/adr/0023). */
  sharedLists?: SharedLists;
  log?: ((level: 'info' | 'warn', message: string, details?: Record<string, unknown>) => void) | undefined;
}

interface LoadedWallet {
  wallet: StoredWallet;
  revision: number;
}

interface Group {
  key: string;
  walletIds: string[];
  /** Height of the last block applied (birthday - 1 before the first). */
  height: number;
  hash: string | null;
}

export class SyncService implements SyncHeldWallets {
  private state: EngineState = createEngineState();
  private readonly loaded = new Map<string, LoadedWallet>();
  /**
   * Wallets whose stored chain rows the engine refused (inconsistent: a gap in the address indexes, a transaction
   * whose hex is not its txid), with the revision refused. The sync leaves each aside until its revision changes
   * (a rescan rewrites the rows): a pass failing on it every time would stop every other wallet following the chain.
   */
  private readonly setAside = new Map<string, number>();
  private readonly watched = new WatchedScriptLists();
  private running: Promise<SyncPassResult> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private tick: (() => void) | undefined;
  /** A wallet was added or rescanned: load it at the next round, and start a pass now if none runs. */
  private passRequested = false;
  private passInProgress = false;
  private stopped = true;
  /**
   * The chain source told of a mempool change: a long pass (a catch-up, new wallets loading in turns) reads the
   * mempool at its next look at the tip, not at its five-second refresh.
   */
  private mempoolMoved = false;
  /** stop() was called (a sync never started runs its passes to the end: `stopped` is true from the start). */
  private stopping = false;
  /** The reason of the last failed pass, until a pass succeeds. */
  private lastFailure: string | undefined;
  /** Applied and not yet written: the changes gathered per wallet, and the blocks. */
  private pendingChanges = new Map<string, PendingWalletChange>();
  /** Wallets whose state holds changes not written yet (applied, buffered or being written). */
  private readonly unwritten = new Set<string>();
  private pendingBlocks: SyncBlockRow[] = [];
  private readonly events: SyncEvents;
  /** Wallets loaded (imported, rescanned, or behind at start) that have not reached the node's tip yet. */
  private readonly scanning = new Set<string>();
  /** Wallets the chain source refuses to follow (an Electrum server's history too large). */
  private readonly refusals: SourceRefusals;
  private nodeTip: ChainTip | undefined;
  /** The chain source's news of new blocks and of mempool changes, while started (each asks for a pass). */
  private chainWatches: ChainWatch[] | undefined;
  /**
   * From start() until the wallets are first loaded (or another instance leads the sync): what is left to load.
   * Loading thousands of wallets takes seconds, done after the server listens, giving way between wallets.
   */
  private firstLoad: { done: number; total: number | undefined } | undefined;
  readonly totals: SyncStats = { blocksConnected: 0, blocksDisconnected: 0, blocksSkippedByFilter: 0, blocksFetched: 0 };

  constructor(private readonly deps: SyncServiceDeps) {
    this.events = new SyncEvents(deps);
    this.refusals = new SourceRefusals(deps.refusals, deps.log);
    deps.progress?.noteSyncing(false); // no pass catching up yet
    deps.sharedLists?.attach(this);
  }

  /** The sync's record of a wallet it follows, and the stored revision it is of (shared-lists.ts). */
  heldWallet(walletId: string): SyncHeldWallet | undefined {
    const loaded = this.loaded.get(walletId);
    const wallet = this.state.wallets.get(walletId);
    return loaded && wallet && { wallet, revision: loaded.revision, ahead: this.unwritten.has(walletId) };
  }

  /** One full pass: every wallet to the node tip, then the mempool. Passes never overlap. */
  runOnce(): Promise<SyncPassResult> {
    const previous = this.running ?? Promise.resolve(undefined);
    const pass = previous.catch(() => undefined).then(() => this.pass());
    this.running = pass;
    return pass;
  }

  /**
   * Runs a pass every `intervalMs` until stop(), and at once when a pass is requested; failures are logged
   * and retried next time.
   */
  start(intervalMs: number): void {
    const follower = this.deps.follower;
    if (!follower || !this.stopped) return;
    this.stopped = false;
    this.stopping = false;
    this.firstLoad = { done: 0, total: undefined };
    this.following.start(() => this.requestPass());
    const tick = async () => {
      this.timer = undefined;
      try {
        await this.runOnce();
        if (this.lastFailure !== undefined) this.deps.log?.('info', 'sync pass succeeded again', { after: this.lastFailure });
        this.lastFailure = undefined;
      } catch (error) {
        // Said once per cause, not at every pass: a node that stays away would fill the log every few seconds.
        const reason = error instanceof Error ? error.message : String(error);
        if (reason !== this.lastFailure) {
          const context = error instanceof ChainError ? error.logContext : undefined;
          this.deps.log?.('warn', 'sync pass failed (said again only when the reason changes)', { reason, ...context });
        }
        this.lastFailure = reason;
      }
      if (!this.stopped) this.timer = setTimeout(() => void tick(), this.passRequested ? 0 : intervalMs);
    };
    this.tick = () => void tick();
    this.timer = setTimeout(this.tick, 0);
  }

  /**
   * A wallet needs scanning (created, rescanned): a running pass takes it in at its next round, otherwise the
   * background loop starts a pass now. Other instances' wallets are found at this instance's next pass.
   */
  requestPass(): void {
    this.passRequested = true;
    if (this.stopped || this.passInProgress || !this.timer || !this.tick) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(this.tick, 0);
  }

  /**
   * Readiness `wallets`: failing while the background sync, started, has not loaded every wallet it followed before
   * yet (reads load the wallets they need themselves meanwhile; the sync follows none of them before it loaded them
   * all). Wallets it never followed whose first gap is still to derive load after, in turns, as new wallets do.
   */
  readinessCheck(): ReadinessCheck {
    return {
      name: 'wallets',
      publicReason: true,
      check: async () => {
        const loading = this.firstLoad;
        if (!loading || this.stopped) return;
        throw new Error(loading.total === undefined ? 'The sync has not started loading the wallets yet' : `${loading.total - loading.done} of ${loading.total} wallets still loading`);
      },
    };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    await this.watchChain(false);
    await this.running?.catch(() => undefined);
    await this.following.stop();
    await this.deps.leadership.release();
    this.deps.sharedLists?.forgetAll(); // no longer followed: the reads load what they read
  }

  private get following(): WalletFollowing {
    return this.deps.following ?? FOLLOW_ALL;
  }

  /**
   * New blocks and unconfirmed transactions are taken at once (the interval stays as the fallback: a watch lost,
   * a source without one), by an instance that follows wallets only: the others would hold a long poll on the node
   * for nothing. A change told while a pass runs is taken by that pass (its mempool comes last) or the next.
   */
  private async watchChain(on: boolean): Promise<void> {
    const follower = this.deps.follower;
    if (on && !this.chainWatches && !this.stopped && follower) {
      const onTip = (tip: ChainTip) => {
        if (tip.hash !== this.nodeTip?.hash) this.requestPass();
      };
      const onMempool = () => {
        this.mempoolMoved = true;
        this.requestPass();
      };
      const watches = [follower.watchTip?.(onTip), follower.watchMempool?.(onMempool)];
      this.chainWatches = watches.filter((watch) => watch !== undefined);
    } else if (!on && this.chainWatches) {
      const watches = this.chainWatches;
      this.chainWatches = undefined;
      await Promise.all(watches.map((watch) => watch.stop()));
    }
  }

  private async pass(): Promise<SyncPassResult> {
    const stats: SyncStats = { blocksConnected: 0, blocksDisconnected: 0, blocksSkippedByFilter: 0, blocksFetched: 0 };
    const chain = this.deps.follower;
    if (!chain) return { ran: false, tip: null, ...stats };
    if (!(await this.deps.leadership.acquire())) {
      this.firstLoad = undefined; // another instance follows the wallets
      await this.watchChain(false);
      return { ran: false, tip: null, ...stats };
    }
    this.passInProgress = true;
    this.refusals.newPass();
    try {
      // Loading needs no node: wallets load (and readiness comes) while the node is away.
      this.passRequested = false;
      let loadsLeft = !(await this.refreshWallets());
      if (this.stopped && this.firstLoad) return { ran: true, tip: null, ...stats }; // stopped while loading
      this.firstLoad = undefined;
      await this.watchChain(this.loaded.size > 0);
      if (this.loaded.size === 0 && this.following.followed() !== 'all') return { ran: false, tip: null, ...stats }; // others follow every wallet
      await chain.verifyNetwork(); // a node on another network: no block of it is applied
      let tip = await this.readTip(chain);
      // Wallets already at the tip when loaded have no scan to finish.
      for (const id of this.scanning) if (!this.loaded.has(id) || walletSummary(this.state, id).tip?.hash === tip.hash) this.scanning.delete(id);
      let idleRounds = 0;
      let tipReadAt = Date.now();
      let mempoolReadAt = Date.now();
      for (;;) {
        if (this.passRequested || loadsLeft) {
          this.passRequested = false;
          loadsLeft = !(await this.refreshWallets());
        }
        if (Date.now() - tipReadAt > TIP_REFRESH_MS) {
          // A long catch-up must not leave the wallets at the tip behind new blocks, nor their mempool.
          tip = await this.readTip(chain);
          tipReadAt = Date.now();
          if (this.mempoolMoved || Date.now() - mempoolReadAt > MEMPOOL_REFRESH_MS) {
            this.mempoolMoved = false;
            await this.applyMempool(chain, tip);
            mempoolReadAt = Date.now();
          }
        }
        const behind = this.groups().filter((g) => (g.hash === null ? g.height < tip.height : g.hash !== tip.hash) && !this.refusals.refusedInPass(g.walletIds[0]!));
        if (behind.length === 0) {
          if (loadsLeft && !this.stopping) continue; // the pass ends once no wallet waits to be loaded
          break;
        }
        this.deps.progress?.noteSyncing(true);
        // Closest to the tip first: wallets following the chain are never held back by one catching up.
        behind.sort((a, b) => b.height - a.height);
        const before = stats.blocksConnected + stats.blocksDisconnected;
        for (const group of behind) await this.advance(chain, group, tip, stats);
        if (stats.blocksConnected + stats.blocksDisconnected === before) {
          // No step possible toward this tip: the node's chain changed during the pass.
          if (++idleRounds > 3) throw new Error('The node\'s chain keeps changing; sync will retry');
          tip = await this.readTip(chain);
        } else idleRounds = 0;
      }
      this.deps.progress?.noteSyncing(false);
      this.mempoolMoved = false;
      await this.applyMempool(chain, tip);
      return { ran: true, tip, ...stats };
    } finally {
      this.passInProgress = false;
      for (const key of Object.keys(stats) as (keyof SyncStats)[]) this.totals[key] += stats[key];
    }
  }

  /**
   * Loads new wallets, reloads changed ones (rescan, another writer), forgets deleted ones and those no longer followed.
   * Each pass lists only ids and revisions, and reads the full row of a wallet new or at another revision: a pass
   * (one per creation) would otherwise read every wallet's row, thousands of them. What the sync uses of a loaded
   * wallet's row (alias, birthday, descriptors, gap limit, network) is fixed or moves the revision when changed;
   * its name, description, key labels and owner change without it, and the sync uses none of them.
   * False when the turn ended before every new wallet was loaded (LOAD_TURN_MS): the rest wait for the next call.
   */
  private async refreshWallets(): Promise<boolean> {
    const followed = this.following.followed();
    const wallets = (await this.deps.store.wallets.listRevisions()).filter((w) => followed === 'all' || followed.has(w.id));
    const present = new Set(wallets.map((w) => w.id));
    for (const id of this.setAside.keys()) if (!present.has(id)) this.setAside.delete(id);
    for (const id of [...this.loaded.keys()]) {
      if (!present.has(id)) {
        this.letGo(id);
        this.scanning.delete(id);
        this.events.forget(id);
      }
    }
    if (this.firstLoad) this.firstLoad = { done: 0, total: wallets.length };
    // Loading settles what the chain already decided, should an earlier write have left a PSBT behind.
    let unwritten: { changes: WalletChangeset[]; settle: string[] } = { changes: [], settle: [] };
    const write = async () => {
      const { changes, settle } = unwritten;
      unwritten = { changes: [], settle: [] };
      await this.persist({ wallets: changes }, [], settle);
    };
    // The wallets to load, read in batches as the loop reaches them (each wallet with its rows, of one revision).
    const waiting = ({ id, revision }: { id: string; revision: number }) => this.loaded.get(id)?.revision !== revision && this.setAside.get(id) !== revision;
    const stale = wallets.filter(waiting).map(({ id }) => id);
    let batch: { ids: Set<string>; wallets: Map<string, { wallet: StoredWallet; rows: WalletChainRows | 'in slices' }> } = { ids: new Set(), wallets: new Map() };
    let nextToRead = 0;
    const turnEnds = performance.now() + LOAD_TURN_MS;
    let complete = true;
    for (const { id, revision } of wallets) {
      if (this.firstLoad) this.firstLoad.done++;
      if (!waiting({ id, revision })) continue;
      const known = this.loaded.get(id);
      if (!this.firstLoad && (this.stopping || performance.now() > turnEnds)) {
        complete = false; // the rest in the next round, after the wallets already followed had their turn
        break;
      }
      // A wallet's derivations take milliseconds and the store may answer synchronously: give way between
      // wallets, so that thousands of them never keep requests (liveness probes) waiting.
      await nextTurn();
      if (this.stopped && this.firstLoad) return false; // stopping: the load is for nothing
      if (!batch.ids.has(id)) {
        // `id` is the next stale wallet not read yet: the loop takes them in the same order.
        // A large wallet is left out of the batch and read in slices as it loads: its rows are never all held at once.
        const read = await this.deps.store.wallets.chainRowsOfMany(stale.slice(nextToRead, nextToRead + WALLETS_PER_CHAIN_READ), this.deps.chainRowsPerRead ?? CHAIN_ROWS_PER_READ, { largeInSlices: true });
        batch = { ids: new Set(stale.slice(nextToRead, nextToRead + read.taken)), wallets: read.wallets };
        nextToRead += read.taken;
        // The batch's gaps asked for ahead: the worker derives the next wallets' while this thread loads one, at a
        // lower priority than the requests, and any derivation someone waits for goes before them.
        for (const { wallet, rows } of read.wallets.values()) if (rows !== 'in slices') prepareLoad(wallet, rows, this.deps.scripts.get(wallet));
        await nextTurn();
      }
      if (known) this.letGo(id);
      const loaded = batch.wallets.get(id);
      batch.wallets.delete(id); // the rows are the engine's from here on
      if (!loaded) continue; // deleted meanwhile
      const { wallet, rows } = loaded;
      if (this.firstLoad && rows !== 'in slices' && neverFollowedAndUnderived(wallet, rows)) {
        complete = false; // loaded in turns once the wallets followed before are: readiness does not wait for them
        continue;
      }
      const scripts = this.deps.scripts.get(wallet);
      let load;
      try {
        // Refused rows leave the state as it was.
        load = rows === 'in slices' ? await loadStoredWalletInto(this.state, wallet, this.deps.store, scripts) : { revision: rows.revision, changes: await loadWalletInto(this.state, wallet, rows, scripts) };
      } catch (error) {
        if (!(error instanceof EngineError) || error.code !== 'invalid_stored_state') throw error;
        this.setAside.set(id, revision);
        this.deps.log?.('warn', 'the sync leaves a wallet aside: its stored chain rows are inconsistent (a rescan rebuilds them); the other wallets go on', { wallet: id, alias: wallet.alias, reason: error.message });
        continue;
      }
      if (load === undefined) continue; // deleted meanwhile
      if (load === 'changed') {
        complete = false; // written while read in slices: read again in the next round
        continue;
      }
      const { changes } = load;
      this.loaded.set(wallet.id, { wallet: scripts.sharingDescriptors(wallet), revision: load.revision });
      if (changes.wallets.length > 0) this.unwritten.add(wallet.id); // the scripts its load derived
      this.deps.balances?.noteLoaded(this.state, wallet.id, load.revision);
      this.events.reached(wallet.id, walletSummary(this.state, wallet.id).tip?.height ?? null);
      this.scanning.add(wallet.id);
      unwritten.changes.push(...changes.wallets);
      unwritten.settle.push(wallet.id);
      if (unwritten.settle.length >= WALLETS_PER_LOAD_WRITE) await write();
    }
    await write();
    await this.following.settled(new Set(this.loaded.keys()));
    return complete;
  }

  /**
   * The node's tip, then the receive addresses revealed so far. In that order: a block up to this tip that
   * pays an address was mined after the address was handed out, so the reveal is seen before the block is
   * applied. Blocks past this tip wait for the next read.
   */
  private async readTip(chain: ChainFollower): Promise<ChainTip> {
    const tip = await chain.tip();
    this.nodeTip = tip;
    this.deps.progress?.noteTip(tip);
    await this.watchRevealedAddresses();
    return tip;
  }

  /**
   * Derives and stores the scripts of receive addresses revealed since the wallets were loaded. A reveal
   * leaves a wallet's revision alone (a sync pass in flight must still commit), so a loaded wallet is not
   * reloaded for it: its last revealed index is read here.
   */
  private async watchRevealedAddresses(): Promise<void> {
    if (this.loaded.size === 0) return;
    const revealed = await this.deps.store.wallets.revealedReceiveIndexes();
    const changes: WalletChangeset[] = [];
    try {
      for (const id of this.loaded.keys()) {
        const index = revealed.get(id);
        if (index !== undefined) changes.push(...watchRevealed(this.state, id, index).wallets); // deleted: the next refresh forgets it
      }
    } catch (error) {
      this.reset();
      throw error;
    }
    if (changes.length === 0) return;
    await this.flush();
    await this.persist({ wallets: changes }, []);
  }

  private groups(): Group[] {
    const groups = new Map<string, Group>();
    for (const { wallet } of this.loaded.values()) {
      const tip = walletSummary(this.state, wallet.id).tip;
      const key = (tip ? `tip:${tip.hash}` : `birthday:${wallet.birthday}`) + (this.refusals.followedAlone(wallet.id) ? ` alone:${wallet.id}` : '');
      let group = groups.get(key);
      if (!group) groups.set(key, (group = { key, walletIds: [], height: tip ? tip.height : wallet.birthday - 1, hash: tip?.hash ?? null }));
      group.walletIds.push(wallet.id);
    }
    return [...groups.values()];
  }

  /**
   * Moves one group toward `tip` by what the follower emits: back to the fork point when its tip left the active
   * chain, else forward. Each update is applied before the next is asked for: a block may make the wallets derive
   * more scripts, which the follower matches the next blocks against.
   */
  private async advance(chain: ChainFollower, group: Group, tip: ChainTip, stats: SyncStats): Promise<void> {
    const request: FollowRequest = {
      watchers: group.walletIds,
      from: { height: group.height, hash: group.hash },
      scripts: () => this.scriptsOfGroup(group.walletIds),
      recordedParent: async (hash) => (await this.deps.store.wallets.findBlock(hash))?.prevHash,
    };
    try {
      for await (const update of chain.follow(request, tip, this.deps.batchBlocks ?? 500)) {
        this.refusals.served(group.walletIds);
        if (update.type === 'block_disconnected') {
          await this.apply(update, group.walletIds, []);
          stats.blocksDisconnected++;
          this.deps.log?.('info', 'block disconnected', { height: update.height, hash: update.hash, wallets: group.walletIds.length });
          continue;
        }
        const { height, hash, prevHash, time } = update;
        await this.apply(update, group.walletIds, [{ hash, height, prevHash, time }]);
        stats.blocksConnected++;
        if (update.read) stats.blocksFetched++;
        else stats.blocksSkippedByFilter++;
      }
    } catch (error) {
      if (!this.refusals.refused(group.walletIds, error)) throw error;
    } finally {
      await this.flush();
    }
  }

  /** The group's scripts: every script its wallets derived, known anew whenever one derives more. */
  private scriptsOfGroup(walletIds: readonly string[]): WatchedScripts {
    return this.watched.scriptsOf(walletIds, (id) => {
      const summary = walletSummary(this.state, id);
      return { derived: [summary.derivedReceive, summary.derivedChange], derive: this.deps.scripts.get(this.loaded.get(id)!.wallet).derive };
    });
  }

  private async applyMempool(chain: ChainFollower, tip: ChainTip): Promise<void> {
    const atTip = this.groups().filter((g) => g.hash === tip.hash && !this.refusals.refusedInPass(g.walletIds[0]!)).flatMap((g) => g.walletIds);
    if (atTip.length === 0) return;
    await this.watchRevealedAddresses(); // a payment to an address revealed during the pass is in this snapshot
    // The wallets the source refused once ask on their own: a refusal then holds back no other wallet.
    const shared = atTip.filter((id) => !this.refusals.followedAlone(id));
    for (const walletIds of [shared, ...atTip.filter((id) => this.refusals.followedAlone(id)).map((id) => [id])]) {
      if (walletIds.length === 0) continue;
      try {
        const snapshot = await chain.mempool(this.scriptsOfGroup(walletIds));
        // A block found while the mempool was read took its transactions out: applied to wallets still at the
        // block before, they would look dropped (a false `transaction.replaced`). The pass that connects the
        // block reads the mempool again.
        if ((await chain.tip()).hash !== tip.hash) {
          this.requestPass();
          return;
        }
        await this.apply(snapshot, walletIds, []);
        this.refusals.served(walletIds);
      } catch (error) {
        if (!this.refusals.refused(walletIds, error)) throw error;
      }
    }
  }

  private async apply(update: ChainUpdate, walletIds: string[], blocks: SyncBlockRow[]): Promise<void> {
    // A payment near the end of a gap makes the wallet derive a gap more: derived here in parts, not by the engine at once.
    for (const { walletId, branch, count } of gapAheadOf(this.state, update, walletIds)) {
      await this.deps.scripts.get(this.loaded.get(walletId)!.wallet).deriveInParts(branch, count);
    }
    let changes: EngineChangeset;
    try {
      changes = applyUpdate(this.state, update, { walletIds, ...(this.deps.sharedLists ? { listsKept: this.deps.sharedLists } : {}) });
    } catch (error) {
      this.reset();
      throw error;
    }
    for (const change of changes.wallets) this.unwritten.add(change.walletId);
    // A block that touched no wallet changes only sync rows, which each later row replaces; the blocks of wallets
    // still scanning toward the tip change nothing anyone waits for. Both are kept and written together, a run of
    // blocks in one transaction (a commit costs more than most blocks), merged per wallet.
    const scanning = walletIds.every((id) => this.scanning.has(id));
    for (const change of changes.wallets) {
      const pending = this.pendingChanges.get(change.walletId);
      if (pending) pending.add(change);
      else this.pendingChanges.set(change.walletId, new PendingWalletChange(change.walletId, change));
    }
    this.pendingBlocks.push(...blocks);
    const buffered = update.type === 'block_connected' && (scanning || changes.wallets.every(onlyTipMoved));
    const rows = [...this.pendingChanges.values()].reduce((sum, pending) => sum + pending.rows, 0);
    if (!buffered || this.pendingBlocks.length >= BLOCKS_PER_WRITE || rows >= ROWS_PER_WRITE) await this.flush();
  }

  /** Writes the buffered changes (before any other write, and at the end of each step). */
  private async flush(): Promise<void> {
    if (this.pendingBlocks.length === 0 && this.pendingChanges.size === 0) return;
    const changes: EngineChangeset = { wallets: [...this.pendingChanges.values()].map((pending) => pending.changeset()) };
    const blocks = this.pendingBlocks;
    this.pendingChanges = new Map();
    this.pendingBlocks = [];
    await this.persist(changes, blocks);
  }

  /**
   * Writes a changeset with the PSBTs it settles (of the wallets whose transactions changed, and of `reconcile`);
   * on any failure the in-memory state is rebuilt from the store. Wallets whose change is their sync row alone (at a
   * block that pays a few of many wallets, nearly all of them) are written after the others, in transactions of
   * their own (SYNC_ROWS_PER_TRANSACTION each), a few hundred a statement: the wallets a block changed are seen
   * first, and at once. A crash between two of them leaves wallets at different tips, as between the first and
   * the others; each is brought up from its own tip at the next start. Each wallet's
   * change, its PSBTs' settlement and its events commit together; the block links with the first transaction.
   */
  private async persist(changes: EngineChangeset, blocks: SyncBlockRow[], reconcile: readonly string[] = []): Promise<void> {
    if (changes.wallets.length === 0 && blocks.length === 0 && reconcile.length === 0) return;
    // Per wallet to settle: the transactions its change removes (a coin whose funding transaction is removed is gone).
    const settle = new Map<string, ReadonlySet<string>>(reconcile.map((id) => [id, new Set()]));
    for (const change of changes.wallets.filter(touchesTransactions)) settle.set(change.walletId, new Set(change.transactionsRemoved));
    const syncRowOnly = (c: WalletChangeset) => onlyTipMoved(c) && !settle.has(c.walletId);
    const changed = changes.wallets.filter((c) => !syncRowOnly(c));
    const moved = changes.wallets.filter(syncRowOnly);
    try {
      const first = changed.length > 0 || settle.size > 0;
      if (first) await this.write(changed, blocks, settle, false);
      // No wallet changed at all: the block links are written alone. They go with the first transaction.
      const slice = this.deps.syncRowsPerTransaction ?? SYNC_ROWS_PER_TRANSACTION;
      const starts = moved.length === 0 && !first ? [0] : Array.from({ length: Math.ceil(moved.length / slice) }, (_, k) => k * slice);
      for (const start of starts) {
        if (start > 0) await new Promise((resolve) => setImmediate(resolve));
        await this.write(moved.slice(start, start + slice), first || start > 0 ? [] : blocks, new Map(), true);
      }
    } catch (error) {
      this.reset();
      throw error;
    }
  }

  /** One store transaction of persist(): `syncRowsOnly` when no change of `wallets` adds, updates or removes a row. */
  private async write(wallets: readonly WalletChangeset[], blocks: SyncBlockRow[], settle: ReadonlyMap<string, ReadonlySet<string>>, syncRowsOnly: boolean): Promise<void> {
    const reached = new Set(wallets.filter((c) => this.scanning.has(c.walletId) && c.sync.tip !== null && c.sync.tip.hash === this.nodeTip?.hash).map((c) => c.walletId));
    const revisionOf = (walletId: string) => this.loaded.get(walletId)!.revision;
    const revisions = await this.deps.store.transaction(async (repos) => {
      // First: a wallet another instance has taken over is written by that instance only (ADR 0014).
      await this.following.fence(repos, [...new Set([...wallets.map((c) => c.walletId), ...settle.keys()])]);
      if (blocks.length > 0) await repos.wallets.recordBlocks(blocks);
      let next: Map<string, number>;
      if (syncRowsOnly) next = await repos.wallets.applySyncRows(wallets.map((c) => ({ sync: c.sync, expectedRevision: revisionOf(c.walletId) })));
      else {
        next = new Map();
        for (const change of wallets) next.set(change.walletId, await repos.wallets.applyChange(change, revisionOf(change.walletId)));
      }
      const settlements = new Map<string, PsbtSettlement[]>();
      for (const [walletId, removed] of settle) {
        settlements.set(walletId, await this.deps.psbts.reconcile(repos, walletId, (txid, vout) => coinHistory(this.state, walletId, txid, vout), removed));
      }
      // Last in the transaction: appending events waits for other writers of events (docs/adr/0007).
      await repos.events.append(this.events.of(this.state, (id) => this.loaded.get(id)?.wallet, wallets, settlements, reached));
      return next;
    });
    for (const change of wallets) {
      this.deps.balances?.noteWritten(this.state, change.walletId, revisionOf(change.walletId), revisions.get(change.walletId)!, touchesTransactions(change));
    }
    for (const [id, revision] of revisions) {
      this.loaded.get(id)!.revision = revision;
      this.unwritten.delete(id);
      this.deps.sharedLists?.written(id, revision);
    }
    for (const change of wallets) this.events.reached(change.walletId, change.sync.tip?.height ?? null);
    for (const id of reached) this.scanning.delete(id);
  }

  private reset(): void {
    this.events.clear();
    this.scanning.clear();
    this.pendingChanges = new Map();
    this.pendingBlocks = [];
    this.state = createEngineState();
    this.loaded.clear();
    this.unwritten.clear();
    this.deps.sharedLists?.forgetAll();
  }

  /** Takes a wallet out of the state (deleted, or to be loaded again). */
  private letGo(walletId: string): void {
    removeWallet(this.state, walletId);
    this.loaded.delete(walletId);
    this.unwritten.delete(walletId);
    this.deps.sharedLists?.forget(walletId);
  }
}
