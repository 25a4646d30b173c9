/**
 * BIP174 Finalizer and Transaction Extractor for pkh, wpkh, sh-wpkh, sh multisig, wsh multisig,
 * sh-wsh multisig and taproot key path, building the same scriptSig and witness as Bitcoin Core.
 * An input is finalized only when the result verifies against the output it spends.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { concatBytes, equalBytes } from '../bytes.js';
import { witnessProgram } from '../address.js';
import { hash160, parseBareMultisig } from '../script-type.js';
import { assertTransactionVerifies, isP2pkh, isP2sh, isP2tr, isP2wpkh, isP2wsh, verifyTransaction } from '../signing/verify.js';
import type { Transaction, TxOutput } from '../tx.js';
import { spentOutput, spentOutputs } from './decode.js';
import { PsbtError, isFinalized, type Psbt, type PsbtInput } from './types.js';

/** A minimal data push, as Core's `CScript() << bytes` writes it. */
export function pushData(data: Uint8Array): Uint8Array {
  const n = data.length;
  if (n < 0x4c) return concatBytes(Uint8Array.of(n), data);
  if (n <= 0xff) return concatBytes(Uint8Array.of(0x4c, n), data);
  if (n <= 0xffff) return concatBytes(Uint8Array.of(0x4d, n & 0xff, n >> 8), data);
  return concatBytes(Uint8Array.of(0x4e, n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, n >>> 24), data);
}

interface FinalFields {
  scriptSig?: Uint8Array;
  witness?: Uint8Array[];
}

class NotReady extends Error {}
const notReady = (reason: string): never => {
  throw new NotReady(reason);
};

const sigFor = (input: PsbtInput, pubkey: Uint8Array) => input.partialSigs.find((s) => equalBytes(s.pubkey, pubkey))?.signature;

function keyHashSpend(input: PsbtInput, keyHash: Uint8Array): [Uint8Array, Uint8Array] {
  for (const { pubkey, signature } of input.partialSigs) if (equalBytes(hash160(pubkey), keyHash)) return [signature, pubkey];
  return notReady('no signature for the key');
}

/** Signatures in key order, the first m available, as Core's multisig signer collects them. */
function multisigSignatures(input: PsbtInput, script: Uint8Array): Uint8Array[] {
  const multisig = parseBareMultisig(script) ?? notReady('the script is not a supported multisig script');
  const sigs: Uint8Array[] = [];
  for (const key of multisig.keys) {
    const sig = sigFor(input, key);
    if (sig && sigs.length < multisig.m) sigs.push(sig);
  }
  if (sigs.length < multisig.m) notReady(`${sigs.length} of ${multisig.m} signatures`);
  return sigs;
}

function witnessV0Fields(input: PsbtInput, program: Uint8Array): Uint8Array[] {
  if (program.length === 20) return keyHashSpend(input, program);
  const script = input.witnessScript ?? notReady('the witness script is missing');
  if (!equalBytes(sha256(script), program)) notReady('the witness script does not match the spent output');
  return [new Uint8Array(0), ...multisigSignatures(input, script), script];
}

/** BIP174: a finalizer must not finalize an input whose signatures differ from its PSBT_IN_SIGHASH_TYPE. */
function checkSighashTypes(input: PsbtInput): void {
  const expected = input.sighashType;
  if (expected === undefined) return;
  const types = input.partialSigs.map((s) => s.signature[s.signature.length - 1]);
  if (input.tapKeySig) types.push(input.tapKeySig.length === 65 ? input.tapKeySig[64] : 0);
  if (types.some((t) => t !== expected)) notReady('a signature has another sighash type than the input requires');
}

function finalFields(input: PsbtInput, utxo: TxOutput): FinalFields {
  checkSighashTypes(input);
  const spk = utxo.script;
  if (isP2pkh(spk)) {
    const [sig, pubkey] = keyHashSpend(input, spk.subarray(3, 23));
    return { scriptSig: concatBytes(pushData(sig), pushData(pubkey)) };
  }
  if (isP2wpkh(spk) || isP2wsh(spk)) return { witness: witnessV0Fields(input, spk.subarray(2)) };
  if (isP2sh(spk)) {
    const redeem = input.redeemScript ?? notReady('the redeem script is missing');
    if (!equalBytes(hash160(redeem), spk.subarray(2, 22))) notReady('the redeem script does not match the spent output');
    const program = witnessProgram(redeem);
    if (program && program.version === 0) return { scriptSig: pushData(redeem), witness: witnessV0Fields(input, program.program) };
    if (program) notReady('unsupported nested witness program');
    const sigs = multisigSignatures(input, redeem);
    return { scriptSig: concatBytes(Uint8Array.of(0x00), ...sigs.map(pushData), pushData(redeem)) };
  }
  if (isP2tr(spk)) return { witness: [input.tapKeySig ?? notReady('no taproot key path signature')] };
  return notReady('unsupported script type');
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
  if (fields.scriptSig && fields.scriptSig.length > 0) out.finalScriptSig = fields.scriptSig;
  if (fields.witness && fields.witness.length > 0) out.finalScriptWitness = fields.witness;
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

/**
 * Finalizes every input that has what it needs and whose signatures verify (Core's `finalizepsbt`).
 * Inputs that cannot be finalized yet are left unchanged and listed in `pending`.
 */
export function finalizePsbt(psbt: Psbt): FinalizeResult {
  const prevouts = psbt.inputs.map((_, i) => spentOutput(psbt, i));
  const pending: { input: number; reason: string }[] = [];
  const candidates = psbt.inputs.map((input, index) => {
    if (isFinalized(input)) return input;
    const utxo = prevouts[index];
    if (!utxo) {
      pending.push({ input: index, reason: 'the spent output is unknown' });
      return input;
    }
    try {
      return finalizedInput(input, finalFields(input, utxo));
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
      if (!wasFinal && isFinalized(candidate) && !verification.inputs[index]!.valid) {
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
