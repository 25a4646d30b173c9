/**
 * Loading wallets into the engine: a new wallet (derives its first gap-limit scripts per branch) or one
 * rebuilt from its stored rows after a restart (no rescan: the stored tip, scripts and transactions are it).
 */
import { isHexOfBinary } from '../core/bytes.js';
import { bytesOfCheckedHex, parseTransactionWithTxid } from '../core/tx.js';
import { buildChangeset, syncRow } from './changeset.js';
import { EngineError } from './errors.js';
import { addScript, bodyOf, bodyOfHeld, ChangeRecorder, deleteTx, fillGap, insertTx, newWalletState, ownerOf, removeHolder, unindexScript, type BlockInfo, type EngineState, type NewTx, type TrackedTx } from './state.js';
import type { BlockRef, Branch, EngineChangeset, StoredAddress, StoredTransaction, StoredWalletRows, StoredWalletSync, WalletConfig } from './types.js';

const isRevealIndex = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= -1;

const HASH_RE = /^[0-9a-f]{64}$/;
const HEX_RE = /^(?:[0-9a-f]{2})*$/;
const STATUSES = new Set(['confirmed', 'mempool', 'dropped']);

/** Stored transaction rows checked and parsed (`parseStoredTransactions`), for `addWallet`. */
export type ParsedStoredTransaction = NewTx;

/** A wallet's stored rows with their transactions already parsed. */
export interface ParsedWalletRows extends Omit<StoredWalletRows, 'transactions'> {
  parsedTransactions: readonly ParsedStoredTransaction[];
}

/**
 * Checks and parses stored transaction rows of the wallet whose sync row has `tip`. `addWallet` does it for
 * rows it is given; a caller loading a large wallet parses them in parts instead, and answers other work
 * between the parts (parsing is most of a load).
 */
export function parseStoredTransactions(walletId: string, tip: BlockRef | null, rows: readonly StoredTransaction[]): ParsedStoredTransaction[] {
  const blocks: BlocksSeen = new Map();
  return rows.map((row) => parseStoredTransaction(walletId, tip, row, blocks));
}

/**
 * The blocks of the rows parsed so far, by hash: the transactions of one block share one BlockInfo (a busy
 * wallet has many per block, and each row reads its own copy of the block's hash).
 */
export type BlocksSeen = Map<string, BlockInfo>;

/**
 * Adds a wallet to the state, fresh or from `stored` rows (their transactions parsed here or before, against
 * the same rows' tip). Returns the scripts it had to derive (all of a fresh wallet's first `gapLimit` per
 * branch; for a stored one only if the gap limit grew) as a changeset.
 */
export function addWallet(state: EngineState, config: WalletConfig, stored?: StoredWalletRows | ParsedWalletRows): EngineChangeset {
  const steps = addWalletSteps(state, config, stored);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * `addWallet` in steps of a few milliseconds, `pause` awaited between two, so that the process answers other work
 * while a wallet of 200,000 transactions loads (half a second in one go). The wallet is in the state, partly loaded,
 * from the first step: only for a state that nothing else changes meanwhile.
 */
export async function addWalletInParts(state: EngineState, config: WalletConfig, stored: StoredWalletRows | ParsedWalletRows, pause: () => Promise<void>): Promise<EngineChangeset> {
  const steps = addWalletSteps(state, config, stored);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    try {
      await pause();
    } catch (error) {
      removeWallet(state, config.walletId); // a load given up leaves no half-loaded wallet, as a refused one
      throw error;
    }
  }
}

/** Transactions a load inserts between two steps of `addWalletSteps`: about 25 ms of work. */
const INSERTS_PER_STEP = 10_000;

