/**
 * Non-hardened BIP32 public derivation (CKDpub). A BranchNode caches what every child of one
 * parent shares (its point, and the HMAC-SHA512 state keyed with its chain code), so deriving
 * index i costs one HMAC and one point addition; ranges are derived in batches.
 */
import { hmac } from '@noble/hashes/hmac.js';
import { sha512 } from '@noble/hashes/sha2.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { fromHex, toHex } from '../bytes.js';
import { KeyError } from '../errors.js';
import { hash160 } from '../script-type.js';
import { compressedPoint, type ExtendedPublicKey } from './extended-key.js';
import { addTweaksToPoint, addTweaksToPoints, type AffinePoint } from './fixed-base.js';

const { Point } = secp256k1;
const N = Point.Fn.ORDER;
export const HARDENED = 0x80000000;
/** Largest range derived in one call, to bound memory. */
export const MAX_BATCH = 100_000;

type Hmac = ReturnType<typeof hmac.create>;

export interface BranchNode {
  readonly publicKey: Uint8Array;
  readonly chainCode: Uint8Array;
  readonly x: bigint;
  readonly y: bigint;
  readonly keyedHmac: Hmac;
}

export function branchNode(key: Pick<ExtendedPublicKey, 'publicKey' | 'chainCode'>): BranchNode {
  const { x, y } = compressedPoint(key.publicKey) ?? Point.fromBytes(key.publicKey).toAffine(); // the second throws: not a point
  return { publicKey: key.publicKey, chainCode: key.chainCode, x, y, keyedHmac: hmac.create(sha512, key.chainCode) };
}

function checkIndex(index: number): void {
  if (!Number.isInteger(index) || index < 0 || index >= HARDENED) {
    throw new KeyError('invalid_index', `Derivation index must be an integer from 0 to ${HARDENED - 1} (public derivation)`);
  }
}

/** I = HMAC-SHA512(chainCode, serP(K) || ser32(i)); returns IL as a number below n, and IR. */
function childTweak(node: BranchNode, index: number): { tweak: bigint; chainCode: Uint8Array } {
  const data = new Uint8Array(37);
  data.set(node.publicKey, 0);
  new DataView(data.buffer).setUint32(33, index);
  const mac = node.keyedHmac.clone().update(data).digest();
  const tweak = BigInt(`0x${toHex(mac.subarray(0, 32))}`);
  if (tweak >= N) throw new KeyError('invalid_key', `Derivation at index ${index} gives an invalid key (BIP32: skip this index)`);
  return { tweak, chainCode: mac.slice(32) };
}

/** SEC1 compressed encoding of an affine point. */
export function compressPoint(x: bigint, y: bigint): Uint8Array {
  const out = new Uint8Array(33);
  out[0] = y & 1n ? 3 : 2;
  out.set(fromHex(x.toString(16).padStart(64, '0')), 1);
  return out;
}

/** Affine child points of `node` for indices from..from+count-1 (all non-hardened). */
export function deriveChildPoints(node: BranchNode, from: number, count: number): AffinePoint[] {
  return deriveChildPointsOfNodes([node], from, count)[0]!;
}

/**
 * Affine child points of every node for indices from..from+count-1, per node: one batch for all of them,
 * which shares its field inversions (a multisig's keys at a few indices cost little more than one key's).
 */
export function deriveChildPointsOfNodes(nodes: readonly BranchNode[], from: number, count: number): AffinePoint[][] {
  if (!Number.isInteger(count) || count < 0 || count > MAX_BATCH) {
    throw new KeyError('invalid_index', `Count must be an integer from 0 to ${MAX_BATCH}`);
  }
  if (count === 0 || nodes.length === 0) return nodes.map(() => []);
  checkIndex(from);
  checkIndex(from + count - 1);
  const bases: AffinePoint[] = [];
  const tweaks: bigint[] = [];
  for (const node of nodes) {
    const base = { x: node.x, y: node.y };
    for (let i = 0; i < count; i++) {
      bases.push(base);
      tweaks.push(childTweak(node, from + i).tweak);
    }
  }
  const points = addTweaksToPoints(bases, tweaks);
  return nodes.map((_, k) =>
    points.slice(k * count, (k + 1) * count).map((p, i) => {
      if (!p) throw new KeyError('invalid_key', `Derivation at index ${from + i} gives the point at infinity (BIP32: skip this index)`);
      return p;
    }),
  );
}

/** Compressed child public keys of `node` for indices from..from+count-1 (all non-hardened). */
export function deriveChildPublicKeys(node: BranchNode, from: number, count: number): Uint8Array[] {
  return deriveChildPoints(node, from, count).map((p) => compressPoint(p.x, p.y));
}

/** The extended public key of child `index` (non-hardened) of `parent`. */
export function deriveChild(parent: ExtendedPublicKey, index: number): ExtendedPublicKey {
  checkIndex(index);
  const node = branchNode(parent);
  const { tweak, chainCode } = childTweak(node, index);
  const [point] = addTweaksToPoint(node.x, node.y, [tweak]);
  if (!point) throw new KeyError('invalid_key', `Derivation at index ${index} gives the point at infinity`);
  const fp = hash160(parent.publicKey);
  return {
    kind: parent.kind,
    depth: parent.depth + 1,
    parentFingerprint: ((fp[0]! << 24) | (fp[1]! << 16) | (fp[2]! << 8) | fp[3]!) >>> 0,
    childNumber: index,
    chainCode,
    publicKey: compressPoint(point.x, point.y),
  };
}

/**
 * The branch nodes of each key's descendant at its path (non-hardened steps), what a descriptor's `xpub/0/*` keys
 * derive from. Each node keeps the point its derivation gave (decoding the child's compressed key again would
 * cost a square root), and the keys take each step together, sharing its field inversion.
 */
export function branchNodesAt(items: readonly { key: ExtendedPublicKey; path: readonly number[] }[]): BranchNode[] {
  const nodes = items.map(({ key, path }) => {
    if (key.depth + path.length > 255) throw new KeyError('invalid_key', 'Derivation path is too deep');
    path.forEach(checkIndex);
    return branchNode(key);
  });
  const steps = Math.max(0, ...items.map((item) => item.path.length));
  for (let step = 0; step < steps; step++) {
    const stepping = items.flatMap((item, i) => (step < item.path.length ? [i] : []));
    const tweaks = stepping.map((i) => childTweak(nodes[i]!, items[i]!.path[step]!));
    const points = addTweaksToPoints(stepping.map((i) => ({ x: nodes[i]!.x, y: nodes[i]!.y })), tweaks.map((t) => t.tweak));
    stepping.forEach((i, k) => {
      const point = points[k];
      if (!point) throw new KeyError('invalid_key', `Derivation at index ${items[i]!.path[step]} gives the point at infinity`);
      const { chainCode } = tweaks[k]!;
      nodes[i] = { publicKey: compressPoint(point.x, point.y), chainCode, x: point.x, y: point.y, keyedHmac: hmac.create(sha512, chainCode) };
    });
  }
  return nodes;
}

/** Follows a path of non-hardened steps from `key`. */
export function derivePath(key: ExtendedPublicKey, path: readonly number[]): ExtendedPublicKey {
  if (key.depth + path.length > 255) throw new KeyError('invalid_key', 'Derivation path is too deep');
  return path.reduce(deriveChild, key);
}
