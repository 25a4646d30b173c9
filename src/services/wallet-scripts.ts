/**
 * A wallet's scripts, stored or derived, shared by everything in the process that loads the wallet (the sync and
 * the reads): derivation is the slow part of a load, done once per script.
 */
import { fromHex, toHex } from '../core/bytes.js';
import { NETWORKS, type NetworkName } from '../core/network.js';
import type { Branch, HexScriptDeriver, ScriptDeriver } from '../engine/index.js';
import { HeldStates } from './held-states.js';
import type { StoredWallet } from '../store/repositories.js';
import { nextTurn } from './turns.js';
import { scriptAddress } from './wallet-format.js';
import { branchDeriver, type BranchDeriver } from './miniscript-wallet.js';
import type { GapDerivation } from './gap-derivation.js';

const DERIVE_AHEAD = 32;
/** Keys derived in one step ahead of the engine (a few milliseconds): 3 scripts of a 20-key multisig, 64 of a single key. */
const DERIVE_KEYS_PER_PART = 64;
/** Time derived ahead between two turns. */
const DERIVE_TURN_MS = 5;
/** Fewer scripts than this are derived in process: a worker's answer comes later than a few scripts take here. */
const OFF_THREAD_FROM = 8;
/**
 * Parsed descriptors unused this long are dropped, parsed again on the next derivation (1-2 ms for a 2-of-3):
 * an idle wallet then holds its scripts' strings alone, not its keys, branch nodes and HMAC states (about 10 KB).
 */
const DERIVERS_IDLE_MS = 30_000;

/** A range of a branch the worker derives: done once its scripts are known (never rejects), and hurried when waited for. */
interface OffThreadRange {
  done: Promise<void>;
  hurry(): void;
}

/** An address kept with the script (hex) it encodes. */
interface KeptAddress {
  script: string;
  address: string;
}

/**
 * A wallet's scripts of both branches: those the store holds (read, never derived again) and those derived
 * since, remembered (derivation is the slow part). The descriptors are parsed only once something must be
 * derived: a wallet loaded from its stored addresses derives nothing until its gap moves.
 */
export class WalletScripts {
  /**
   * By branch and index, as hex: stored scripts as read, derived ones as encoded once. The engine holds these
   * very strings (`deriveHex`); bytes are made when asked for, not kept (a `Uint8Array` of a 34-byte script
   * costs about 225 bytes).
   */
  private readonly known: [string[], string[]] = [[], []];
  private parsed: [BranchDeriver, BranchDeriver] | undefined;
  /** Drops `parsed` once idle; refreshed at each use. */
  private idleTimer: NodeJS.Timeout | undefined;
  /** Derivations in parts under way: the derivers are not dropped under them. */
  private deriving = 0;
  /** Per branch, the range the worker is deriving (it never rejects: a failure leaves the scripts to derive here). */
  private readonly offThreadUnderway: [OffThreadRange | undefined, OffThreadRange | undefined] = [undefined, undefined];
  /** Addresses shown for derived scripts, by branch and index. */
  private readonly addresses: [Array<KeptAddress | undefined>, Array<KeptAddress | undefined>] = [[], []];
  private readonly network: NetworkName;
  private readonly descriptors: [string, string];

  /**
   * `derivers`: the wallet's descriptors already parsed (a wallet just created), else parsed on first use. `held`: the
   * states of the service holding wallets, which loads of this wallet share transactions with. `offThread`: where
   * `deriveInParts` derives a range of scripts, off the thread answering requests.
   */
  constructor(
    wallet: Pick<StoredWallet, 'receiveDescriptor' | 'changeDescriptor' | 'network'>,
    derivers?: readonly [BranchDeriver, BranchDeriver],
    readonly held?: HeldStates,
    private readonly offThread?: GapDerivation,
  ) {
    this.network = wallet.network;
    this.descriptors = [wallet.receiveDescriptor, wallet.changeDescriptor];
    if (derivers) {
      this.parsed = [derivers[0], derivers[1]];
      this.keepParsedWhileUsed();
    }
  }

  private get derivers(): [BranchDeriver, BranchDeriver] {
    if (!this.parsed) {
      const network = NETWORKS[this.network];
      this.parsed = [branchDeriver(this.descriptors[0], network), branchDeriver(this.descriptors[1], network)];
    }
    this.keepParsedWhileUsed();
    return this.parsed;
  }

  private keepParsedWhileUsed(): void {
    if (this.idleTimer) this.idleTimer.refresh();
    else (this.idleTimer = setTimeout(() => this.releaseDerivers(), DERIVERS_IDLE_MS)).unref();
  }

