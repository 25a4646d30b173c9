/**
 * applyUpdate: one chain update (connected block, disconnected block, mempool snapshot) applied to every
 * wallet of the state in one pass over the transactions, returning the changeset to persist.
 *
 * Matching is by hash map only: each output script is looked up once in the shared script index, each input's
 * txid once in the shared tx-owner index. When an output uses a script near the end of a branch, more
 * scripts are derived and the same block (or mempool) is checked again, so a later output at a higher index
 * (Core's keypool finds those) is not missed.
 */
import { BlockTransaction, scriptLookupKey } from '../core/block.js';
import { fromHex, toHex } from '../core/bytes.js';
import { isCoinbase, txid as computeTxid, type Transaction } from '../core/tx.js';
import { buildChangeset } from './changeset.js';
import { dropTx } from './drop.js';
import { EngineError } from './errors.js';
import {
  ChangeRecorder,
  insertTx,
  markUsed,
  mayBeWatched,
  findOwners,
  outpointKey,
  paysWallet,
  walletsWatching,
  setStatus,
  walletOutputs,
  walletsHolding,
  type BlockInfo,
  type EngineState,
  type TrackedTx,
  type WalletState,
} from './state.js';
import type { BlockConnected, BlockDisconnected, BlockRef, ChainUpdate, EngineChangeset, MempoolSnapshot } from './types.js';
import type { AppliedChanges } from './wallets.js';

export interface ApplyOptions {
  /** Apply only to these wallets (default: every wallet of the state). */
  walletIds?: readonly string[];
  /** Wallets whose lists are kept over this state (list-cache.ts): each is told what the update replaced in it. */
  listsKept?: { has(walletId: string): boolean; changed(walletId: string, applied: AppliedChanges): void };
}

const HASH_RE = /^[0-9a-f]{64}$/;
const isHeight = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0;
const isTime = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0;

function walletsInScope(state: EngineState, options: ApplyOptions | undefined): WalletState[] {
  if (!options?.walletIds) return [...state.wallets.values()];
  return [...new Set(options.walletIds)].map((id) => {
    const wallet = state.wallets.get(id);
    if (!wallet) throw new EngineError('unknown_wallet', `Unknown wallet ${id}`);
    return wallet;
  });
}

/**
 * Applies one update to the state in place and returns what changed. Persist the changeset in one store
 * transaction; if that fails, or this throws, rebuild the state from the store (it may be partly updated).
 */
export function applyUpdate(state: EngineState, update: ChainUpdate, options?: ApplyOptions): EngineChangeset {
  const wallets = walletsInScope(state, options);
  const recorder = new ChangeRecorder();
  const kept = options?.listsKept;
  const tipsBefore = kept && new Map(wallets.filter((w) => kept.has(w.walletId)).map((w) => [w, w.tip]));
  switch (update?.type) {
    case 'block_connected':
      connectBlock(state, wallets, update, recorder);
      break;
    case 'block_disconnected':
      disconnectBlock(state, wallets, update, recorder);
      break;
    case 'mempool':
      applyMempool(state, wallets, update, recorder);
      break;
    default:
      throw new EngineError('invalid_update', 'Unknown chain update type');
  }
  if (kept && tipsBefore) for (const [wallet, previousTip] of tipsBefore) kept.changed(wallet.walletId, appliedIn(wallet, recorder, previousTip));
  return buildChangeset(state, wallets, recorder);
}

/** What an update replaced in one wallet, as `applyStoredChanges` tells it: the lists kept over the state follow it. */
function appliedIn(wallet: WalletState, recorder: ChangeRecorder, previousTip: BlockRef | null): AppliedChanges {
  const id = wallet.walletId;
  const versions = recorder.removedVersions.get(id);
  const replaced = new Map<string, TrackedTx | undefined>();
  for (const txid of recorder.added.get(id) ?? []) replaced.set(txid, undefined);
  // Changed in place, or removed and held again: the version before is the one removed, else the same record.
  for (const txid of recorder.updated.get(id) ?? []) replaced.set(txid, versions?.get(txid) ?? wallet.txs.get(txid));
  for (const txid of recorder.removed.get(id) ?? []) replaced.set(txid, versions?.get(txid));
  return { replaced, newlyPaying: new Set(), previousTip };
}

