/**
 * In-memory engine state and its only mutators. Every mutation goes through a ChangeRecorder so that the
 * changeset handed to the store describes exactly what changed; restoring from stored rows rebuilds the
 * same state (indexes are derived, never stored).
 */
import { binaryOfBytes, fromHex, hexOfBinary, toHex } from '../core/bytes.js';
import { BlockTransaction, scriptLookupKey } from '../core/block.js';
import { isCoinbase, serializeTransaction, vsize, type Transaction } from '../core/tx.js';
import { EngineError } from './errors.js';
import { KeyCounts } from './key-counts.js';
import {
  DEFAULT_GAP_LIMIT,
  type BlockRef,
  type Branch,
  type HexScriptDeriver,
  type ScriptDeriver,
  type StoredAddress,
  type StoredTransaction,
  type TxStatus,
} from './types.js';

export interface ScriptOwner {
  branch: Branch;
  index: number;
}

export interface BlockInfo extends BlockRef {
  time: number;
}

/**
 * What the engine reads of a held transaction: the outpoints it spends and its outputs, scripts as hex.
 * The raw transaction is `raw`; holding it parsed as well (a typed array per script, signature and
 * witness item) cost more memory than everything else a wallet holds.
 */
export interface HeldTx {
  /** Never changed: shared with the other states of the process holding the transaction (`TxBody`). */
  inputs: readonly HeldInput[];
  outputs: HeldOutput[];
}

export interface HeldInput {
  readonly txid: string;
  readonly vout: number;
}

export interface HeldOutput {
  value: bigint;
  script: string;
  /** Where the holding wallet derives `script`; null: the output pays someone else. */
  owner: ScriptOwner | null;
}

/**
 * What a raw transaction gives, which never changes. The states of one process holding the same transaction
 * (the sync's and the reads', same txid and hex) share these strings and inputs instead of each holding its
 * own parsed copy (`bodyOfHeld`); what a state owns is only which outputs pay its wallet.
 */
export interface TxBody {
  /** The raw transaction (with witness), one character per byte: half the memory of its hex (`hexOfBinary`). */
  readonly raw: string;
  readonly inputs: readonly HeldInput[];
  readonly outputs: readonly { readonly value: bigint; readonly script: string }[];
  readonly vsize: number;
  readonly coinbase: boolean;
}

/** The body of a parsed transaction (a block's is decoded with its witness first); the `bytes` it was read from, if any. */
export function bodyOf(parsed: Transaction, bytes?: Uint8Array): TxBody {
  // A block's transaction does not decode its witness, which the hex and the vsize need. The body copies
  // what it keeps, so nothing refers to the block's bytes.
  const tx = parsed instanceof BlockTransaction ? parsed.standalone() : parsed;
  return {
    raw: binaryOfBytes(bytes ?? serializeTransaction(tx)),
    inputs: tx.inputs.map((i) => ({ txid: i.txid, vout: i.vout })),
    outputs: tx.outputs.map((o) => ({ value: o.value, script: toHex(o.script) })),
    vsize: vsize(tx),
    coinbase: isCoinbase(tx),
  };
}

/** The body a held transaction shares: its strings, values and inputs, not its outputs' owners. */
export const bodyOfHeld = (t: TrackedTx): TxBody => ({ raw: t.raw, inputs: t.tx.inputs, outputs: t.tx.outputs, vsize: t.vsize, coinbase: t.coinbase });

/** A transaction as one wallet holds it: its outputs paying that wallet's scripts have their owner. */
function heldForm(wallet: WalletState, body: TxBody): HeldTx {
  return {
    inputs: body.inputs,
    outputs: body.outputs.map(({ value, script }) => {
      const owner = ownerOf(wallet, script) ?? null;
      // The wallet's own string of a script paying it: a 200,000-transaction wallet held 10 MB of copies, one parsed per output.
      const known = owner && wallet.knownScript?.(owner.branch, owner.index);
      return { value, script: known === script ? known : script, owner };
    }),
  };
}

/** A held transaction's raw hex, as stored and shown. */
export const hexOf = (t: { raw: string }): string => hexOfBinary(t.raw);

/** Whether output `vout` of a held transaction pays the wallet holding it. */
export const paysWallet = (t: TrackedTx | undefined, vout: number): boolean => !!t?.tx.outputs[vout]?.owner;

