/**
 * BIP174 Finalizer and Transaction Extractor: an input's final scriptSig and witness come from a
 * path of its output's spend plan (script-kinds/output-plan.ts), the same fields Bitcoin Core
 * builds. An input is finalized only when the result verifies against the output it spends.
 */
import { OutputPlanError, pushData, signaturesFor, spendableOutput, type SpendableOutput } from '../script-kinds/output-plan.js';
import { assertTransactionVerifies, verifyTransaction } from '../signing/verify.js';
import type { FinalScripts, OutputSpendPlan } from '../spend-plan.js';
import type { Transaction, TxOutput } from '../tx.js';
import { spentOutput, spentOutputs } from './decode.js';
import { checkInputSignatures } from './signatures.js';
import { PsbtError, isFinalized, type Psbt, type PsbtInput } from './types.js';

/** A minimal data push, as Core's `CScript() << bytes` writes it. */
export { pushData };

type FinalFields = FinalScripts;

class NotReady extends Error {}
const notReady = (reason: string): never => {
  throw new NotReady(reason);
};

/** BIP174: a finalizer must not finalize an input whose signatures differ from its PSBT_IN_SIGHASH_TYPE. */
function checkSighashTypes(input: PsbtInput): void {
  const expected = input.sighashType;
  if (expected === undefined) return;
  const types = input.partialSigs.map((s) => s.signature[s.signature.length - 1]);
  if (input.tapKeySig) types.push(input.tapKeySig.length === 65 ? input.tapKeySig[64] : 0);
  if (types.some((t) => t !== expected)) notReady('a signature has another sighash type than the input requires');
}

/** The final fields of the first path of the output's plan (known to the caller, else read from the scripts) that the signatures satisfy. */
function finalFields(input: PsbtInput, utxo: TxOutput, known: OutputSpendPlan | undefined): FinalFields {
  checkSighashTypes(input);
  let spendable: SpendableOutput | undefined;
  try {
    spendable = known ? { plan: known } : spendableOutput(input, utxo);
  } catch (e) {
    if (e instanceof OutputPlanError) notReady(e.message);
    throw e;
  }
  if (!spendable) return notReady('unsupported script type');
  const { plan } = spendable;
  let reason = 'no path of the output can be satisfied';
  for (const path of plan.paths) {
    const result = path.finalize(signaturesFor(input, plan, path));
    if (typeof result !== 'string') return result;
    if (path === plan.paths[0]) reason = result;
  }
  return notReady(reason);
}

/** The input with only its UTXOs, final fields, proprietary and unknown entries, as BIP174 asks of a Finalizer. */
function finalizedInput(input: PsbtInput, fields: FinalFields): PsbtInput {
  const out: PsbtInput = {
    partialSigs: [],
    bip32Derivations: [],
    tapBip32Derivations: [],
    other: [],
    proprietary: input.proprietary,
    unknown: input.unknown,
  };
  if (input.nonWitnessUtxo) out.nonWitnessUtxo = input.nonWitnessUtxo;
  if (input.witnessUtxo) out.witnessUtxo = input.witnessUtxo;
  if (fields.scriptSig.length > 0) out.finalScriptSig = fields.scriptSig;
  if (fields.witness.length > 0) out.finalScriptWitness = [...fields.witness];
  for (const key of ['previousTxid', 'outputIndex', 'sequence', 'requiredTimeLocktime', 'requiredHeightLocktime'] as const) {
    if (input[key] !== undefined) (out as unknown as Record<string, unknown>)[key] = input[key];
  }
  return out;
}

export interface FinalizeResult {
  psbt: Psbt;
  /** True when every input is finalized, so the transaction can be extracted. */
  complete: boolean;
  /** Why inputs were left as they were (index -> reason). */
  pending: { input: number; reason: string }[];
}