/** A transaction of the update with its txid computed on first use (once, reused per pass). */
class Candidate {
  private id: string | undefined;
  readonly coinbase: boolean;
  constructor(
    readonly tx: Transaction,
    txid?: string,
  ) {
    this.id = txid;
    this.coinbase = isCoinbase(tx);
  }
  get txid(): string {
    return (this.id ??= this.tx instanceof BlockTransaction ? this.tx.txid() : computeTxid(this.tx));
  }
}

const NO_WALLETS: ReadonlySet<WalletState> = new Set();

/** Wallets (in scope) that this transaction pays or spends from; allocates nothing for the (usual) miss. */
function touchedWallets(state: EngineState, scope: Set<WalletState>, candidate: Candidate): ReadonlySet<WalletState> {
  let touched: Set<WalletState> | undefined;
  if (!candidate.coinbase) {
    for (const input of candidate.tx.inputs) {
      const owners = walletsHolding(state, input.txid);
      if (!owners) continue;
      for (const wallet of owners) {
        if (scope.has(wallet) && paysWallet(wallet.txs.get(input.txid), input.vout)) (touched ??= new Set()).add(wallet);
      }
    }
  }
  const tx = candidate.tx;
  if (tx instanceof BlockTransaction && !tx.anyOutputKeyIn(state.scriptKeys)) return touched ?? NO_WALLETS;
  for (const output of tx.outputs) {
    if (!mayBeWatched(state, output.script)) continue;
    const owners = walletsWatching(state, toHex(output.script));
    if (!owners) continue;
    for (const wallet of owners) if (scope.has(wallet)) (touched ??= new Set()).add(wallet);
  }
  return touched ?? NO_WALLETS;
}

/** Whether the transaction pays one of `scripts` (hex), looked up by key first as in touchedWallets. */
function pays(candidate: Candidate, scripts: ReadonlySet<string>, keys: ReadonlySet<number>): boolean {
  if (candidate.tx instanceof BlockTransaction && !candidate.tx.anyOutputKeyIn(keys)) return false;
  return candidate.tx.outputs.some((o) => keys.has(scriptLookupKey(o.script)) && scripts.has(toHex(o.script)));
}

/**
 * Runs `visit` over the candidates (parents before children) until no visit derives new scripts. The first
 * pass visits everything; a re-check visits only transactions paying a newly derived script or spending
 * from one visited in that re-check, since nothing else can have changed.
 */
function forEachPass(candidates: Candidate[], recorder: ChangeRecorder, visit: (candidate: Candidate) => boolean): void {
  recorder.takeDerived();
  let extended = false;
  for (const candidate of candidates) if (visit(candidate)) extended = true;
  while (extended) {
    extended = false;
    const derived = recorder.takeDerived();
    const derivedKeys = new Set([...derived].map((script) => scriptLookupKey(fromHex(script))));
    const revisited = new Set<string>();
    for (const candidate of candidates) {
      const relevant =
        pays(candidate, derived, derivedKeys) ||
        (!candidate.coinbase && candidate.tx.inputs.some((input) => revisited.has(input.txid)));
      if (!relevant) continue;
      revisited.add(candidate.txid);
      if (visit(candidate)) extended = true;
    }
  }
}

/** Marks the outputs' scripts used; true if that derived new scripts (the update must be checked again). */
function markOutputsUsed(state: EngineState, wallet: WalletState, tracked: TrackedTx, recorder: ChangeRecorder): boolean {
  let extended = false;
  for (const { owner } of walletOutputs(tracked)) if (markUsed(state, wallet, owner, recorder)) extended = true;
  return extended;
}

function checkBlockFields(update: BlockConnected | BlockDisconnected): void {
  if (!isHeight(update.height) || !HASH_RE.test(update.hash ?? '') || !HASH_RE.test(update.prevHash ?? '')) {
    throw new EngineError('invalid_update', 'Block needs a height and lower-case hex hash and prevHash');
  }
}

