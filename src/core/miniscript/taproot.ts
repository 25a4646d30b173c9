/** BIP341 script trees: leaf and branch hashes, the tweaked output key, control blocks. */
import { sha256 } from '@noble/hashes/sha2.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { concatBytes } from '../bytes.js';
import { encodeVarint } from '../tx.js';
import { MiniscriptError } from './errors.js';

const tagged = (tag: string) => {
  const t = sha256(new TextEncoder().encode(tag));
  return (...parts: Uint8Array[]) => sha256(concatBytes(t, t, ...parts));
};
const tapLeaf = tagged('TapLeaf');
const tapBranch = tagged('TapBranch');
const tapTweak = tagged('TapTweak');
/** BIP342 tapscript leaf version. */
export const TAPSCRIPT_LEAF_VERSION = 0xc0;

export const leafHash = (script: Uint8Array): Uint8Array => tapLeaf(Uint8Array.of(TAPSCRIPT_LEAF_VERSION), encodeVarint(script.length), script);

function compare(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < 32; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}
const branch = (a: Uint8Array, b: Uint8Array) => (compare(a, b) <= 0 ? tapBranch(a, b) : tapBranch(b, a));

/** A tree as nested pairs of leaf indexes (in text order). */
export type TapTree = number | readonly [TapTree, TapTree];

export interface TaprootOutput {
  readonly outputKey: Uint8Array;
  /** Control block of each leaf, in leaf order. */
  readonly controlBlocks: readonly Uint8Array[];
  readonly leafHashes: readonly Uint8Array[];
}

const bytesToBigint = (b: Uint8Array) => b.reduce((acc, v) => (acc << 8n) | BigInt(v), 0n);

/** Output key Q = P + t·G with t = hashTapTweak(P || root), and each leaf's path to the root. */
export function taprootOutput(internalKey: Uint8Array, tree: TapTree | undefined, leafScripts: readonly Uint8Array[]): TaprootOutput {
  const leafHashes = leafScripts.map(leafHash);
  const paths: Uint8Array[][] = leafScripts.map(() => []);
  const walk = (t: TapTree): { hash: Uint8Array; leaves: number[] } => {
    if (typeof t === 'number') return { hash: leafHashes[t]!, leaves: [t] };
    const [l, r] = [walk(t[0]), walk(t[1])];
    l.leaves.forEach((i) => paths[i]!.push(r.hash));
    r.leaves.forEach((i) => paths[i]!.push(l.hash));
    return { hash: branch(l.hash, r.hash), leaves: [...l.leaves, ...r.leaves] };
  };
  const root = tree === undefined ? undefined : walk(tree).hash;
  const tweak = bytesToBigint(tapTweak(internalKey, ...(root ? [root] : [])));
  if (tweak >= secp256k1.Point.Fn.ORDER) throw new MiniscriptError('invalid_key', 'Taproot tweak out of range');
  const P = secp256k1.Point.fromBytes(Uint8Array.of(2, ...internalKey));
  const Q = P.add(secp256k1.Point.BASE.multiply(tweak)).toAffine();
  const outputKey = secp256k1.Point.fromAffine(Q).toBytes(true).subarray(1);
  const parity = Number(Q.y & 1n);
  const controlBlocks = paths.map((p) => concatBytes(Uint8Array.of(TAPSCRIPT_LEAF_VERSION | parity), internalKey, ...p));
  return { outputKey, controlBlocks, leafHashes };
}