  /**
   * Forgets the parsed descriptors (their keys, branch nodes and HMAC states), unless a derivation in parts is
   * under way; the next derivation parses them again. The scripts known stay known.
   */
  releaseDerivers(): void {
    if (this.deriving > 0) {
      this.idleTimer?.refresh();
      return;
    }
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    this.parsed = undefined;
  }

  /** Whether the descriptors are held parsed. */
  get holdsDerivers(): boolean {
    return this.parsed !== undefined;
  }

  /**
   * Takes the scripts of stored address rows as this wallet's, so that they are not derived again. Rows extend
   * what is known only where they follow on from it (rows of indexes already known are the same scripts: the
   * store holds what derivation gave).
   */
  remember(rows: readonly { branch: number; index: number; script: string }[]): void {
    for (const branch of [0, 1] as const) {
      const known = this.known[branch];
      const ahead = rows.filter((row) => row.branch === branch && row.index >= known.length).sort((a, b) => a.index - b.index);
      for (const row of ahead) {
        if (row.index !== known.length) break; // a hole: the rest is derived when needed
        known.push(row.script);
      }
    }
  }

  /** How many scripts of the branch are known (indexes 0 .. n-1), stored or derived. */
  knownCount(branch: Branch): number {
    return this.known[branch].length;
  }

  /** The script at `branch`/`index` if known (stored or derived), as kept: never derives. */
  readonly knownScript = (branch: Branch, index: number): string | undefined => this.known[branch][index];

  /** The scripts as hex: the strings kept, which the engine then holds too. */
  readonly deriveHex: HexScriptDeriver = (branch: Branch, fromIndex: number, count: number) => {
    const known = this.known[branch];
    if (fromIndex > known.length + DERIVE_AHEAD) {
      // Far past what the wallet watches (an address listing paging ahead): derive that range alone and
      // keep nothing, rather than every script up to it (a listing at index 2^31 - 1000 would never end).
      return this.derivers[branch].deriveRange(fromIndex, count).map((output) => toHex(output.scriptPubKey));
    }
    if (known.length < fromIndex + count) {
      // Derive ahead: a batch costs a few field inversions whatever its size, and gaps grow one script at a time.
      this.append(branch, Math.max(fromIndex + count - known.length, DERIVE_AHEAD));
    }
    return known.slice(fromIndex, fromIndex + count);
  };

  /**
   * The scripts as bytes, views of one buffer made for the call: whoever keeps them (the sync's watched
   * lists) holds one buffer per call rather than one per script.
   */
  readonly derive: ScriptDeriver = (branch: Branch, fromIndex: number, count: number) => {
    const hex = this.deriveHex(branch, fromIndex, count);
    const bytes = fromHex(hex.join(''));
    const scripts: Uint8Array[] = [];
    let offset = 0;
    for (const script of hex) {
      const end = offset + script.length / 2;
      scripts.push(bytes.subarray(offset, end));
      offset = end;
    }
    return scripts;
  };

  /** Derives the branch's next `count` scripts and keeps them. */
  private append(branch: Branch, count: number): void {
    const known = this.known[branch];
    for (const output of this.derivers[branch].deriveRange(known.length, count)) known.push(toHex(output.scriptPubKey));
  }

  /** The script at (branch, index): known, or derived alone (kept when it follows on from what is known). */
  scriptAt(branch: Branch, index: number): Uint8Array {
    const known = this.known[branch];
    const script = known[index];
    if (script !== undefined) return fromHex(script);
    const [derived] = this.derivers[branch].deriveRange(index, 1);
    if (index === known.length) known.push(toHex(derived!.scriptPubKey));
    return derived!.scriptPubKey;
  }

  /**
   * Derives the branch's scripts up to index `count - 1` ahead of the engine, giving way every few
   * milliseconds (ADR 0010): the engine, which derives in one step, then finds them derived. A 20-key
   * multisig wallet with a gap limit of 200 takes most of a second to derive.
   */
  async deriveInParts(branch: Branch, count: number): Promise<void> {
    const known = this.known[branch];
    if (known.length >= count) return;
    this.prepare(branch, count, false); // nothing new asked for while a range is under way: this waits for it instead
    const underway = this.offThreadUnderway[branch];
    underway?.hurry(); // asked for ahead, and now waited for
    await underway?.done;
    if (known.length >= count) return;
    const part = Math.max(1, Math.floor(DERIVE_KEYS_PER_PART / this.derivers[branch].descriptor.keys.length));
    let since = performance.now();
    this.deriving++;
    try {
      while (known.length < count) {
        if (performance.now() - since >= DERIVE_TURN_MS) {
          await nextTurn();
          since = performance.now();
          continue; // another reader may have derived meanwhile
        }
        this.append(branch, Math.min(part, count - known.length));
      }
    } finally {
      this.deriving--;
    }
  }

