/** The k-of-n CHECKMULTISIG script the multi and sortedmulti kinds share: its bytes, sizes and spend path. */
import { concatBytes } from '../bytes.js';
import { kOfN, type SatisfactionSize, type SpendPath } from '../spend-plan.js';
import { COMPRESSED_PUBKEY, ECDSA_SIGNATURE_MAX } from './sizes.js';

const OP_CHECKMULTISIG = 0xae;

/** OP_0 for 0, OP_1..OP_16, else a minimal 1-byte push (17..20 keys). */
function pushSmallInt(n: number): Uint8Array {
  if (n === 0) return Uint8Array.of(0);
  if (n <= 16) return Uint8Array.of(0x50 + n);
  return Uint8Array.of(1, n);
}

/** OP_k <key>... OP_n OP_CHECKMULTISIG. */
export function multisigScript(threshold: number, keys: readonly Uint8Array[]): Uint8Array {
  const parts: Uint8Array[] = [pushSmallInt(threshold)];
  for (const key of keys) parts.push(Uint8Array.of(key.length), key);
  parts.push(pushSmallInt(keys.length), Uint8Array.of(OP_CHECKMULTISIG));
  return concatBytes(...parts);
}

export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

/** The script of a multi (keys as given) or sortedmulti (keys in lexicographic order) expression. */
export const multisigScriptOf = (sorted: boolean, threshold: number, keys: readonly Uint8Array[]): Uint8Array =>
  multisigScript(threshold, sorted ? [...keys].sort(compareBytes) : keys);

/** Bytes of a minimal number push (multisig k and n): OP_1..OP_16 are one byte, 17..20 a 1-byte push. */
const smallNumberLength = (k: number): number => (k <= 16 ? 1 : 2);

/** Length of a k-of-n script of compressed keys. */
export const multisigScriptLength = (k: number, n: number): number =>
  smallNumberLength(k) + n * (1 + COMPRESSED_PUBKEY) + smallNumberLength(n) + 1;

/** Stack of a satisfied CHECKMULTISIG: the empty item its extra pop takes, then k signatures. */
export const multisigStack = (k: number): number[] => [0, ...Array<number>(k).fill(ECDSA_SIGNATURE_MAX)];

/** The one path of a k-of-n kind, its size laid out by the kind's envelope. */
export const multisigPath = (k: number, n: number, size: SatisfactionSize): SpendPath => ({
  name: 'multi',
  signers: kOfN(k, n),
  scheme: 'ecdsa',
  size,
});
