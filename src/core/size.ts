/**
 * Size estimation: the virtual size a transaction will have once fully signed, assuming
 * worst-case signatures (72-byte DER ECDSA including the sighash byte, 64-byte Schnorr with the
 * default sighash), as Bitcoin Core's wallet does for watch-only keys. Plus Bitcoin Core's dust
 * threshold of an output script.
 */
import { CoreError } from './errors.js';
import type { DescriptorType } from './descriptor/descriptor.js';
import { SCRIPT_KINDS, spendPlanOfKind } from './script-kinds/index.js';
import { multisigScriptLength } from './script-kinds/multisig.js';
import { MAX_REDEEM_SCRIPT } from './script-kinds/sh-multi.js';
import type { SpendPath, SpendPlan } from './spend-plan.js';

export { ECDSA_SIGNATURE_MAX, SCHNORR_SIGNATURE } from './script-kinds/sizes.js';

export class SizeError extends CoreError {}

/** A classic shape by name: how an input will be spent once signed. Multisig kinds carry their threshold m of n keys. */
export type InputType =
  | { kind: 'pkh' }
  | { kind: 'wpkh' }
  | { kind: 'sh-wpkh' }
  | { kind: 'tr' }
  | { kind: 'wsh-multi' | 'sh-wsh-multi' | 'sh-multi'; m: number; n: number };

/** How an input will be spent: a spend plan, or a classic shape read through its script kind's plan. */
export type InputSpend = SpendPlan | InputType;

/** The script kind whose plan an input type names (sortedmulti has the same sizes as multi). */
const KIND_OF_INPUT_TYPE: Readonly<Record<InputType['kind'], DescriptorType>> = {
  pkh: 'pkh',
  wpkh: 'wpkh',
  'sh-wpkh': 'sh-wpkh',
  tr: 'tr',
  'wsh-multi': 'wsh-multi',
  'sh-wsh-multi': 'sh-wsh-multi',
  'sh-multi': 'sh-multi',
};

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

const isSpendPlan = (input: InputSpend): input is SpendPlan => 'paths' in input;

/** The plan of an input: itself, or the plan of the kind its type names (after checking the type). */
export function spendPlanOfInput(input: InputSpend): SpendPlan {
  if (isSpendPlan(input)) {
    if (input.paths.length === 0) throw new SizeError('invalid_input_type', 'A spend plan needs at least one path');
    return input;
  }
  const type = input as { kind: unknown; m?: unknown; n?: unknown };
  const kind = typeof type.kind === 'string' && Object.hasOwn(KIND_OF_INPUT_TYPE, type.kind) ? KIND_OF_INPUT_TYPE[type.kind as InputType['kind']] : undefined;
  if (!kind) throw new SizeError('invalid_input_type', `Unknown input type ${JSON.stringify(type.kind)}`);
  if (!SCRIPT_KINDS[kind].multisig) return spendPlanOfKind(kind, 1, 1);
  const { m, n } = input as { m: number; n: number };
  if (!Number.isInteger(m) || !Number.isInteger(n) || m < 1 || n < m || n > 20) {
    throw new SizeError('invalid_input_type', `Multisig threshold must satisfy 1 <= m <= n <= 20, got ${m} of ${n}`);
  }
  if (kind === 'sh-multi' && multisigScriptLength(m, n) > MAX_REDEEM_SCRIPT) {
    throw new SizeError('invalid_input_type', `A P2SH redeem script holds at most 15 compressed keys, got ${n}`);
  }
  return spendPlanOfKind(kind, m, n);
}

/** Non-witness bytes of a signed input on this path: outpoint, scriptSig with its length, sequence. */
function pathBaseLength(path: SpendPath): number {
  return OUTPOINT_AND_SEQUENCE + compactSizeLength(path.size.scriptSig) + path.size.scriptSig;
}

/** Witness bytes on this path: item count, then each item with its length (1 for legacy: the empty count). */
function pathWitnessLength(path: SpendPath): number {
  const items = path.size.witness;
  return compactSizeLength(items.length) + items.reduce((sum, len) => sum + compactSizeLength(len) + len, 0);
}

const pathWeight = (path: SpendPath): number => pathBaseLength(path) * WITNESS_SCALE + pathWitnessLength(path);

/** The path whose satisfaction weighs the most: what an estimate must allow for. */
function largestPath(plan: SpendPlan): SpendPath {
  let largest = plan.paths[0]!;
  for (const path of plan.paths) if (pathWeight(path) > pathWeight(largest)) largest = path;
  return largest;
}

export const isSegwitInput = (input: InputSpend): boolean => spendPlanOfInput(input).segwit;

/**
 * Weight of one signed input on its largest path, counting its witness stack size byte even for a
 * legacy input (as Bitcoin Core's GetTransactionInputWeight does: in a segwit transaction every input has one).
 */
export const inputWeight = (input: InputSpend): number => pathWeight(largestPath(spendPlanOfInput(input)));

/**
 * Virtual size of one signed input, rounded up (Bitcoin Core's per-input size for effective
 * values): pkh 149, wpkh 68, sh-wpkh 91, tr 58, wsh 2-of-3 105, sh-wsh 2-of-3 140, sh 2-of-3 298.
 */
export const inputVsize = (input: InputSpend): number => Math.ceil(inputWeight(input) / WITNESS_SCALE);

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
export function estimateTransactionSize(inputs: readonly InputSpend[], outputs: readonly (Uint8Array | number)[]): SizeEstimate {
  const plans = inputs.map(spendPlanOfInput);
  const segwit = plans.some((plan) => plan.segwit);
  let base = 4 + compactSizeLength(inputs.length) + compactSizeLength(outputs.length) + 4; // version, counts, locktime
  let witness = segwit ? 2 : 0; // marker and flag
  for (const plan of plans) {
    const path = largestPath(plan);
    base += pathBaseLength(path);
    if (segwit) witness += pathWitnessLength(path);
  }
  for (const output of outputs) base += outputVsize(output);
  const weight = base * WITNESS_SCALE + witness;
  return { weight, vsize: Math.ceil(weight / WITNESS_SCALE) };
}

/** Virtual size of the fully signed transaction (see estimateTransactionSize). */
export const estimateVsize = (inputs: readonly InputSpend[], outputs: readonly (Uint8Array | number)[]): number =>
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