  /**
   * Asks the worker for the branch's scripts up to index `count - 1` now, without waiting for them: a load of many
   * wallets asks for their gaps ahead, so that the worker derives the next wallets' while this thread loads the one
   * before. `ahead`: after every range someone waits for (until `deriveInParts` waits for it). Does nothing without
   * a worker, for a few scripts, or while the branch's range is under way.
   */
  prepare(branch: Branch, count: number, ahead = true): void {
    if (!this.offThread || this.offThreadUnderway[branch] || count - this.known[branch].length < OFF_THREAD_FROM) return;
    const from = this.known[branch].length;
    const [descriptor, network] = [this.descriptors[branch], this.network];
    const job = ahead ? this.offThread.deriveAhead(descriptor, network, from, count - from) : { scripts: this.offThread.derive(descriptor, network, from, count - from), hurry: () => {} };
    const done = this.takeFromWorker(branch, from, job.scripts).finally(() => (this.offThreadUnderway[branch] = undefined));
    this.offThreadUnderway[branch] = { done, hurry: job.hurry };
  }

  /** The worker's scripts of the branch from index `from`; on its failure nothing, and the caller derives them. */
  private async takeFromWorker(branch: Branch, from: number, answer: Promise<string[]>): Promise<void> {
    const known = this.known[branch];
    let scripts: string[];
    try {
      scripts = await answer;
    } catch {
      return;
    }
    // Another reader may have derived some meanwhile: the same scripts, so only those past them are taken.
    for (let i = known.length - from; i < scripts.length; i++) known.push(scripts[i]!);
  }

  /**
   * `row` (this wallet's) holding these scripts' descriptor strings instead of its own equal copies: a row kept
   * as long as the scripts (the sync's) then holds no second copy of them (about 400 bytes each, read from the
   * store apart from the copies the creation parsed).
   */
  sharingDescriptors<T extends Pick<StoredWallet, 'receiveDescriptor' | 'changeDescriptor'>>(row: T): T {
    const [receiveDescriptor, changeDescriptor] = this.descriptors;
    if (row.receiveDescriptor !== receiveDescriptor || row.changeDescriptor !== changeDescriptor) return row;
    return { ...row, receiveDescriptor, changeDescriptor };
  }

  deriver(branch: Branch): BranchDeriver {
    return this.derivers[branch];
  }

  /**
   * The address of `script` (hex), the wallet's script at (branch, index): encoded once per script, as coin
   * lists show every coin's address on every read (a tenth of an unpaged list of 100,000 coins' time).
   */
  addressOf(branch: Branch, index: number, script: string): string {
    const kept = this.addresses[branch][index];
    if (kept?.script === script) return kept.address;
    const address = scriptAddress(script, this.network);
    // Only indices the wallet derived: one far ahead (a listing paging ahead) is not kept.
    if (index < this.known[branch].length) this.addresses[branch][index] = { script, address };
    return address;
  }
}

/** Derivers shared by everything in the process, per wallet id. */
export class WalletScriptsCache {
  private readonly byWallet = new Map<string, WalletScripts>();
  /** The service's states holding wallets (the sync's and the reads'), all loaded through these scripts. */
  private readonly held = new HeldStates();

  /** `offThread`: the worker deriving new wallets' gaps (none: derived in process). */
  constructor(private readonly offThread?: GapDerivation) {}

  get(wallet: StoredWallet): WalletScripts {
    let scripts = this.byWallet.get(wallet.id);
    if (!scripts) this.byWallet.set(wallet.id, (scripts = new WalletScripts(wallet, undefined, this.held, this.offThread)));
    return scripts;
  }

  /** Takes the derivers of a wallet just created, parsed when its request was checked, unless it has some already. */
  adopt(wallet: StoredWallet, derivers: readonly [BranchDeriver, BranchDeriver]): void {
    if (!this.byWallet.has(wallet.id)) this.byWallet.set(wallet.id, new WalletScripts(wallet, derivers, this.held, this.offThread));
  }

  forget(walletId: string): void {
    this.byWallet.delete(walletId);
  }
}
