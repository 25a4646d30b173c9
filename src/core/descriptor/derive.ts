/**
 * Scripts, addresses and key origins of a descriptor at an index. A DescriptorDeriver caches,
 * per key, the branch node (for `[fp/84h/1h/0h]xpub/0/*`: the xpub's child 0), so each index
 * costs one child derivation per key; ranges are derived in batches.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { encodeAddress, witnessScript } from '../address.js';
import { concatBytes } from '../bytes.js';
import { branchNodesAt, compressPoint, deriveChildPointsOfNodes, HARDENED, MAX_BATCH, type BranchNode } from '../keys/derive.js';
import { keyFingerprint } from '../keys/extended-key.js';
import { formatPath } from '../keys/path.js';
import { addTweaksToPoints, type AffinePoint } from '../keys/fixed-base.js';
import { DescriptorError } from './errors.js';
import { scriptKind, type ScriptKind } from '../script-kinds/index.js';
import { multipathCount, type Descriptor } from './descriptor.js';
import type { KeyExpression } from './key-expression.js';

export interface DerivedKey {
  /** 33-byte compressed or 65-byte uncompressed key (for taproot: the 32-byte x-only key). */
  readonly publicKey: Uint8Array;
  /** Master fingerprint of the key origin (8 hex digits). */
  readonly fingerprint: string;
  /** Full path from that master, as child numbers and as `m/84h/1h/0h/0/5`. */
  readonly path: readonly number[];
  readonly pathText: string;
}

export interface DerivedOutput {
  readonly index: number;
  readonly scriptPubKey: Uint8Array;
  readonly address: string;
  /** P2SH redeem script (sh-wpkh, sh-wsh-*, sh-*). */
  readonly redeemScript?: Uint8Array;
  /** P2WSH witness script (wsh-*, sh-wsh-*). */
  readonly witnessScript?: Uint8Array;
  /** Every key at this index, in descriptor order. */
  readonly keys: readonly DerivedKey[];
  /** Taproot key path: tweaked x-only output key, x-only internal key and its origin. */
  readonly taproot?: { readonly outputKey: Uint8Array; readonly internalKey: Uint8Array };
}

export { multisigScript } from '../script-kinds/multisig.js';

