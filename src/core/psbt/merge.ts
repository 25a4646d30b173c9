/**
 * Merging a cosigner's copy into the stored PSBT: the copy must be of the same unsigned
 * transaction, and every signature it brings must verify against the spent outputs the stored
 * PSBT knows (never the copy's own, which a cosigner could alter) before anything is kept.
 */
import { toHex } from '../bytes.js';
import { verifyTransactionInput } from '../signing/verify.js';
import type { Transaction, TxOutput } from '../tx.js';
import { combinePsbts } from './combine.js';
import { spentOutput } from './decode.js';
import { checkInputSignatures, signatureCount } from './signatures.js';
import { PsbtError, isFinalized, type Psbt } from './types.js';
import type { OutputSpendPlan } from '../spend-plan.js';

/**
 * What a cosigner's copy may add to the stored PSBT: its signatures and finalized inputs. Everything else
 * the service wrote itself (coins, scripts, derivations); anything more a copy carries (unknown or
 * proprietary fields, extra derivations) is left out, so that no cosigner can grow the stored PSBT that
 * every other one downloads.
 */
function signaturesOf(copy: Psbt, outputPlans?: readonly (OutputSpendPlan | undefined)[]): Psbt {
  return {
    ...copy,
    xpubs: [],
    proprietary: [],
    unknown: [],
    inputs: copy.inputs.map((input, index) => ({
      partialSigs: input.partialSigs,
      bip32Derivations: [],
      tapBip32Derivations: [],
      // Tapscript signatures (PSBT_IN_TAP_SCRIPT_SIG) of an output whose plan is known, which they are checked against.
      other: outputPlans?.[index] ? input.other.filter((kv) => kv.key[0] === 0x14 && kv.key.length === 65) : [],
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
 * A cosigner's copy combined with the stored PSBT, checked one input at a time so that a caller can give way
 * between inputs: only what the copy adds is checked (the stored signatures were checked when they came).
 */
export interface CosignerMerge {
  /** The stored PSBT with the copy's signatures and finalized inputs added, not yet checked. */
  readonly merged: Psbt;
  /**
   * Checks what the copy added to input `index`; throws PsbtError `invalid_signature` naming the first bad
   * signature or finalized input. Returns the number of signatures verified.
   */
  checkInput(index: number): number;
}

/**
 * Combines the copy with the stored PSBT. Throws PsbtError `different_transaction` for another transaction.
 * `outputPlans`: the plans the caller knows, by input (miniscript outputs), which signatures are checked against.
 */
export function startCosignerMerge(stored: Psbt, copy: Psbt, outputPlans?: readonly (OutputSpendPlan | undefined)[]): CosignerMerge {
  const merged = combinePsbts(stored, signaturesOf(copy, outputPlans));
  let finalTx: { tx: Transaction; prevouts: TxOutput[] } | undefined;
  const finalized = () => (finalTx ??= finalizedTransaction(merged));
  return {
    merged,
    checkInput(index) {
      const before = stored.inputs[index]!;
      const after = merged.inputs[index]!;
      if (isFinalized(after)) {
        if (isFinalized(before)) return 0;
        const { tx, prevouts } = finalized();
        const result = verifyTransactionInput(tx, index, prevouts);
        if (!result.valid) throw new PsbtError('invalid_signature', `Finalized input ${index} does not verify: ${result.reason}`);
        return signatureCount(before) + 1;
      }
      const storedKeys = new Set(before.partialSigs.map((s) => toHex(s.pubkey)));
      const added = (pubkey: string) => (pubkey === '' || pubkey.length === 64 ? !before.tapKeySig : !storedKeys.has(pubkey));
      const checks = checkInputSignatures(merged, index, added, outputPlans?.[index]);
      const bad = checks.find((c) => !c.valid);
      if (bad) throw new PsbtError('invalid_signature', `Signature of ${bad.pubkey || 'the taproot key'} on input ${bad.input} is not valid: ${bad.reason}`);
      return checks.length;
    },
  };
}

/** The transaction with every finalized input's scripts, and the outputs it spends, for checking finalized inputs. */
function finalizedTransaction(merged: Psbt): { tx: Transaction; prevouts: TxOutput[] } {
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
  return { tx, prevouts: prevouts as TxOutput[] };
}

/**
 * Returns the stored PSBT with the copy's signatures added, in one step (see `startCosignerMerge` for one
 * input at a time). Throws PsbtError `different_transaction` (another transaction) or `invalid_signature`
 * (a signature or a finalized input that does not verify).
 */
export function mergeCosignerPsbt(stored: Psbt, copy: Psbt): Psbt {
  const merge = startCosignerMerge(stored, copy);
  merge.merged.inputs.forEach((_, index) => merge.checkInput(index));
  return merge.merged;
}
