/** BIP341 script trees: leaf and branch hashes, the tweaked output key, control blocks. */
import { sha256 } from '@noble/hashes/sha2.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { concatBytes, fromHex, toHex } from '../bytes.js';
import { addTweaksToPoints, type AffinePoint } from '../keys/fixed-base.js';
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
const bigintTo32 = (v: bigint) => fromHex(v.toString(16).padStart(64, '0'));

export interface TaprootInput {
  /** x-only internal key. */
  readonly internalKey: Uint8Array;
  readonly tree: TapTree | undefined;
  readonly leafScripts: readonly Uint8Array[];
}

/** Leaf hashes, each leaf's sibling hashes up to the root, and the root. */
function treeHashes(tree: TapTree | undefined, leafScripts: readonly Uint8Array[]) {
  const leafHashes = leafScripts.map(leafHash);
  const paths: Uint8Array[][] = leafScripts.map(() => []);
  const walk = (t: TapTree): { hash: Uint8Array; leaves: number[] } => {
    if (typeof t === 'number') return { hash: leafHashes[t]!, leaves: [t] };
    const [l, r] = [walk(t[0]), walk(t[1])];
    l.leaves.forEach((i) => paths[i]!.push(r.hash));
    r.leaves.forEach((i) => paths[i]!.push(l.hash));
    return { hash: branch(l.hash, r.hash), leaves: [...l.leaves, ...r.leaves] };
  };
  return { leafHashes, paths, root: tree === undefined ? undefined : walk(tree).hash };
}

/**
 * Output keys Q = lift_x(P) + t·G with t = hashTapTweak(P || root), for many outputs at once: the
 * additions share their field inversions (keys/fixed-base), as the key-path tr() deriver does.
 */
export function taprootOutputs(inputs: readonly TaprootInput[]): TaprootOutput[] {
  const lifted = new Map<string, AffinePoint>();
  const lift = (x: Uint8Array) => {
    const key = toHex(x);
    let p = lifted.get(key);
    if (!p) {
      p = secp256k1.Point.fromBytes(Uint8Array.of(2, ...x)).toAffine();
      lifted.set(key, p);
    }
    return p;
  };
  const hashes = inputs.map((i) => treeHashes(i.tree, i.leafScripts));
  const tweaks = inputs.map((input, i) => {
    const root = hashes[i]!.root;
    const t = bytesToBigint(tapTweak(input.internalKey, ...(root ? [root] : [])));
    if (t >= secp256k1.Point.Fn.ORDER) throw new MiniscriptError('invalid_key', 'Taproot tweak out of range');
    return t;
  });
  const points = addTweaksToPoints(inputs.map((i) => lift(i.internalKey)), tweaks);
  return inputs.map((input, i) => {
    const Q = points[i];
    if (!Q) throw new MiniscriptError('invalid_key', 'Taproot output key is the point at infinity');
    const parity = Number(Q.y & 1n);
    const { leafHashes, paths } = hashes[i]!;
    const controlBlocks = paths.map((p) => concatBytes(Uint8Array.of(TAPSCRIPT_LEAF_VERSION | parity), input.internalKey, ...p));
    return { outputKey: bigintTo32(Q.x), controlBlocks, leafHashes };
  });
}

/** One output (see taprootOutputs). */
export const taprootOutput = (internalKey: Uint8Array, tree: TapTree | undefined, leafScripts: readonly Uint8Array[]): TaprootOutput =>
  taprootOutputs([{ internalKey, tree, leafScripts }])[0]!;