export interface FinalizeOptions {
  /**
   * Plans of the spent outputs the caller knows (by input index), e.g. a miniscript wallet's
   * derived outputs; an input without one has its plan read from its scripts.
   */
  outputPlans?: readonly (OutputSpendPlan | undefined)[];
}

/**
 * Finalizes every input that has what it needs and whose signatures verify (Core's `finalizepsbt`).
 * Inputs that cannot be finalized yet are left unchanged and listed in `pending`.
 */
export function finalizePsbt(psbt: Psbt, options: FinalizeOptions = {}): FinalizeResult {
  const prevouts = psbt.inputs.map((_, i) => spentOutput(psbt, i));
  const pending: { input: number; reason: string }[] = [];
  const candidates = psbt.inputs.map((input, index) => {
    if (isFinalized(input)) return input;
    const utxo = prevouts[index];
    if (!utxo) {
      pending.push({ input: index, reason: 'the spent output is unknown' });
      return input;
    }
    const known = options.outputPlans?.[index];
    try {
      const fields = finalFields(input, utxo, known);
      // A known plan's script is not one the verifier interprets (miniscript): its signatures (ECDSA and
      // tapscript) are checked one by one instead, before they are used.
      const bad = known ? checkInputSignatures(psbt, index, () => true, known).find((c) => !c.valid) : undefined;
      if (bad) notReady(`the signature of ${bad.pubkey} is not valid: ${bad.reason}`);
      return finalizedInput(input, fields);
    } catch (e) {
      if (!(e instanceof NotReady)) throw e;
      pending.push({ input: index, reason: e.message });
      return input;
    }
  });
  const inputs = [...candidates];
  if (prevouts.every((p) => p !== undefined)) {
    const verification = verifyTransaction(extractUnchecked(psbt.tx, candidates), prevouts as TxOutput[]);
    candidates.forEach((candidate, index) => {
      const wasFinal = isFinalized(psbt.inputs[index]!);
      if (!wasFinal && isFinalized(candidate) && !verification.inputs[index]!.valid && !options.outputPlans?.[index]) {
        inputs[index] = psbt.inputs[index]!;
        pending.push({ input: index, reason: verification.inputs[index]!.reason ?? 'does not verify' });
      }
    });
  } else {
    // Without every spent output nothing can be verified; finalize nothing new.
    candidates.forEach((_, index) => {
      if (!isFinalized(psbt.inputs[index]!) && isFinalized(candidates[index]!)) {
        inputs[index] = psbt.inputs[index]!;
        pending.push({ input: index, reason: 'cannot verify without every spent output' });
      }
    });
  }
  pending.sort((a, b) => a.input - b.input);
  return { psbt: { ...psbt, inputs }, complete: inputs.every(isFinalized), pending };
}

function extractUnchecked(tx: Transaction, inputs: PsbtInput[]): Transaction {
  return {
    ...tx,
    inputs: tx.inputs.map((txIn, i) => ({
      ...txIn,
      scriptSig: inputs[i]!.finalScriptSig ?? new Uint8Array(0),
      witness: inputs[i]!.finalScriptWitness ?? [],
    })),
  };
}

/** The signed transaction of a fully finalized PSBT; throws PsbtError `incomplete` otherwise. */
export function extractTransaction(psbt: Psbt): Transaction {
  const missing = psbt.inputs.findIndex((i) => !isFinalized(i));
  if (missing >= 0) throw new PsbtError('incomplete', `Input ${missing} is not finalized`);
  return extractUnchecked(psbt.tx, psbt.inputs);
}

/**
 * The signed transaction, checked input by input against the outputs it spends, ready to broadcast.
 * Throws PsbtError (`incomplete`, `missing_utxo`) or VerifyError (`invalid_signature`).
 */
export function extractVerifiedTransaction(psbt: Psbt): Transaction {
  const tx = extractTransaction(psbt);
  assertTransactionVerifies(tx, spentOutputs(psbt));
  return tx;
}
