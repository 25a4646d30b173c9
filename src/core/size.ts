/**
 * Size estimation: the virtual size a transaction will have once fully signed, assuming
 * worst-case signatures (72-byte DER ECDSA including the sighash byte, 64-byte Schnorr with the
 * default sighash), as Bitcoin Core's wallet does for watch-only keys. Plus Bitcoin Core's dust
 * threshold of an output script.
 */
import { CoreError } from './errors.js';

export class SizeError extends CoreError {}

/** How an input will be spent once signed. Multisig kinds carry their threshold m of n keys. */
export type InputType =
  | { kind: 'pkh' }
  | { kind: 'wpkh' }
  | { kind: 'sh-wpkh' }
  | { kind: 'tr' }
  | { kind: 'wsh-multi' | 'sh-wsh-multi' | 'sh-multi'; m: number; n: number };

export const ECDSA_SIGNATURE_MAX = 72;
export const SCHNORR_SIGNATURE = 64;
const COMPRESSED_PUBKEY = 33;
const OUTPOINT_AND_SEQUENCE = 32 + 4 + 4;
const WITNESS_SCALE = 4;
const MAX_SCRIPT_SIZE = 10_000;
const OP_RETURN = 0x6a;

/** Length of a CompactSize (varint) encoding of n. */
export function compactSizeLength(n: number): number {
  if (n < 0xfd) return 1;
  if (n <= 0xffff) return 3;
  if (n <= 0xffffffff) return 5;
  return 9;
}

/** Bytes of a minimal push of `length` bytes of data (opcode or OP_PUSHDATAn plus the data). */
function pushLength(length: number): number {
  if (length < 0x4c) return 1 + length;
  if (length <= 0xff) return 2 + length;
  if (length <= 0xffff) return 3 + length;
  return 5 + length;
}

/** Bytes of a minimal number push (multisig m and n): OP_1..OP_16 are one byte, 17..20 are a 1-byte push. */
const smallNumberLength = (k: number): number => (k <= 16 ? 1 : 2);

function multisigScriptLength(m: number, n: number): number {
  return smallNumberLength(m) + n * (1 + COMPRESSED_PUBKEY) + smallNumberLength(n) + 1; // ... OP_CHECKMULTISIG
}

function checkInputType(type: InputType): void {
  if (type.kind === 'wsh-multi' || type.kind === 'sh-wsh-multi' || type.kind === 'sh-multi') {
    const { m, n } = type;
    if (!Number.isInteger(m) || !Number.isInteger(n) || m < 1 || n < m || n > 20) {
      throw new SizeError('invalid_input_type', `Multisig threshold must satisfy 1 <= m <= n <= 20, got ${m} of ${n}`);
    }
    if (type.kind === 'sh-multi' && multisigScriptLength(m, n) > 520) {
      throw new SizeError('invalid_input_type', `A P2SH redeem script holds at most 15 compressed keys, got ${n}`);
    }
  } else if (!['pkh', 'wpkh', 'sh-wpkh', 'tr'].includes(type.kind)) {
    throw new SizeError('invalid_input_type', `Unknown input type ${JSON.stringify((type as { kind: unknown }).kind)}`);
  }
}

/** Witness stack items of a signed input (empty for legacy inputs). */
function witnessItemLengths(type: InputType): number[] {
  switch (type.kind) {
    case 'pkh':
    case 'sh-multi':
      return [];
    case 'wpkh':
    case 'sh-wpkh':
      return [ECDSA_SIGNATURE_MAX, COMPRESSED_PUBKEY];
    case 'tr':
      return [SCHNORR_SIGNATURE];
    case 'wsh-multi':
    case 'sh-wsh-multi':
      // CHECKMULTISIG's extra pop takes an empty item, then m signatures, then the witness script.
      return [0, ...Array<number>(type.m).fill(ECDSA_SIGNATURE_MAX), multisigScriptLength(type.m, type.n)];
  }
}

function scriptSigLength(type: InputType): number {
  switch (type.kind) {
    case 'pkh':
      return pushLength(ECDSA_SIGNATURE_MAX) + pushLength(COMPRESSED_PUBKEY);
    case 'sh-wpkh':
      return pushLength(22); // the redeem script 0014{20-byte hash}
    case 'sh-wsh-multi':
      return pushLength(34); // the redeem script 0020{32-byte hash}
    case 'sh-multi':
      return 1 + type.m * pushLength(ECDSA_SIGNATURE_MAX) + pushLength(multisigScriptLength(type.m, type.n));
    default:
      return 0;
  }
}

export const isSegwitInput = (type: InputType): boolean => type.kind !== 'pkh' && type.kind !== 'sh-multi';

/** Non-witness bytes of a signed input: outpoint, scriptSig with its length, sequence. */
function inputBaseLength(type: InputType): number {
  const scriptSig = scriptSigLength(type);
  return OUTPOINT_AND_SEQUENCE + compactSizeLength(scriptSig) + scriptSig;
}

