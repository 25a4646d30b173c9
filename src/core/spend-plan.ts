/**
 * Spend plans: every way an output can be spent, as data. A script kind (see `script-kinds/`) or a
 * miniscript analysis produces one; size estimates, coin selection, PSBT building, signature
 * counting and finalization read it instead of asking which shape the output has.
 *
 * A plan lists spending paths. Each path says which keys must sign (a threshold structure over
 * key indexes), the largest scriptSig and witness it can need, and the nSequence / nLockTime it
 * needs. Two levels share these types:
 * - a descriptor's plan (`SpendPlan`): key indexes point into the descriptor's keys, in the
 *   order the descriptor text lists them; good for sizes, fees and signature thresholds;
 * - an output's plan (`OutputSpendPlan`): the keys are the concrete public keys of one output
 *   (read from its scripts), and each path can build its final scriptSig and witness.
 */

/** Position of a key in the plan's key list. */
export type KeyIndex = number;

/**
 * Who must sign: at least `k` of the parts, each a key or a nested threshold. One key is
 * `{ k: 1, of: [i] }`; k-of-n multisig `{ k, of: [0..n-1] }`; `and_v(v:pk(A),pk(B))` is
 * `{ k: 2, of: [A, B] }`; `thresh(2, pk(A), s:pk(B), s:pk(C))` is `{ k: 2, of: [A, B, C] }`.
 * Parts that need no signature (hash preimages, timelocks) are not listed: timelocks live on the
 * path, and a path that needs something besides signatures says so in `needs`.
 */
export interface SignerThreshold {
  readonly k: number;
  readonly of: readonly (KeyIndex | SignerThreshold)[];
}

/** ECDSA (legacy and segwit v0 scripts) or BIP340 Schnorr (taproot key path and tapscript). */
export type SignatureScheme = 'ecdsa' | 'schnorr';

/**
 * The largest input a path can need once satisfied, counted as Bitcoin Core's wallet counts a
 * watch-only input: ECDSA signatures 72 bytes with the sighash byte, Schnorr 64 (default sighash;
 * a path that must use another sighash type counts 65), compressed keys 33.
 */
export interface SatisfactionSize {
  /** Bytes of the scriptSig, without its own length prefix (0 for native segwit). */
  readonly scriptSig: number;
  /**
   * Length of each witness stack item, bottom first, everything included: empty items (the
   * CHECKMULTISIG dummy, a dissatisfied branch), signatures, keys, preimages, the witness script,
   * a taproot leaf script and its control block. Empty for a legacy input.
   */
  readonly witness: readonly number[];
}

/** One way to spend the output. */
export interface SpendPath {
  /** Short, stable description: 'key' (single key or taproot key path), 'multi', or a leaf's miniscript. */
  readonly name: string;
  readonly signers: SignerThreshold;
  readonly scheme: SignatureScheme;
  readonly size: SatisfactionSize;
  /**
   * The nSequence this path needs on its input (BIP68, what `older(n)` asks: the raw value n);
   * absent when any sequence will do.
   */
  readonly sequence?: number;
  /**
   * The nLockTime this path needs on the transaction (what `after(n)` asks: below 500,000,000 a
   * block height, else a Unix time); absent when none.
   */
  readonly lockTime?: number;
  /** What besides signatures and timelocks the satisfaction needs (e.g. 'sha256 preimage'); absent when nothing. */
  readonly needs?: readonly string[];
}

export interface SpendPlan {
  /** True when the output is spent with witness data (a transaction spending it carries the segwit marker). */
  readonly segwit: boolean;
  /** How many keys the paths index into. */
  readonly keyCount: number;
  /** The ways to spend, the one a wallet normally takes first (e.g. the taproot key path, the no-timelock branch). */
  readonly paths: readonly SpendPath[];
}

/** The final fields of a satisfied input. */
export interface FinalScripts {
  readonly scriptSig: Uint8Array;
  readonly witness: readonly Uint8Array[];
}