function* addWalletSteps(state: EngineState, config: WalletConfig, stored?: StoredWalletRows | ParsedWalletRows): Generator<void, EngineChangeset> {
  if (typeof config?.walletId !== 'string' || config.walletId.length === 0) throw new EngineError('invalid_update', 'Wallet id is required');
  if (typeof config.derive !== 'function') throw new EngineError('invalid_update', 'Wallet needs a script deriver');
  if (state.wallets.has(config.walletId)) throw new EngineError('duplicate_wallet', `Wallet ${config.walletId} is already loaded`);
  if (config.deriveHex !== undefined && typeof config.deriveHex !== 'function') throw new EngineError('invalid_update', 'Hex script deriver must be a function');
  if (config.knownScript !== undefined && typeof config.knownScript !== 'function') throw new EngineError('invalid_update', 'Known script lookup must be a function');
  const wallet = newWalletState(config.walletId, config.gapLimit, config.derive, config.deriveHex, config.knownScript);
  state.wallets.set(wallet.walletId, wallet);
  if (stored) {
    try {
      yield* loadRows(state, wallet, stored);
    } catch (error) {
      removeWallet(state, wallet.walletId); // leaves no half-loaded wallet in the shared indexes
      throw error;
    }
  }
  const recorder = new ChangeRecorder();
  if (!stored) recorder.sync(wallet.walletId);
  fillGap(state, wallet, 0, recorder);
  fillGap(state, wallet, 1, recorder);
  return buildChangeset(state, [wallet], recorder);
}

/**
 * Watches receive addresses handed out up to `lastRevealedReceive` (as stored by whoever revealed them):
 * derives scripts to `lastRevealedReceive + gapLimit` if they are not yet. Never lowers what the wallet
 * watches. Returns the scripts it derived (empty when none were needed).
 */
export function watchRevealed(state: EngineState, walletId: string, lastRevealedReceive: number): EngineChangeset {
  const wallet = state.wallets.get(walletId);
  if (!wallet) throw new EngineError('unknown_wallet', `Unknown wallet ${walletId}`);
  if (!isRevealIndex(lastRevealedReceive)) throw new EngineError('invalid_update', 'Revealed receive index must be an integer >= -1');
  const recorder = new ChangeRecorder();
  if (lastRevealedReceive > wallet.lastRevealedReceive) {
    wallet.lastRevealedReceive = lastRevealedReceive;
    fillGap(state, wallet, 0, recorder);
  }
  return buildChangeset(state, [wallet], recorder);
}

/** Forgets a wallet (after it was deleted from the store). */
export function removeWallet(state: EngineState, walletId: string): void {
  const wallet = state.wallets.get(walletId);
  if (!wallet) throw new EngineError('unknown_wallet', `Unknown wallet ${walletId}`);
  state.wallets.delete(walletId);
  for (const [script, held] of state.scriptIndex) {
    if (!Array.isArray(held)) {
      if (held === wallet) unindexScript(state, script);
      continue;
    }
    const rest = held.filter((w) => w !== wallet);
    if (rest.length === 0) unindexScript(state, script);
    else if (rest.length !== held.length) state.scriptIndex.set(script, rest.length === 1 ? rest[0]! : rest);
  }
  for (const txid of wallet.txs.keys()) removeHolder(state, txid, wallet);
}

const bad = (walletId: string, what: string) => new EngineError('invalid_stored_state', `Stored state of wallet ${walletId}: ${what}`);

function checkSync(walletId: string, sync: StoredWalletSync): void {
  if (sync?.walletId !== walletId) throw bad(walletId, 'sync row belongs to another wallet');
  if (sync.tip !== null && (!Number.isSafeInteger(sync.tip?.height) || sync.tip.height < 0 || !HASH_RE.test(sync.tip.hash ?? ''))) {
    throw bad(walletId, 'invalid tip');
  }
  for (const n of [sync.lastUsedReceive, sync.lastUsedChange]) if (!Number.isSafeInteger(n) || n < -1) throw bad(walletId, 'invalid last used index');
}

