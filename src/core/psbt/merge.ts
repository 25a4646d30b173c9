/**
 * Merging a cosigner's copy into the stored PSBT: the copy must be of the same unsigned
 * transaction, and every signature it brings must verify against the spent outputs the stored
 * PSBT knows (never the copy's own, which a cosigner could alter) before anything is kept.
 */
import { verifyTransaction } from '../signing/verify.js';
import type { TxOutput } from '../tx.js';
import { combinePsbts } from './combine.js';
import { spentOutput } from './decode.js';
import { checkPartialSignatures } from './signatures.js';
import { PsbtError, isFinalized, type Psbt } from './types.js';

/**
 * What a cosigner's copy may add to the stored PSBT: its signatures and finalized inputs. Everything else
 * the service wrote itself (coins, scripts, derivations); anything more a copy carries (unknown or
 * proprietary fields, extra derivations) is left out, so that no cosigner can grow the stored PSBT that
 * every other one downloads.
 */
function signaturesOf(copy: Psbt): Psbt {
  return {
    ...copy,
    xpubs: [],
    proprietary: [],
    unknown: [],
    inputs: copy.inputs.map((input) => ({
      partialSigs: input.partialSigs,
      bip32Derivations: [],
      tapBip32Derivations: [],
      other: [],
      proprietary: [],
      unknown: [],
      ...(input.sighashType !== undefined ? { sighashType: input.sighashType } : {}),
      ...(input.tapKeySig ? { tapKeySig: input.tapKeySig } : {}),
      ...(input.finalScriptSig ? { finalScriptSig: input.finalScriptSig } : {}),
      ...(input.finalScriptWitness ? { finalScriptWitness: input.finalScriptWitness } : {}),
    })),
    outputs: copy.outputs.map(() => ({ bip32Derivations: [], tapBip32Derivations: [], other: [], proprietary: [], unknown: [] })),
  };
}

/**
 * Returns the stored PSBT with the copy's signatures added. Throws PsbtError
 * `different_transaction` (another transaction) or `invalid_signature` (a signature or a
 * finalized input that does not verify).
 */
export function mergeCosignerPsbt(stored: Psbt, copy: Psbt): Psbt {
  const merged = combinePsbts(stored, signaturesOf(copy));
  const bad = checkPartialSignatures(merged).find((c) => !c.valid);
  if (bad) {
    throw new PsbtError('invalid_signature', `Signature of ${bad.pubkey || 'the taproot key'} on input ${bad.input} is not valid: ${bad.reason}`);
  }
  const newlyFinal = merged.inputs.map((input, i) => isFinalized(input) && !isFinalized(stored.inputs[i]!));
  if (newlyFinal.some(Boolean)) {
    const prevouts = merged.inputs.map((_, i) => spentOutput(merged, i));
    if (prevouts.some((p) => p === undefined)) throw new PsbtError('invalid_signature', 'Finalized inputs cannot be checked without every spent output');
    const tx = {
      ...merged.tx,
      inputs: merged.tx.inputs.map((txIn, i) => ({
        ...txIn,
        scriptSig: merged.inputs[i]!.finalScriptSig ?? new Uint8Array(0),
        witness: merged.inputs[i]!.finalScriptWitness ?? [],
      })),
    };
    const result = verifyTransaction(tx, prevouts as TxOutput[]);
    const failed = result.inputs.find((r) => newlyFinal[r.index] && !r.valid);
    if (failed) throw new PsbtError('invalid_signature', `Finalized input ${failed.index} does not verify: ${failed.reason}`);
  }
  return merged;
}