const TAP_TWEAK_TAG = sha256(new TextEncoder().encode('TapTweak'));
const taggedTapTweak = (x: Uint8Array) => sha256(concatBytes(TAP_TWEAK_TAG, TAP_TWEAK_TAG, x));
const bytesToBigint = (b: Uint8Array) => b.reduce((acc, v) => (acc << 8n) | BigInt(v), 0n);
function bigintTo32(v: bigint): Uint8Array {
  const out = new Uint8Array(32);
  for (let i = 31; i >= 0; i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

/** Per-key state: either a fixed key, or a cached branch node whose children are the indices. */
type KeySource =
  | { readonly fixed: Uint8Array; readonly fingerprint: string; readonly path: readonly number[] }
  | { readonly node: BranchNode; readonly fingerprint: string; readonly path: readonly number[] };

/** Each key's source: the extended keys' branch nodes derived together (one field inversion per step for all). */
function keySources(keys: readonly KeyExpression[]): KeySource[] {
  const extended = keys.flatMap((key) => {
    if (key.kind === 'pubkey') return [];
    const steps = key.steps.map((s) => {
      if (typeof s !== 'number') throw new DescriptorError('multipath', 'Split a multipath <a;b> descriptor before deriving from it');
      return s;
    });
    return [{ key: key.xpub, path: steps }];
  });
  const nodes = branchNodesAt(extended);
  let next = 0;
  return keys.map((key) => {
    if (key.kind === 'pubkey') {
      const fingerprint = key.origin?.fingerprint ?? keyFingerprint(key.publicKey.length === 32 ? Uint8Array.of(2, ...key.publicKey) : key.publicKey);
      return { fixed: key.publicKey, fingerprint, path: key.origin?.path ?? [] };
    }
    const { path: steps } = extended[next]!;
    const node = nodes[next++]!;
    const fingerprint = key.origin?.fingerprint ?? keyFingerprint(key.xpub.publicKey);
    const path = [...(key.origin?.path ?? []), ...steps];
    return key.wildcard ? { node, fingerprint, path } : { fixed: node.publicKey, fingerprint, path };
  });
}

/** Indices derived together by derive(index), and how many such blocks are kept. */
const BLOCK = 16;
const MAX_BLOCKS = 8;

export class DescriptorDeriver {
  private readonly sources: readonly KeySource[];
  private readonly blocks = new Map<number, DerivedOutput[]>();
  private readonly kind: ScriptKind;

  constructor(readonly descriptor: Descriptor) {
    if (multipathCount(descriptor) > 1) {
      throw new DescriptorError('multipath', 'Split a multipath <a;b> descriptor into its branches before deriving addresses');
    }
    this.sources = keySources(descriptor.keys);
    this.kind = scriptKind(descriptor.type);
  }

  /**
   * The output at one index. Derives (and keeps a few of) aligned blocks of BLOCK indices, because
   * a batch shares its field inversions: index-by-index callers (gap-limit scans) stay fast.
   */
  derive(index: number): DerivedOutput {
    if (!Number.isInteger(index) || index < 0 || index >= HARDENED) {
      throw new DescriptorError('invalid_index', `Index must be an integer from 0 to ${HARDENED - 1}`);
    }
    const start = index - (index % BLOCK);
    let block = this.blocks.get(start);
    if (!block) {
      block = this.deriveRange(start, Math.min(BLOCK, HARDENED - start));
      this.blocks.set(start, block);
      if (this.blocks.size > MAX_BLOCKS) this.blocks.delete(this.blocks.keys().next().value!);
    }
    return block[index - start]!;
  }

  /** Outputs for indices from..from+count-1. */
  deriveRange(from: number, count: number): DerivedOutput[] {
    if (!Number.isInteger(from) || from < 0 || !Number.isInteger(count) || count < 0 || count > MAX_BATCH || from + count > HARDENED) {
      throw new DescriptorError('invalid_index', `Index range must lie within 0..${HARDENED - 1}, at most ${MAX_BATCH} at a time`);
    }
    // Every key's children in one batch: a multisig's keys share the batch's field inversions.
    const nodes = this.sources.flatMap((source) => ('node' in source ? [source.node] : []));
    const derivedOfNodes = deriveChildPointsOfNodes(nodes, from, count);
    let next = 0;
    const points: (AffinePoint[] | undefined)[] = this.sources.map((source) => ('node' in source ? derivedOfNodes[next++] : undefined));
    const perKey: DerivedKey[][] = this.sources.map((source, k) => {
      const derived = points[k];
      return Array.from({ length: count }, (_, i) => {
        const publicKey = 'fixed' in source ? source.fixed : compressPoint(derived![i]!.x, derived![i]!.y);
        const path = 'fixed' in source ? source.path : [...source.path, from + i];
        return { publicKey, fingerprint: source.fingerprint, path, pathText: formatPath(path) };
      });
    });
    const byIndex = Array.from({ length: count }, (_, i) => perKey.map((keys) => keys[i]!));
    if (!this.kind.outputScripts) return this.taprootOutputs(from, byIndex, points[0]);
    return byIndex.map((keys, i) => this.output(from + i, keys));
  }

  /** Just the addresses of a range (what a wallet scan needs). */
  addresses(from: number, count: number): string[] {
    return this.deriveRange(from, count).map((o) => o.address);
  }

  private output(index: number, keys: DerivedKey[]): DerivedOutput {
    const { threshold, network } = this.descriptor;
    const { scriptPubKey, redeemScript, witnessScript } = this.kind.outputScripts!(threshold, keys.map((k) => k.publicKey));
    return {
      index,
      scriptPubKey,
      address: encodeAddress(scriptPubKey, network)!,
      ...(redeemScript ? { redeemScript } : {}),
      ...(witnessScript ? { witnessScript } : {}),
      keys,
    };
  }

  /** BIP86 key path: Q = lift_x(P) + int(hashTapTweak(P))·G, batched over the range. */
  private taprootOutputs(from: number, byIndex: DerivedKey[][], points: AffinePoint[] | undefined): DerivedOutput[] {
    const internal = byIndex.map((keys) => {
      const key = keys[0]!.publicKey;
      return key.length === 32 ? key : key.subarray(1, 33);
    });
    // lift_x: the point with this x and an even y (known from derivation, so no square root per index).
    const P = secp256k1.Point.Fp.ORDER;
    const fixed = points ? undefined : secp256k1.Point.fromBytes(Uint8Array.of(2, ...internal[0]!)).toAffine();
    const bases = internal.map((_, i) => {
      const p = points ? points[i]! : fixed!;
      return p.y & 1n ? { x: p.x, y: P - p.y } : p;
    });
    const tweaks = internal.map((x) => {
      const t = bytesToBigint(taggedTapTweak(x));
      if (t >= secp256k1.Point.Fn.ORDER) throw new DescriptorError('invalid_key', 'Taproot tweak out of range');
      return t;
    });
    const outputs = addTweaksToPoints(bases, tweaks);
    return byIndex.map((keys, i) => {
      const point = outputs[i];
      if (!point) throw new DescriptorError('invalid_key', 'Taproot output key is the point at infinity');
      const outputKey = bigintTo32(point.x);
      const internalKey = internal[i]!;
      const scriptPubKey = witnessScript(1, outputKey);
      const origin = keys[0]!;
      return {
        index: from + i,
        scriptPubKey,
        address: encodeAddress(scriptPubKey, this.descriptor.network)!,
        keys: [{ ...origin, publicKey: internalKey }],
        taproot: { outputKey, internalKey },
      };
    });
  }
}