function* loadRows(state: EngineState, wallet: ReturnType<typeof newWalletState>, stored: StoredWalletRows | ParsedWalletRows): Generator<void, void> {
  const id = wallet.walletId;
  checkSync(id, stored.sync);
  wallet.tip = stored.sync.tip ? { ...stored.sync.tip } : null;
  wallet.lastUsed = [stored.sync.lastUsedReceive, stored.sync.lastUsedChange];
  if (stored.lastRevealedReceive !== undefined) {
    if (!isRevealIndex(stored.lastRevealedReceive)) throw bad(id, 'invalid last revealed receive index');
    wallet.lastRevealedReceive = stored.lastRevealedReceive;
  }

  for (const branch of [0, 1] as Branch[]) {
    const rows = stored.addresses.filter((a) => a.branch === branch).sort((a, b) => a.index - b.index);
    rows.forEach((row, i) => {
      checkAddressRow(id, row);
      if (row.index !== i) throw bad(id, `address indexes of branch ${branch} are not contiguous from 0`);
      addScript(state, wallet, { branch, index: i }, row.script);
    });
    wallet.derived[branch] = rows.length;
  }
  if (stored.addresses.some((a) => a.branch !== 0 && a.branch !== 1)) throw bad(id, 'address branch must be 0 or 1');

  const transactions = 'parsedTransactions' in stored ? stored.parsedTransactions : parseStoredTransactions(id, wallet.tip, stored.transactions);
  let inserted = 0;
  for (const tx of transactions) {
    insertTx(state, wallet, tx);
    if (++inserted % INSERTS_PER_STEP === 0) yield;
  }
}

function checkAddressRow(id: string, row: StoredAddress): void {
  if (row.walletId !== id) throw bad(id, 'address row belongs to another wallet');
  if (!HEX_RE.test(row.script) || row.script.length === 0) throw bad(id, 'address script is not lower-case hex');
}

/**
 * Checks one stored transaction row against the wallet (and its tip) and parses it. `held`: the same
 * transaction as another state of the process holds it; when it is this row's (same txid and hex) its body is
 * shared, not parsed again: it is what parsing the row gives.
 */
export function parseStoredTransaction(id: string, tip: BlockRef | null, row: StoredTransaction, blocks: BlocksSeen, held?: TrackedTx): ParsedStoredTransaction {
  if (row.walletId !== id) throw bad(id, 'transaction row belongs to another wallet');
  if (!STATUSES.has(row.status)) throw bad(id, `transaction ${row.txid} has unknown status`);
  if ((row.status === 'confirmed') !== (row.blockHash !== null)) throw bad(id, `transaction ${row.txid} status and block disagree`);
  if (row.status === 'confirmed') {
    const { blockHeight: height, blockTime: time, blockHash: hash } = row;
    if (!Number.isSafeInteger(height) || !Number.isSafeInteger(time) || !HASH_RE.test(hash ?? '')) throw bad(id, `transaction ${row.txid} has an invalid block`);
    if (!tip || height! > tip.height) throw bad(id, `transaction ${row.txid} is confirmed above the wallet's tip`);
  }
  if (!Number.isSafeInteger(row.firstSeen)) throw bad(id, `transaction ${row.txid} has no first-seen time`);
  if (row.replaceable !== null && typeof row.replaceable !== 'boolean') throw bad(id, `transaction ${row.txid} has an invalid replaceable flag`);
  const block = row.status === 'confirmed' ? blockOf(blocks, row) : null;
  const state = { status: row.status, block, firstSeen: row.firstSeen, replaceable: row.replaceable };
  if (held && held.txid === row.txid && isHexOfBinary(row.hex, held.raw)) return { txid: held.txid, body: bodyOfHeld(held), ...state };
  let bytes;
  let parsed;
  try {
    bytes = bytesOfCheckedHex(row.hex);
    parsed = parseTransactionWithTxid(bytes);
  } catch {
    throw bad(id, `transaction ${row.txid} does not parse`);
  }
  if (parsed.txid !== row.txid) throw bad(id, `transaction ${row.txid} hex has another txid`);
  return { txid: row.txid, body: bodyOf(parsed.tx, bytes), ...state };
}

function blockOf(blocks: BlocksSeen, row: StoredTransaction): BlockInfo {
  const seen = blocks.get(row.blockHash!);
  if (seen?.height === row.blockHeight && seen.time === row.blockTime) return seen;
  const block = { height: row.blockHeight!, hash: row.blockHash!, time: row.blockTime! };
  blocks.set(block.hash, block);
  return block;
}

/** The rows a wallet's store wrote after a revision the state was loaded at, and the transactions it removed since. */
export interface StoredChanges extends StoredWalletRows {
  removedTransactions: string[];
}

/** The same with its transactions already parsed (`parseStoredTransactions`, against the changes' tip). */
export interface ParsedChanges extends Omit<StoredChanges, 'transactions'> {
  parsedTransactions: readonly ParsedStoredTransaction[];
}