/** Witness bytes of a signed input: item count, then each item with its length (1 for legacy: the empty count). */
function inputWitnessLength(type: InputType): number {
  const items = witnessItemLengths(type);
  return compactSizeLength(items.length) + items.reduce((sum, len) => sum + compactSizeLength(len) + len, 0);
}

/**
 * Weight of one signed input, counting its witness stack size byte even for a legacy input
 * (as Bitcoin Core's GetTransactionInputWeight does: in a segwit transaction every input has one).
 */
export function inputWeight(type: InputType): number {
  checkInputType(type);
  return inputBaseLength(type) * WITNESS_SCALE + inputWitnessLength(type);
}

/**
 * Virtual size of one signed input, rounded up (Bitcoin Core's per-input size for effective
 * values): pkh 149, wpkh 68, sh-wpkh 91, tr 58, wsh 2-of-3 105, sh-wsh 2-of-3 140, sh 2-of-3 298.
 */
export const inputVsize = (type: InputType): number => Math.ceil(inputWeight(type) / WITNESS_SCALE);

/** Serialised bytes of an output with a scriptPubKey of `scriptLength` bytes: value, length, script. */
export function outputLength(scriptLength: number): number {
  if (!Number.isInteger(scriptLength) || scriptLength < 0) throw new SizeError('invalid_output', 'Script length must be a non-negative integer');
  return 8 + compactSizeLength(scriptLength) + scriptLength;
}

/** Virtual size of an output (outputs carry no witness data). */
export const outputVsize = (script: Uint8Array | number): number => outputLength(typeof script === 'number' ? script : script.length);

export interface SizeEstimate {
  weight: number;
  vsize: number;
}

/**
 * Weight and virtual size of the fully signed transaction spending `inputs` to outputs with the
 * given scripts (or script lengths). The segwit marker and flag are counted once, only if some
 * input is segwit.
 */
export function estimateTransactionSize(inputs: readonly InputType[], outputs: readonly (Uint8Array | number)[]): SizeEstimate {
  const segwit = inputs.some(isSegwitInput);
  let base = 4 + compactSizeLength(inputs.length) + compactSizeLength(outputs.length) + 4; // version, counts, locktime
  let witness = segwit ? 2 : 0; // marker and flag
  for (const input of inputs) {
    checkInputType(input);
    base += inputBaseLength(input);
    if (segwit) witness += inputWitnessLength(input);
  }
  for (const output of outputs) base += outputVsize(output);
  const weight = base * WITNESS_SCALE + witness;
  return { weight, vsize: Math.ceil(weight / WITNESS_SCALE) };
}

/** Virtual size of the fully signed transaction (see estimateTransactionSize). */
export const estimateVsize = (inputs: readonly InputType[], outputs: readonly (Uint8Array | number)[]): number =>
  estimateTransactionSize(inputs, outputs).vsize;

/** Bitcoin Core's default dust relay fee: 3 sat/vB, i.e. 3000 sat/kvB. */
export const DUST_RELAY_FEE_SAT_PER_KVB = 3000n;

/** OP_RETURN scripts and scripts over 10,000 bytes can never be spent (Core's CScript::IsUnspendable). */
export const isUnspendable = (script: Uint8Array): boolean =>
  (script.length > 0 && script[0] === OP_RETURN) || script.length > MAX_SCRIPT_SIZE;

/** Witness program: version opcode (OP_0, OP_1..OP_16) then one push of 2 to 40 bytes (Core's IsWitnessProgram). */
export function isWitnessProgram(script: Uint8Array): boolean {
  if (script.length < 4 || script.length > 42) return false;
  const version = script[0]!;
  if (version !== 0 && (version < 0x51 || version > 0x60)) return false;
  return script[1]! + 2 === script.length;
}

/**
 * Bitcoin Core's GetDustThreshold: an output is dust when its value is below the fee of the
 * output plus the input that would spend it, at the dust relay fee (default 3 sat/vB):
 * 546 for P2PKH, 540 for P2SH, 294 for P2WPKH, 330 for P2WSH and P2TR; 0 for OP_RETURN.
 */
export function dustThreshold(script: Uint8Array, dustRelayFeeSatPerKvB: bigint = DUST_RELAY_FEE_SAT_PER_KVB): bigint {
  if (isUnspendable(script)) return 0n;
  let size = outputLength(script.length);
  // A spending input: outpoint 36, scriptSig length 1, sequence 4, plus a signature and key
  // (107 bytes), witness bytes counted at a quarter.
  size += isWitnessProgram(script) ? 32 + 4 + 1 + Math.floor(107 / WITNESS_SCALE) + 4 : 32 + 4 + 1 + 107 + 4;
  const scaled = dustRelayFeeSatPerKvB * BigInt(size);
  return (scaled + 999n) / 1000n; // CFeeRate::GetFee rounds up
}

/** True when `value` is below the dust threshold of `script`. */
export const isDust = (script: Uint8Array, value: bigint, dustRelayFeeSatPerKvB?: bigint): boolean =>
  value < dustThreshold(script, dustRelayFeeSatPerKvB);