/** The outputs of a held transaction paying the wallet holding it, with their vout. */
export function* walletOutputs(t: TrackedTx): Generator<{ vout: number; output: HeldOutput; owner: ScriptOwner }> {
  const { outputs } = t.tx;
  for (let vout = 0; vout < outputs.length; vout++) {
    const output = outputs[vout]!;
    if (output.owner) yield { vout, output, owner: output.owner };
  }
}

/**
 * `a + b`, the very bigint given when the other is zero: sums of one term (a payment's one output, a spend's one coin)
 * share the output's value instead of each being a bigint of its own (a list entry of a large wallet held three).
 */
export const sumOfSats = (a: bigint, b: bigint): bigint => (a === 0n ? b : b === 0n ? a : a + b);

/** The value of a held transaction's outputs paying the wallet holding it. */
export function walletOutputsValue(t: TrackedTx): bigint {
  let sum = 0n;
  for (const output of t.tx.outputs) if (output.owner) sum = sumOfSats(sum, output.value);
  return sum;
}

/** Finds the outputs paying scripts the wallet derived since the transaction was held. */
export function findOwners(wallet: WalletState, tx: HeldTx): void {
  for (const output of tx.outputs) output.owner = ownerOf(wallet, output.script) ?? null;
}

/** One transaction as one wallet sees it. */
export interface TrackedTx {
  txid: string;
  tx: HeldTx;
  /** The raw transaction, one character per byte (`hexOf` gives its hex). */
  raw: string;
  vsize: number;
  coinbase: boolean;
  status: TxStatus;
  block: BlockInfo | null;
  firstSeen: number;
  replaceable: boolean | null;
}

export interface WalletState {
  walletId: string;
  gapLimit: number;
  derive: ScriptDeriver;
  /** Where given, what `fillGap` derives with: the deriver's own strings are held, not a copy of each. */
  deriveHex: HexScriptDeriver | undefined;
  tip: BlockRef | null;
  lastUsed: [number, number];
  /** Highest receive index handed out (-1: none); watched like a used one. */
  lastRevealedReceive: number;
  /** Number of scripts derived per branch (indexes 0 .. n-1). */
  derived: [number, number];
  /**
   * Script hex -> where the wallet derives it, as one number (`placeOf`): read with `ownerOf`. An owner object
   * per script cost 40 bytes, a fifth of what an idle wallet holds per script.
   */
  scripts: Map<string, number>;
  /** Where given, the deriver's own string of a script it derived or read already (WalletConfig.knownScript). */
  knownScript: ((branch: Branch, index: number) => string | undefined) | undefined;
  txs: Map<string, TrackedTx>;
  /**
   * Funding txid -> the wallet transactions (any status) spending its outputs, as `[vout, spender, vout, spender, ...]`
   * (no repeats): read with `spendersOf`. Keyed by the txid the inputs hold, not by an outpoint string: a key made
   * per input, with a list of one, cost more than the rest of the index.
   */
  spenders: Map<string, (number | string)[]>;
  /** Transactions with status `mempool`. */
  pending: Set<string>;
}

/** A wallet watching a script, and where it derives it. */
export interface ScriptHolder {
  wallet: WalletState;
  owner: ScriptOwner;
}

/** Where a wallet derives a script, as one number: index * 2 + branch (exact for any index below 2^52). */
const placeOf = (owner: ScriptOwner): number => owner.index * 2 + owner.branch;

/**
 * Each place's owner, made once for the process and shared by every wallet and output naming it (never changed):
 * one made per call gave each held output paying the wallet an object of its own, 16 MB of a 100,000-coin wallet.
 */
const OWNERS: ScriptOwner[] = [];
const ownerAt = (place: number): ScriptOwner => (OWNERS[place] ??= Object.freeze({ branch: (place % 2) as Branch, index: Math.floor(place / 2) }));

/** Where the wallet derives `script` (hex), if it is one of its scripts. */
export function ownerOf(wallet: WalletState, script: string): ScriptOwner | undefined {
  const place = wallet.scripts.get(script);
  return place === undefined ? undefined : ownerAt(place);
}