/** What `applyStoredChanges` changed, for whoever keeps lists derived from the state. */
export interface AppliedChanges {
  /** Transactions added, rewritten or removed, with the version the state held before (undefined: new). */
  replaced: Map<string, TrackedTx | undefined>;
  /** Other transactions found to pay scripts the wallet watches only now. */
  newlyPaying: Set<string>;
  previousTip: BlockRef | null;
}

/**
 * Brings a wallet loaded from stored rows up to date with the rows written since (in place): the same
 * state `addWallet` would build from all of today's rows, at the cost of what changed. Every row is
 * checked before anything changes, so a bad row leaves the state as it was.
 */
export function applyStoredChanges(state: EngineState, walletId: string, changes: StoredChanges | ParsedChanges): AppliedChanges {
  const wallet = state.wallets.get(walletId);
  if (!wallet) throw new EngineError('unknown_wallet', `Unknown wallet ${walletId}`);
  checkSync(walletId, changes.sync);
  if (changes.lastRevealedReceive !== undefined && !isRevealIndex(changes.lastRevealedReceive)) throw bad(walletId, 'invalid last revealed receive index');
  const tip = changes.sync.tip ? { ...changes.sync.tip } : null;
  const parsed = 'parsedTransactions' in changes ? changes.parsedTransactions : parseStoredTransactions(walletId, tip, changes.transactions);
  const addresses = [...changes.addresses].sort((a, b) => a.branch - b.branch || a.index - b.index);
  const next: [number, number] = [...wallet.derived];
  for (const row of addresses) {
    checkAddressRow(walletId, row);
    if (row.branch !== 0 && row.branch !== 1) throw bad(walletId, 'address branch must be 0 or 1');
    if (row.index < next[row.branch]) {
      // Derived here already (ahead of the store, for a revealed address): it must be the same script.
      const owner = ownerOf(wallet, row.script);
      if (owner?.branch !== row.branch || owner.index !== row.index) throw bad(walletId, `address ${row.branch}/${row.index} differs from the one derived`);
    } else if (row.index === next[row.branch]) next[row.branch]++;
    else throw bad(walletId, `address indexes of branch ${row.branch} are not contiguous`);
  }

  const previousTip = wallet.tip;
  wallet.tip = tip;
  wallet.lastUsed = [changes.sync.lastUsedReceive, changes.sync.lastUsedChange];
  if (changes.lastRevealedReceive !== undefined && changes.lastRevealedReceive > wallet.lastRevealedReceive) wallet.lastRevealedReceive = changes.lastRevealedReceive;
  const scriptsBefore = wallet.scripts.size;
  const watchedNow = new Set<string>();
  for (const row of addresses) {
    if (row.index < wallet.derived[row.branch]) continue;
    addScript(state, wallet, { branch: row.branch, index: row.index }, row.script);
    wallet.derived[row.branch] = row.index + 1;
    watchedNow.add(row.script);
  }
  const recorder = new ChangeRecorder();
  fillGap(state, wallet, 0, recorder);
  fillGap(state, wallet, 1, recorder);
  for (const script of recorder.takeDerived()) watchedNow.add(script);

  const replaced = new Map<string, TrackedTx | undefined>();
  for (const txid of changes.removedTransactions) {
    const previous = wallet.txs.get(txid);
    if (!previous) continue;
    replaced.set(txid, previous);
    deleteTx(state, wallet, txid);
  }
  for (const tx of parsed) {
    replaced.set(tx.txid, wallet.txs.get(tx.txid));
    deleteTx(state, wallet, tx.txid);
    insertTx(state, wallet, tx);
  }
  const newlyPaying = new Set<string>();
  if (wallet.scripts.size > scriptsBefore) {
    // A transaction already held may pay a script watched only now: loading all rows would count that output.
    for (const t of wallet.txs.values()) {
      if (replaced.has(t.txid)) continue;
      for (const output of t.tx.outputs) {
        if (output.owner || !watchedNow.has(output.script)) continue;
        output.owner = ownerOf(wallet, output.script) ?? null;
        if (output.owner) newlyPaying.add(t.txid);
      }
    }
  }
  return { replaced, newlyPaying, previousTip };
}

export { syncRow };
