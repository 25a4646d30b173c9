/**
 * BIP32 extended public keys: parsing (xpub/tpub and the SLIP-132 forms ypub, zpub, Ypub, Zpub,
 * upub, vpub, Upub, Vpub), validation as BIP32 test vector 5 requires, and serialisation.
 * Private extended keys are refused: the service holds public keys only.
 */
import { createBase58check } from '@scure/base';
import { sha256 } from '@noble/hashes/sha2.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { concatBytes, toHex } from '../bytes.js';
import { KeyError } from '../errors.js';
import { NETWORKS, type Network, type XpubKind } from '../network.js';
import { hash160 } from '../script-type.js';
import { PRIVATE_KEY_VERSIONS } from './private-key.js';

const base58check = createBase58check(sha256);

export interface ExtendedPublicKey {
  /** SLIP-132 name of the version it was written with (`xpub`, `zpub`, `tpub`, ...). */
  readonly kind: XpubKind;
  readonly depth: number;
  /** First four bytes of the parent's hash160, as a 32-bit number. */
  readonly parentFingerprint: number;
  readonly childNumber: number;
  readonly chainCode: Uint8Array;
  /** Compressed (33-byte) public key. */
  readonly publicKey: Uint8Array;
}

const u32be = (b: Uint8Array, o: number) => ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;

function kindOfVersion(version: number, network: Network): XpubKind | undefined {
  for (const [kind, v] of Object.entries(network.xpubVersions)) if (v === version) return kind as XpubKind;
  return undefined;
}

/**
 * Points of compressed keys decompressed lately (a square root each, the costliest step of parsing a key): a
 * wallet's receive and change descriptors name the same keys, and deriving from a key decompresses it again.
 */
const decompressed = new Map<string, { x: bigint; y: bigint }>();
const DECOMPRESSED_KEPT = 1024;

/** The point a compressed key encodes (affine), or undefined when it encodes none. */
export function compressedPoint(key: Uint8Array): { x: bigint; y: bigint } | undefined {
  if (key.length !== 33 || (key[0] !== 2 && key[0] !== 3)) return undefined;
  const hex = toHex(key);
  let point = decompressed.get(hex);
  if (point) return point;
  try {
    point = secp256k1.Point.fromBytes(key).toAffine();
  } catch {
    return undefined;
  }
  if (decompressed.size >= DECOMPRESSED_KEPT) decompressed.clear();
  decompressed.set(hex, Object.freeze(point));
  return point;
}

/** True when the compressed key encodes a point on the curve. */
export function isValidCompressedPoint(key: Uint8Array): boolean {
  return compressedPoint(key) !== undefined;
}

/**
 * Parses an extended public key of `network`. Throws KeyError: `wrong_network` for a key of
 * another network, `private_key` for an extended private key, `invalid_key` for anything else.
 */
export function parseExtendedPublicKey(text: string, network: Network): ExtendedPublicKey {
  if (typeof text !== 'string' || text.length < 100 || text.length > 120) {
    throw new KeyError('invalid_key', 'Invalid extended public key: wrong length');
  }
  let raw: Uint8Array;
  try {
    raw = base58check.decode(text);
  } catch {
    throw new KeyError('invalid_key', 'Invalid extended public key: bad base58 checksum or characters');
  }
  if (raw.length !== 78) throw new KeyError('invalid_key', 'Invalid extended public key: wrong payload length');
  const version = u32be(raw, 0);
  if (PRIVATE_KEY_VERSIONS.has(version)) {
    throw new KeyError('private_key', 'Extended private keys are not accepted: give the extended public key');
  }
  const kind = kindOfVersion(version, network);
  if (!kind) {
    const other = Object.values(NETWORKS).find((n) => kindOfVersion(version, n));
    if (other) throw new KeyError('wrong_network', `Extended public key is not for the ${network.name} network`);
    throw new KeyError('invalid_key', 'Invalid extended public key: unknown version');
  }
  const depth = raw[4]!;
  const parentFingerprint = u32be(raw, 5);
  const childNumber = u32be(raw, 9);
  if (depth === 0 && (parentFingerprint !== 0 || childNumber !== 0)) {
    throw new KeyError('invalid_key', 'Invalid extended public key: zero depth with a parent fingerprint or index');
  }
  const publicKey = raw.slice(45, 78);
  if (!isValidCompressedPoint(publicKey)) {
    throw new KeyError('invalid_key', 'Invalid extended public key: not a valid public key');
  }
  return { kind, depth, parentFingerprint, childNumber, chainCode: raw.slice(13, 45), publicKey };
}

/** Serialises with the network's plain BIP32 version (xpub/tpub) unless another SLIP-132 kind is asked for. */
export function encodeExtendedPublicKey(key: ExtendedPublicKey, network: Network, kind?: XpubKind): string {
  const version = kind ? network.xpubVersions[kind] : network.bip32.public;
  if (version === undefined) throw new KeyError('wrong_network', `No ${kind} keys on the ${network.name} network`);
  const head = new Uint8Array(13);
  const view = new DataView(head.buffer);
  view.setUint32(0, version);
  head[4] = key.depth;
  view.setUint32(5, key.parentFingerprint);
  view.setUint32(9, key.childNumber);
  return base58check.encode(concatBytes(head, key.chainCode, key.publicKey));
}

/** The key's own fingerprint (first four bytes of hash160 of its public key), as 8 hex digits. */
export const keyFingerprint = (publicKey: Uint8Array): string => toHex(hash160(publicKey).subarray(0, 4));
