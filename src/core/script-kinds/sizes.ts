/**
 * Worst-case sizes of what a satisfaction pushes, as Bitcoin Core's wallet counts a watch-only
 * input, and how a script's stack is laid out in the scriptSig or the witness.
 */
import type { SatisfactionSize } from '../spend-plan.js';

/** A DER ECDSA signature at its largest, with the sighash byte. */
export const ECDSA_SIGNATURE_MAX = 72;
/** A BIP340 signature with the default sighash (no sighash byte). */
export const SCHNORR_SIGNATURE = 64;
export const COMPRESSED_PUBKEY = 33;
/** The P2SH redeem scripts that wrap witness programs: 0014{20 bytes} and 0020{32 bytes}. */
export const NESTED_P2WPKH = 22;
export const NESTED_P2WSH = 34;

/** Bytes of a minimal push of `length` bytes of data (opcode or OP_PUSHDATAn plus the data). */
export function pushLength(length: number): number {
  if (length < 0x4c) return 1 + length;
  if (length <= 0xff) return 2 + length;
  if (length <= 0xffff) return 3 + length;
  return 5 + length;
}

/** A legacy input: the stack pushed in the scriptSig, then the redeem script for P2SH. */
export function legacySize(stack: readonly number[], redeemScript?: number): SatisfactionSize {
  const pushes = stack.reduce((sum, len) => sum + pushLength(len), 0);
  return { scriptSig: pushes + (redeemScript === undefined ? 0 : pushLength(redeemScript)), witness: [] };
}

/** A segwit input: the stack in the witness, then the witness script for P2WSH; a P2SH-wrapped one pushes its redeem script. */
export function witnessSize(stack: readonly number[], witnessScript?: number, nestedIn?: number): SatisfactionSize {
  return {
    scriptSig: nestedIn === undefined ? 0 : pushLength(nestedIn),
    witness: witnessScript === undefined ? [...stack] : [...stack, witnessScript],
  };
}