function connectBlock(state: EngineState, wallets: WalletState[], update: BlockConnected, recorder: ChangeRecorder): void {
  checkBlockFields(update);
  if (!isTime(update.time) || !Array.isArray(update.transactions)) {
    throw new EngineError('invalid_update', 'Block needs a time and its transactions');
  }
  for (const wallet of wallets) {
    if (wallet.tip && (wallet.tip.hash !== update.prevHash || wallet.tip.height + 1 !== update.height)) {
      throw new EngineError(
        'tip_mismatch',
        `Block ${update.hash} at height ${update.height} does not extend wallet ${wallet.walletId}'s tip ${wallet.tip.hash}`,
      );
    }
  }
  const scope = new Set(wallets);
  const block: BlockInfo = { height: update.height, hash: update.hash, time: update.time };
  const candidates = update.transactions.map((tx) => new Candidate(tx));
  const inBlock = new Set<string>();

  forEachPass(candidates, recorder, (candidate) => {
    let extended = false;
    for (const wallet of touchedWallets(state, scope, candidate)) {
      const tracked = confirmInWallet(state, wallet, candidate, block, recorder);
      inBlock.add(candidate.txid);
      if (markOutputsUsed(state, wallet, tracked, recorder)) extended = true;
    }
    return extended;
  });

  // Unconfirmed wallet transactions spending a coin this block spent are double-spent: drop them.
  const spentByBlock = new Set<string>();
  if (wallets.some((w) => w.pending.size > 0)) {
    for (const tx of update.transactions) for (const input of tx.inputs) spentByBlock.add(outpointKey(input.txid, input.vout));
  }
  for (const wallet of wallets) {
    for (const txid of [...wallet.pending]) {
      const tracked = wallet.txs.get(txid);
      if (!tracked || inBlock.has(txid)) continue;
      if (tracked.tx.inputs.some((i) => spentByBlock.has(outpointKey(i.txid, i.vout)))) dropTx(state, wallet, txid, recorder);
    }
    wallet.tip = { height: update.height, hash: update.hash };
    recorder.sync(wallet.walletId);
  }
}

function confirmInWallet(
  state: EngineState,
  wallet: WalletState,
  candidate: Candidate,
  block: BlockInfo,
  recorder: ChangeRecorder,
): TrackedTx {
  const existing = wallet.txs.get(candidate.txid);
  if (!existing) {
    const tracked = insertTx(state, wallet, {
      txid: candidate.txid,
      tx: candidate.tx,
      status: 'confirmed',
      block,
      firstSeen: block.time,
      replaceable: null,
    });
    recorder.txAdded(wallet.walletId, candidate.txid);
    return tracked;
  }
  findOwners(wallet, existing.tx); // scripts may have been derived since it was first seen
  if (existing.status !== 'confirmed' || existing.block?.hash !== block.hash) {
    setStatus(wallet, existing, 'confirmed');
    existing.block = block;
    existing.replaceable = null;
    recorder.txUpdated(wallet.walletId, existing.txid);
  }
  return existing;
}

function disconnectBlock(state: EngineState, wallets: WalletState[], update: BlockDisconnected, recorder: ChangeRecorder): void {
  checkBlockFields(update);
  for (const wallet of wallets) {
    if (!wallet.tip || wallet.tip.hash !== update.hash || wallet.tip.height !== update.height) {
      throw new EngineError('tip_mismatch', `Block ${update.hash} is not wallet ${wallet.walletId}'s tip`);
    }
  }
  for (const wallet of wallets) {
    const coinbases: string[] = [];
    for (const tracked of wallet.txs.values()) {
      if (tracked.status !== 'confirmed' || tracked.block?.hash !== update.hash) continue;
      // Back to unconfirmed; the next mempool snapshot tells whether the node took it back into its mempool.
      setStatus(wallet, tracked, 'mempool');
      tracked.block = null;
      tracked.replaceable = null;
      recorder.txUpdated(wallet.walletId, tracked.txid);
      if (tracked.coinbase) coinbases.push(tracked.txid);
    }
    for (const txid of coinbases) dropTx(state, wallet, txid, recorder); // a coinbase cannot exist off its block
    wallet.tip = update.height > 0 ? { height: update.height - 1, hash: update.prevHash } : null;
    recorder.sync(wallet.walletId);
  }
}

