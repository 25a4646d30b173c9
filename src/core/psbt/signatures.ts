/**
 * Signatures inside a PSBT: how many each input carries, and whether each partial signature
 * (ECDSA or taproot key path) is valid for the transaction and the output it spends, so a
 * cosigner's bad signature is refused before it is merged.
 */
import { equalBytes, toHex } from '../bytes.js';
import { OutputPlanError, signaturesFor, spendableOutput, type SpendableOutput } from '../script-kinds/output-plan.js';
import { signaturesToward, type OutputSpendPlan } from '../spend-plan.js';
import { SighashError, taprootKeyPathSighash, taprootScriptPathSighash, isValidTaprootHashType } from '../signing/sighash.js';
import { checkEcdsaSignature, checkSchnorrSignature } from '../signing/signature.js';
import { ecdsaHasher, isP2tr, type EcdsaHasher } from '../signing/verify.js';
import type { TxOutput } from '../tx.js';
import { spentOutput } from './decode.js';
import { PsbtError, isFinalized, type Psbt, type PsbtInput } from './types.js';

/** Signatures present on one input: partial ECDSA signatures plus a taproot key-path signature. */
export const signatureCount = (input: PsbtInput): number => input.partialSigs.length + (input.tapKeySig ? 1 : 0);

/**
 * Signatures of one input that count toward a path of its output's plan (the path with the most);
 * every signature present when the plan cannot be read (a script or the spent output missing).
 */
export function signaturesTowardPlan(psbt: Psbt, index: number, known?: OutputSpendPlan): number {
  const input = psbt.inputs[index]!;
  const utxo = spentOutput(psbt, index);
  let output: SpendableOutput | undefined;
  try {
    output = known ? { plan: known } : utxo && spendableOutput(input, utxo);
  } catch (e) {
    if (!(e instanceof OutputPlanError)) throw e;
  }
  if (!output) return signatureCount(input);
  const { plan } = output;
  return Math.max(...plan.paths.map((path) => {
    const signatureOf = signaturesFor(input, plan, path);
    return signaturesToward(path.signers, (key) => signatureOf(key) !== undefined);
  }));
}

/**
 * The smallest number of signatures on any input (so a PSBT counts as signed only when every
 * input is), counted toward its output's plan (`outputPlans`: those the caller knows, by input
 * index); a finalized input counts as `threshold`.
 */
export function minimumSignatureCount(psbt: Psbt, threshold: number, outputPlans?: readonly (OutputSpendPlan | undefined)[]): number {
  if (psbt.inputs.length === 0) return 0;
  return Math.min(...psbt.inputs.map((input, index) => (isFinalized(input) ? threshold : signaturesTowardPlan(psbt, index, outputPlans?.[index]))));
}

export interface PartialSignatureCheck {
  input: number;
  /** Hex public key (x-only output key for a taproot key-path signature). */
  pubkey: string;
  valid: boolean;
  reason?: string;
}

class Unusable extends Error {}
const unusable = (reason: string): never => {
  throw new Unusable(reason);
};

/** The output an input spends, refusing a witness UTXO that contradicts the full previous transaction. */
function checkedSpentOutput(psbt: Psbt, index: number): TxOutput {
  const input = psbt.inputs[index]!;
  const utxo = spentOutput(psbt, index) ?? unusable('the spent output is unknown');
  const w = input.witnessUtxo;
  if (input.nonWitnessUtxo && w && (w.value !== utxo.value || !equalBytes(w.script, utxo.script))) {
    unusable('witness UTXO contradicts the non-witness UTXO');
  }
  return utxo;
}

interface EcdsaContext {
  hasher: EcdsaHasher;
  /** Keys allowed to sign: the keys of the output's plan (for a key hash: the key that hashes to it). */
  accepts: (pubkey: Uint8Array) => boolean;
}

/** The output's plan, or undefined for an output of no kind this service spends (missing scripts are unusable). */
function spendable(psbt: Psbt, index: number, utxo: TxOutput): SpendableOutput | undefined {
  try {
    return spendableOutput(psbt.inputs[index]!, utxo);
  } catch (e) {
    if (e instanceof OutputPlanError) unusable(e.message);
    throw e;
  }
}

/**
 * How an ECDSA signature on this input is hashed, and which keys may sign. A plan the caller knows (a
 * miniscript output) is a P2WSH script: its signatures hash the witness script the input carries.
 */
function ecdsaContext(psbt: Psbt, index: number, known?: OutputSpendPlan): EcdsaContext {
  const utxo = checkedSpentOutput(psbt, index);
  const witnessScript = psbt.inputs[index]!.witnessScript;
  if (known && !witnessScript) return unusable('the witness script is missing');
  const output = known ? { plan: known, ecdsa: { scriptCode: witnessScript!, segwit: true } } : spendable(psbt, index, utxo);
  if (!output?.ecdsa) return unusable('unsupported script type for ECDSA signatures');
  const { scriptCode, segwit } = output.ecdsa;
  const { plan } = output;
  return { hasher: ecdsaHasher(psbt.tx, index, scriptCode, segwit ? utxo.value : undefined), accepts: (k) => plan.keys.some((key) => equalBytes(key, k)) };
}