export interface EngineState {
  wallets: Map<string, WalletState>;
  /**
   * Script hex -> the wallet it belongs to, or the wallets when several do (no repeats): one lookup per output
   * for all wallets. Read with `walletsWatching` or `scriptHolders` (with where each derives it: the wallet's
   * `scripts`); nearly every script is one wallet's (a list of one, or a holder object, cost more than the entry).
   */
  scriptIndex: Map<string, WalletState | WalletState[]>;
  /**
   * Lookup key (scriptLookupKey) -> number of scripts of scriptIndex with that key. A block's outputs are
   * checked against it first, without hex-encoding them: nearly all outputs pay no wallet, and for those
   * the check costs a few byte reads and no allocation.
   */
  scriptKeys: KeyCounts;
  /**
   * Txid -> the wallet holding that transaction, or the wallets when several do (no repeats): one lookup per
   * input for all wallets. Read with `walletsHolding`; nearly every transaction is one wallet's.
   */
  txOwners: Map<string, WalletState | WalletState[]>;
}

const NO_SPENDERS: readonly string[] = Object.freeze([]);

/** The wallet transactions (any status) spending output `vout` of `txid`, in the order they were added. */
export function spendersOf(wallet: WalletState, txid: string, vout: number): readonly string[] {
  const spends = wallet.spenders.get(txid);
  let found: string[] | undefined;
  if (spends) for (let i = 0; i < spends.length; i += 2) if (spends[i] === vout) (found ??= []).push(spends[i + 1] as string);
  return found ?? NO_SPENDERS;
}

function addSpender(wallet: WalletState, input: HeldInput, spender: string): void {
  const spends = wallet.spenders.get(input.txid);
  if (!spends) {
    wallet.spenders.set(input.txid, [input.vout, spender]);
    return;
  }
  for (let i = 0; i < spends.length; i += 2) if (spends[i] === input.vout && spends[i + 1] === spender) return;
  spends.push(input.vout, spender);
}

function removeSpender(wallet: WalletState, input: HeldInput, spender: string): void {
  const spends = wallet.spenders.get(input.txid);
  if (!spends) return;
  for (let i = 0; i < spends.length; i += 2) {
    if (spends[i] !== input.vout || spends[i + 1] !== spender) continue;
    if (spends.length === 2) wallet.spenders.delete(input.txid);
    else spends.splice(i, 2);
    return;
  }
}

/** The wallets of the state watching `script` (hex). */
export function walletsWatching(state: EngineState, script: string): readonly WalletState[] | undefined {
  const held = state.scriptIndex.get(script);
  return held === undefined || Array.isArray(held) ? held : [held];
}

/** The wallets of the state watching `script` (hex), with where each derives it. */
export function scriptHolders(state: EngineState, script: string): readonly ScriptHolder[] | undefined {
  return walletsWatching(state, script)?.map((wallet) => ({ wallet, owner: ownerOf(wallet, script)! }));
}

/** The wallets of the state holding transaction `txid`. */
export function walletsHolding(state: EngineState, txid: string): readonly WalletState[] | undefined {
  const held = state.txOwners.get(txid);
  return held === undefined || Array.isArray(held) ? held : [held];
}

function addHolder(state: EngineState, txid: string, wallet: WalletState): void {
  const held = state.txOwners.get(txid);
  if (held === undefined) state.txOwners.set(txid, wallet);
  else if (!Array.isArray(held)) {
    if (held !== wallet) state.txOwners.set(txid, [held, wallet]);
  } else if (!held.includes(wallet)) held.push(wallet);
}

/** Forgets that `wallet` holds transaction `txid`. */
export function removeHolder(state: EngineState, txid: string, wallet: WalletState): void {
  const held = state.txOwners.get(txid);
  if (held === wallet) state.txOwners.delete(txid);
  else if (Array.isArray(held)) {
    const rest = held.filter((w) => w !== wallet);
    if (rest.length !== held.length) state.txOwners.set(txid, rest.length === 1 ? rest[0]! : rest);
  }
}

/** Whether some wallet of the state may watch `script` (no false negatives). */
export const mayBeWatched = (state: EngineState, script: Uint8Array): boolean => state.scriptKeys.has(scriptLookupKey(script));

/** Removes a script from the shared index (no wallet watches it any more). */
export function unindexScript(state: EngineState, script: string): void {
  if (!state.scriptIndex.delete(script)) return;
  state.scriptKeys.remove(scriptLookupKey(fromHex(script)));
}

export const outpointKey = (txid: string, vout: number): string => `${txid}:${vout}`;