/** Signatures collected for an input, asked for by key index of the output's plan. */
export type SignatureOf = (key: KeyIndex) => Uint8Array | undefined;

/** A path of one concrete output: it can build the final scriptSig and witness from signatures. */
export interface OutputSpendPath extends SpendPath {
  /** For a tapscript path: the leaf hash its signatures commit to (PSBT_IN_TAP_SCRIPT_SIG is keyed by it). */
  readonly tapLeafHash?: Uint8Array;
  /**
   * The final fields from the signatures available, or the reason they are not enough. Chooses
   * among the signatures as Bitcoin Core does (for multisig: the first k in script key order).
   */
  finalize(signatureOf: SignatureOf): FinalScripts | string;
}

export interface OutputSpendPlan extends SpendPlan {
  /** The public keys the paths index into: 33-byte compressed (or 65-byte), or 32-byte x-only for taproot. */
  readonly keys: readonly Uint8Array[];
  readonly paths: readonly OutputSpendPath[];
}

/** A single key's threshold. */
export const oneKey = (key: KeyIndex): SignerThreshold => ({ k: 1, of: [key] });

/** k of the keys 0..n-1. */
export const kOfN = (k: number, n: number): SignerThreshold => ({ k, of: Array.from({ length: n }, (_, i) => i) });

/** Every key index a threshold structure mentions, in order, without repeats. */
export function keysOf(signers: SignerThreshold): KeyIndex[] {
  const seen = new Set<KeyIndex>();
  const walk = (t: SignerThreshold) => t.of.forEach((p) => (typeof p === 'number' ? seen.add(p) : walk(p)));
  walk(signers);
  return [...seen];
}

/** Signatures that count toward a path: how many of the keys it mentions have signed. */
export const signaturesToward = (signers: SignerThreshold, signed: (key: KeyIndex) => boolean): number =>
  keysOf(signers).filter(signed).length;

/** True when the signatures present meet the threshold structure. */
export function isSatisfied(signers: SignerThreshold, signed: (key: KeyIndex) => boolean): boolean {
  const met = signers.of.filter((p) => (typeof p === 'number' ? signed(p) : isSatisfied(p, signed))).length;
  return met >= signers.k;
}

/** Signatures needed to meet a threshold structure (k for k-of-n, 1 for a single key); a key shared by two parts counts twice. */
export function signaturesNeeded(signers: SignerThreshold): number {
  const costs = signers.of.map((p) => (typeof p === 'number' ? 1 : signaturesNeeded(p))).sort((a, b) => a - b);
  return costs.slice(0, signers.k).reduce((sum, c) => sum + c, 0);
}

/** nLockTime values from this one on are Unix times, below it block heights. */
export const LOCKTIME_THRESHOLD = 500_000_000;
const SEQUENCE_FINAL = 0xffffffff;

/**
 * The nSequence and nLockTime a transaction spending by `path` carries, given what the wallet
 * would use otherwise (e.g. RBF signalling and the tip height against fee sniping): the path's
 * nSequence replaces the default; its nLockTime wins over a default of the other unit, and the
 * later of two of the same unit is kept. A final nSequence would switch nLockTime off, so it is
 * lowered by one when the path needs a lock time.
 */
export function pathTimelocks(path: SpendPath, defaults: { readonly sequence: number; readonly lockTime: number }): { sequence: number; lockTime: number } {
  const sequence = path.sequence ?? defaults.sequence;
  if (path.lockTime === undefined) return { sequence, lockTime: defaults.lockTime };
  const sameUnit = path.lockTime < LOCKTIME_THRESHOLD === defaults.lockTime < LOCKTIME_THRESHOLD;
  return {
    sequence: sequence === SEQUENCE_FINAL ? SEQUENCE_FINAL - 1 : sequence,
    lockTime: sameUnit ? Math.max(path.lockTime, defaults.lockTime) : path.lockTime,
  };
}