function checkTapKeySig(psbt: Psbt, index: number, sig: Uint8Array): string | undefined {
  const spk = checkedSpentOutput(psbt, index).script;
  if (!isP2tr(spk)) return 'a taproot signature on a non-taproot input';
  const prevouts = psbt.inputs.map((_, i) => checkedSpentOutput(psbt, i));
  const hashType = sig.length === 65 ? sig[64]! : 0;
  if (sig.length === 65 && (hashType === 0 || !isValidTaprootHashType(hashType))) return 'invalid taproot sighash type';
  const expected = psbt.inputs[index]!.sighashType;
  if (expected !== undefined && expected !== hashType) return 'sighash type differs from the input sighash type';
  const message = taprootKeyPathSighash(psbt.tx, index, prevouts, hashType);
  return checkSchnorrSignature(sig.subarray(0, 64), message, spk.subarray(2)) ? undefined : 'invalid signature';
}

const PSBT_IN_TAP_SCRIPT_SIG = 0x14;

/** A tapscript signature (PSBT_IN_TAP_SCRIPT_SIG) of a key of the known plan, for one of its leaves. */
function checkTapScriptSig(psbt: Psbt, index: number, plan: OutputSpendPlan, key: Uint8Array, leafHash: Uint8Array, sig: Uint8Array): string | undefined {
  if (!plan.keys.some((k) => equalBytes(k.length === 33 ? k.subarray(1) : k, key))) return 'the key cannot sign this input';
  if (!plan.paths.some((p) => p.tapLeafHash && equalBytes(p.tapLeafHash, leafHash))) return 'the leaf is not one of the output';
  if (sig.length !== 64 && sig.length !== 65) return 'a taproot signature is 64 or 65 bytes';
  const hashType = sig.length === 65 ? sig[64]! : 0;
  if (sig.length === 65 && (hashType === 0 || !isValidTaprootHashType(hashType))) return 'invalid taproot sighash type';
  const expected = psbt.inputs[index]!.sighashType;
  if (expected !== undefined && expected !== hashType) return 'sighash type differs from the input sighash type';
  const prevouts = psbt.inputs.map((_, i) => checkedSpentOutput(psbt, i));
  const message = taprootScriptPathSighash(psbt.tx, index, prevouts, hashType, leafHash);
  return checkSchnorrSignature(sig.subarray(0, 64), message, key) ? undefined : 'invalid signature';
}

/**
 * Checks the partial signatures and the taproot key-path signature of one non-finalized input: all of them, or
 * those `wanted` names (by hex public key, the taproot output key for a key-path signature). A key that cannot
 * sign the input is refused before any signature is verified, so the work is bounded by the keys of the input.
 */
export function checkInputSignatures(psbt: Psbt, index: number, wanted: (pubkey: string) => boolean = () => true, known?: OutputSpendPlan): PartialSignatureCheck[] {
  const input = psbt.inputs[index]!;
  const checks: PartialSignatureCheck[] = [];
  if (isFinalized(input)) return checks;
  const run = (pubkey: string, check: () => string | undefined) => {
    try {
      const reason = check();
      checks.push(reason ? { input: index, pubkey, valid: false, reason } : { input: index, pubkey, valid: true });
    } catch (e) {
      if (!(e instanceof Unusable) && !(e instanceof SighashError)) throw e;
      checks.push({ input: index, pubkey, valid: false, reason: e.message });
    }
  };
  let context: EcdsaContext | undefined;
  for (const { pubkey, signature } of input.partialSigs) {
    const hex = toHex(pubkey);
    if (!wanted(hex)) continue;
    run(hex, () => {
      context ??= ecdsaContext(psbt, index, known);
      if (!context.accepts(pubkey)) return 'the key cannot sign this input';
      if (signature.length === 0) return 'empty signature';
      const hashType = signature[signature.length - 1]!;
      if (input.sighashType !== undefined && input.sighashType !== hashType) return 'sighash type differs from the input sighash type';
      const failure = checkEcdsaSignature(signature, context.hasher(hashType), pubkey);
      return failure?.replaceAll('_', ' ');
    });
  }
  if (known) {
    for (const entry of input.other) {
      if (entry.key[0] !== PSBT_IN_TAP_SCRIPT_SIG || entry.key.length !== 65) continue;
      const name = `${toHex(entry.key.subarray(1, 33))}:${toHex(entry.key.subarray(33))}`;
      if (wanted(name)) run(name, () => checkTapScriptSig(psbt, index, known, entry.key.subarray(1, 33), entry.key.subarray(33), entry.value));
    }
  }
  if (input.tapKeySig) {
    const sig = input.tapKeySig;
    const outputKey = toHex(checkedOutputKey(psbt, index));
    if (wanted(outputKey)) run(outputKey, () => checkTapKeySig(psbt, index, sig));
  }
  return checks;
}

/** Checks every partial signature and taproot key-path signature of every non-finalized input. */
export function checkPartialSignatures(psbt: Psbt): PartialSignatureCheck[] {
  return psbt.inputs.flatMap((_, index) => checkInputSignatures(psbt, index));
}

function checkedOutputKey(psbt: Psbt, index: number): Uint8Array {
  const utxo = spentOutput(psbt, index);
  return utxo && isP2tr(utxo.script) ? utxo.script.subarray(2) : new Uint8Array(0);
}

/** Throws PsbtError `invalid_signature` naming the first bad signature. */
export function assertPartialSignaturesValid(psbt: Psbt): void {
  const bad = checkPartialSignatures(psbt).find((c) => !c.valid);
  if (bad) throw new PsbtError('invalid_signature', `Signature of ${bad.pubkey || 'the taproot key'} on input ${bad.input} is not valid: ${bad.reason}`);
}