function applyMempool(state: EngineState, wallets: WalletState[], update: MempoolSnapshot, recorder: ChangeRecorder): void {
  if (!Array.isArray(update.transactions)) throw new EngineError('invalid_update', 'Mempool snapshot needs its transactions');
  const candidates = new Map<string, { candidate: Candidate; time: number }>();
  for (const entry of update.transactions) {
    if (!entry?.tx || !isTime(entry.time)) throw new EngineError('invalid_update', 'Mempool entry needs a transaction and a time');
    if (entry.txid !== undefined && !HASH_RE.test(entry.txid)) throw new EngineError('invalid_update', 'Mempool txid must be lower-case hex');
    const candidate = new Candidate(entry.tx, entry.txid);
    candidates.set(candidate.txid, { candidate, time: entry.time });
  }

  // Gone from the mempool (replaced, evicted, or not taken back after a reorg): drop.
  for (const wallet of wallets) {
    for (const txid of [...wallet.pending]) if (!candidates.has(txid)) dropTx(state, wallet, txid, recorder);
  }

  const scope = new Set(wallets);
  const ordered = parentsFirst(candidates);
  const times = new Map(ordered.map(({ candidate, time }) => [candidate, time]));
  forEachPass(
    ordered.map((o) => o.candidate),
    recorder,
    (candidate) => {
      let extended = false;
      for (const wallet of touchedWallets(state, scope, candidate)) {
        const tracked = seenInMempool(state, wallet, candidate, times.get(candidate)!, recorder);
        if (markOutputsUsed(state, wallet, tracked, recorder)) extended = true;
      }
      return extended;
    },
  );

  const replaceable = replaceabilityOf(candidates);
  for (const wallet of wallets) {
    for (const txid of wallet.pending) {
      const tracked = wallet.txs.get(txid)!;
      const signals = replaceable(txid);
      if (tracked.replaceable !== signals) {
        tracked.replaceable = signals;
        recorder.txUpdated(wallet.walletId, txid);
      }
    }
  }
}

function seenInMempool(state: EngineState, wallet: WalletState, candidate: Candidate, time: number, recorder: ChangeRecorder): TrackedTx {
  const existing = wallet.txs.get(candidate.txid);
  if (!existing) {
    const tracked = insertTx(state, wallet, {
      txid: candidate.txid,
      tx: candidate.tx,
      status: 'mempool',
      block: null,
      firstSeen: time,
      replaceable: null,
    });
    recorder.txAdded(wallet.walletId, candidate.txid);
    return tracked;
  }
  findOwners(wallet, existing.tx);
  // A transaction this wallet holds as confirmed stays so: blocks, not the mempool, decide that.
  if (existing.status === 'dropped') {
    setStatus(wallet, existing, 'mempool');
    recorder.txUpdated(wallet.walletId, existing.txid);
  }
  return existing;
}

/** Mempool entries ordered so that every parent comes before its children. */
function parentsFirst<T extends { candidate: Candidate }>(entries: Map<string, T>): T[] {
  const ordered: T[] = [];
  const visited = new Set<string>();
  const visit = (txid: string, entry: T) => {
    const stack: [string, T, number][] = [[txid, entry, 0]];
    visited.add(txid);
    while (stack.length > 0) {
      const frame = stack[stack.length - 1]!;
      const inputs = frame[1].candidate.tx.inputs;
      if (frame[2] < inputs.length) {
        const parentId = inputs[frame[2]++]!.txid;
        const parent = entries.get(parentId);
        if (parent && !visited.has(parentId)) {
          visited.add(parentId);
          stack.push([parentId, parent, 0]);
        }
        continue;
      }
      ordered.push(frame[1]);
      stack.pop();
    }
  };
  for (const [txid, entry] of entries) if (!visited.has(txid)) visit(txid, entry);
  return ordered;
}

/** BIP125: a mempool transaction is replaceable if it or any unconfirmed ancestor signals (nSequence < 0xfffffffe). */
function replaceabilityOf(entries: Map<string, { candidate: Candidate }>): (txid: string) => boolean {
  const memo = new Map<string, boolean>();
  const check = (txid: string): boolean => {
    const known = memo.get(txid);
    if (known !== undefined) return known;
    memo.set(txid, false); // guards against malformed cycles
    const tx = entries.get(txid)?.candidate.tx;
    const result = !!tx && (tx.inputs.some((i) => i.sequence < 0xfffffffe) || tx.inputs.some((i) => entries.has(i.txid) && check(i.txid)));
    memo.set(txid, result);
    return result;
  };
  return check;
}