export function emptyEngineState(): EngineState {
  return { wallets: new Map(), scriptIndex: new Map(), scriptKeys: new KeyCounts(), txOwners: new Map() };
}

/**
 * A state of `wallet` alone, which another state holds: for what reads one wallet by id (its lists, a view of it), never
 * for applying updates (the indexes of all wallets stay empty). It keeps this very wallet should the other state let
 * it go or load it again.
 */
export function stateOfWallet(wallet: WalletState): EngineState {
  const state = emptyEngineState();
  state.wallets.set(wallet.walletId, wallet);
  return state;
}

/** Collects what an update changed, per wallet, to build the changeset at the end. */
export class ChangeRecorder {
  readonly addresses = new Map<string, StoredAddress[]>();
  readonly added = new Map<string, Set<string>>();
  readonly updated = new Map<string, Set<string>>();
  readonly removed = new Map<string, Set<string>>();
  /** Per wallet, the transactions removed, as the state held them (lists kept over the state follow them). */
  readonly removedVersions = new Map<string, Map<string, TrackedTx>>();
  readonly syncChanged = new Set<string>();

  private setOf(map: Map<string, Set<string>>, walletId: string): Set<string> {
    let set = map.get(walletId);
    if (!set) map.set(walletId, (set = new Set()));
    return set;
  }
  /** Scripts derived since the last `takeDerived()`: a re-check only needs to look for these. */
  private derivedScripts = new Set<string>();
  takeDerived(): Set<string> {
    const scripts = this.derivedScripts;
    this.derivedScripts = new Set();
    return scripts;
  }
  address(row: StoredAddress): void {
    this.derivedScripts.add(row.script);
    let list = this.addresses.get(row.walletId);
    if (!list) this.addresses.set(row.walletId, (list = []));
    list.push(row);
  }
  txAdded(walletId: string, txid: string): void {
    const removed = this.setOf(this.removed, walletId);
    if (removed.delete(txid)) this.setOf(this.updated, walletId).add(txid);
    else this.setOf(this.added, walletId).add(txid);
  }
  txUpdated(walletId: string, txid: string): void {
    if (!this.setOf(this.added, walletId).has(txid)) this.setOf(this.updated, walletId).add(txid);
  }
  txRemoved(walletId: string, txid: string, version: TrackedTx): void {
    let versions = this.removedVersions.get(walletId);
    if (!versions) this.removedVersions.set(walletId, (versions = new Map()));
    if (!versions.has(txid)) versions.set(txid, version);
    if (this.setOf(this.added, walletId).delete(txid)) return;
    this.setOf(this.updated, walletId).delete(txid);
    this.setOf(this.removed, walletId).add(txid);
  }
  sync(walletId: string): void {
    this.syncChanged.add(walletId);
  }
}

function checkGapLimit(gapLimit: number): void {
  if (!Number.isSafeInteger(gapLimit) || gapLimit < 1 || gapLimit > 100_000) {
    throw new EngineError('invalid_update', 'Gap limit must be an integer from 1 to 100000');
  }
}

export function newWalletState(
  walletId: string,
  gapLimit: number | undefined,
  derive: ScriptDeriver,
  deriveHex?: HexScriptDeriver,
  knownScript?: (branch: Branch, index: number) => string | undefined,
): WalletState {
  const gap = gapLimit ?? DEFAULT_GAP_LIMIT;
  checkGapLimit(gap);
  return {
    walletId,
    gapLimit: gap,
    derive,
    deriveHex,
    tip: null,
    lastUsed: [-1, -1],
    lastRevealedReceive: -1,
    derived: [0, 0],
    scripts: new Map(),
    knownScript,
    txs: new Map(),
    spenders: new Map(),
    pending: new Set(),
  };
}

/** Adds already-derived scripts (from the deriver or the store) to the wallet and the shared index. */
export function addScript(state: EngineState, wallet: WalletState, owner: ScriptOwner, script: string): void {
  if (wallet.scripts.has(script)) return; // the same script twice in one wallet: first position wins
  wallet.scripts.set(script, placeOf(owner));
  const held = state.scriptIndex.get(script);
  if (Array.isArray(held)) held.push(wallet);
  else if (held) state.scriptIndex.set(script, [held, wallet]);
  if (held) return;
  state.scriptIndex.set(script, wallet);
  state.scriptKeys.add(scriptLookupKey(fromHex(script)));
}

