/**
 * Signature checks as Bitcoin Core's script interpreter applies them under the standard policy:
 * strict DER (BIP66), low S, defined sighash types, valid public keys; BIP340 Schnorr for taproot.
 */
import { schnorr, secp256k1 } from '@noble/curves/secp256k1.js';

const CURVE_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const HALF_ORDER = CURVE_ORDER >> 1n;

/**
 * BIP66 IsValidSignatureEncoding: `sig` is a DER signature followed by one sighash byte.
 * Format: 0x30 len 0x02 rlen r 0x02 slen s hashtype.
 */
export function isValidSignatureEncoding(sig: Uint8Array): boolean {
  if (sig.length < 9 || sig.length > 73) return false;
  if (sig[0] !== 0x30 || sig[1] !== sig.length - 3) return false;
  const lenR = sig[3]!;
  if (5 + lenR >= sig.length) return false;
  const lenS = sig[5 + lenR]!;
  if (lenR + lenS + 7 !== sig.length) return false;
  if (sig[2] !== 0x02 || lenR === 0 || sig[4]! & 0x80) return false;
  if (lenR > 1 && sig[4] === 0x00 && !(sig[5]! & 0x80)) return false;
  if (sig[lenR + 4] !== 0x02 || lenS === 0 || sig[lenR + 6]! & 0x80) return false;
  if (lenS > 1 && sig[lenR + 6] === 0x00 && !(sig[lenR + 7]! & 0x80)) return false;
  return true;
}

const toBigint = (bytes: Uint8Array): bigint => bytes.reduce((n, b) => (n << 8n) | BigInt(b), 0n);

/** r and s of a strictly encoded signature (with its sighash byte), or undefined. */
function derParts(sig: Uint8Array): { r: bigint; s: bigint } | undefined {
  if (!isValidSignatureEncoding(sig)) return undefined;
  const lenR = sig[3]!;
  const lenS = sig[5 + lenR]!;
  return { r: toBigint(sig.subarray(4, 4 + lenR)), s: toBigint(sig.subarray(6 + lenR, 6 + lenR + lenS)) };
}

/** A public key Core accepts under STRICTENC: compressed (33 bytes, 02/03) or uncompressed (65 bytes, 04), on the curve. */
export function isValidPublicKey(key: Uint8Array): boolean {
  const ok = (key.length === 33 && (key[0] === 2 || key[0] === 3)) || (key.length === 65 && key[0] === 4);
  if (!ok) return false;
  try {
    secp256k1.Point.fromBytes(key);
    return true;
  } catch {
    return false;
  }
}

export const isCompressedPublicKey = (key: Uint8Array): boolean => key.length === 33 && isValidPublicKey(key);

export type EcdsaFailure = 'bad_encoding' | 'high_s' | 'bad_sighash_type' | 'bad_pubkey' | 'invalid_signature';

/** The sighash type of an ECDSA signature (its last byte), if it is one of the six defined types. */
export function ecdsaSighashType(sig: Uint8Array): number | undefined {
  const type = sig[sig.length - 1];
  if (type === undefined) return undefined;
  const base = type & ~0x80;
  return base >= 1 && base <= 3 ? type : undefined;
}

/**
 * Checks an ECDSA signature (DER + sighash byte) over a 32-byte message hash.
 * Returns undefined when valid, else why not.
 */
export function checkEcdsaSignature(sig: Uint8Array, messageHash: Uint8Array, pubkey: Uint8Array): EcdsaFailure | undefined {
  const parts = derParts(sig);
  if (!parts) return 'bad_encoding';
  if (ecdsaSighashType(sig) === undefined) return 'bad_sighash_type';
  if (!isValidPublicKey(pubkey)) return 'bad_pubkey';
  const { r, s } = parts;
  if (r === 0n || s === 0n || r >= CURVE_ORDER || s >= CURVE_ORDER) return 'invalid_signature';
  if (s > HALF_ORDER) return 'high_s';
  const compact = new Uint8Array(64);
  compact.set(toFixed32(r), 0);
  compact.set(toFixed32(s), 32);
  try {
    return secp256k1.verify(compact, messageHash, pubkey, { prehash: false, lowS: true, format: 'compact' }) ? undefined : 'invalid_signature';
  } catch {
    return 'invalid_signature';
  }
}

function toFixed32(n: bigint): Uint8Array {
  const out = new Uint8Array(32);
  for (let i = 31; i >= 0; i--, n >>= 8n) out[i] = Number(n & 0xffn);
  return out;
}

/** BIP340 verification of a 64-byte signature over a 32-byte message with an x-only key. */
export function checkSchnorrSignature(sig64: Uint8Array, message: Uint8Array, xonlyKey: Uint8Array): boolean {
  if (sig64.length !== 64 || xonlyKey.length !== 32) return false;
  try {
    return schnorr.verify(sig64, message, xonlyKey);
  } catch {
    return false;
  }
}