/** The highest index of the branch known to be given out: used on chain, or (receive) revealed. */
export function lastClaimed(wallet: WalletState, branch: Branch): number {
  return branch === 0 ? Math.max(wallet.lastUsed[0], wallet.lastRevealedReceive) : wallet.lastUsed[1];
}

/**
 * Derives scripts so that `gapLimit` unused ones exist after the last claimed index of the branch (used,
 * or revealed: an address handed out may be paid however far it is past the last used one). True if any
 * were added.
 */
export function fillGap(state: EngineState, wallet: WalletState, branch: Branch, recorder: ChangeRecorder): boolean {
  const wanted = lastClaimed(wallet, branch) + 1 + wallet.gapLimit;
  const have = wallet.derived[branch];
  if (have >= wanted) return false;
  const scripts = wallet.deriveHex ? wallet.deriveHex(branch, have, wanted - have) : wallet.derive(branch, have, wanted - have);
  if (scripts.length !== wanted - have) {
    throw new EngineError('invalid_update', `Deriver returned ${scripts.length} scripts instead of ${wanted - have}`);
  }
  scripts.forEach((derived, i) => {
    const index = have + i;
    const script = typeof derived === 'string' ? derived : toHex(derived);
    addScript(state, wallet, { branch, index }, script);
    recorder.address({ walletId: wallet.walletId, branch, index, script });
  });
  wallet.derived[branch] = wanted;
  return true;
}

/** Records an output paying `owner`; derives further scripts if it is near the end. True if any were added. */
export function markUsed(state: EngineState, wallet: WalletState, owner: ScriptOwner, recorder: ChangeRecorder): boolean {
  if (owner.index <= wallet.lastUsed[owner.branch]) return false;
  wallet.lastUsed[owner.branch] = owner.index;
  recorder.sync(wallet.walletId);
  return fillGap(state, wallet, owner.branch, recorder);
}

/** A transaction to insert: parsed (from a block or the mempool), or its body (from a stored row). */
export type NewTx = NewTxState & ({ tx: Transaction } | { body: TxBody });

interface NewTxState {
  txid: string;
  status: TxStatus;
  block: BlockInfo | null;
  firstSeen: number;
  replaceable: boolean | null;
}

/** Inserts a transaction into a wallet (indexes included); the caller records the change. */
export function insertTx(state: EngineState, wallet: WalletState, input: NewTx): TrackedTx {
  const body = 'body' in input ? input.body : bodyOf(input.tx);
  const tracked: TrackedTx = {
    txid: input.txid,
    tx: heldForm(wallet, body),
    raw: body.raw,
    vsize: body.vsize,
    coinbase: body.coinbase,
    status: input.status,
    block: input.block,
    firstSeen: input.firstSeen,
    replaceable: input.replaceable,
  };
  wallet.txs.set(tracked.txid, tracked);
  if (tracked.status === 'mempool') wallet.pending.add(tracked.txid);
  if (!tracked.coinbase) {
    for (const input of tracked.tx.inputs) addSpender(wallet, input, tracked.txid);
  }
  addHolder(state, tracked.txid, wallet);
  return tracked;
}

export function deleteTx(state: EngineState, wallet: WalletState, txid: string): void {
  const tracked = wallet.txs.get(txid);
  if (!tracked) return;
  wallet.txs.delete(txid);
  wallet.pending.delete(txid);
  if (!tracked.coinbase) {
    for (const input of tracked.tx.inputs) removeSpender(wallet, input, txid);
  }
  removeHolder(state, txid, wallet);
}

export function setStatus(wallet: WalletState, tracked: TrackedTx, status: TxStatus): void {
  tracked.status = status;
  if (status === 'mempool') wallet.pending.add(tracked.txid);
  else wallet.pending.delete(tracked.txid);
}

export function toStoredTransaction(walletId: string, t: TrackedTx): StoredTransaction {
  return {
    walletId,
    txid: t.txid,
    hex: hexOf(t),
    status: t.status,
    blockHeight: t.block?.height ?? null,
    blockHash: t.block?.hash ?? null,
    blockTime: t.block?.time ?? null,
    firstSeen: t.firstSeen,
    replaceable: t.replaceable,
  };
}
