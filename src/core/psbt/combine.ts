/**
 * Combining copies of one PSBT (BIP174 Combiner), merging as Bitcoin Core's `combinepsbt` does:
 * maps are united (the first PSBT's entry wins on equal keys), single fields are filled when absent.
 */
import { toHex } from '../bytes.js';
import { txid } from '../tx.js';
import { PsbtError, type KeyValue, type Psbt, type PsbtInput, type PsbtOutput } from './types.js';

function unite<T>(mine: T[], theirs: T[], id: (t: T) => string): T[] {
  const seen = new Set(mine.map(id));
  return [...mine, ...theirs.filter((t) => !seen.has(id(t)))];
}

const byKey = (kv: KeyValue) => toHex(kv.key);
const byPubkey = (d: { pubkey: Uint8Array }) => toHex(d.pubkey);

function mergeInput(a: PsbtInput, b: PsbtInput): PsbtInput {
  return {
    ...a,
    nonWitnessUtxo: a.nonWitnessUtxo ?? b.nonWitnessUtxo,
    witnessUtxo: a.witnessUtxo ?? b.witnessUtxo,
    partialSigs: unite(a.partialSigs, b.partialSigs, byPubkey),
    sighashType: a.sighashType ?? b.sighashType,
    redeemScript: a.redeemScript ?? b.redeemScript,
    witnessScript: a.witnessScript ?? b.witnessScript,
    bip32Derivations: unite(a.bip32Derivations, b.bip32Derivations, byPubkey),
    finalScriptSig: a.finalScriptSig ?? b.finalScriptSig,
    finalScriptWitness: a.finalScriptWitness ?? b.finalScriptWitness,
    tapKeySig: a.tapKeySig ?? b.tapKeySig,
    tapBip32Derivations: unite(a.tapBip32Derivations, b.tapBip32Derivations, byPubkey),
    tapInternalKey: a.tapInternalKey ?? b.tapInternalKey,
    other: unite(a.other, b.other, byKey),
    proprietary: unite(a.proprietary, b.proprietary, byKey),
    unknown: unite(a.unknown, b.unknown, byKey),
  };
}

function mergeOutput(a: PsbtOutput, b: PsbtOutput): PsbtOutput {
  return {
    ...a,
    redeemScript: a.redeemScript ?? b.redeemScript,
    witnessScript: a.witnessScript ?? b.witnessScript,
    bip32Derivations: unite(a.bip32Derivations, b.bip32Derivations, byPubkey),
    tapInternalKey: a.tapInternalKey ?? b.tapInternalKey,
    tapBip32Derivations: unite(a.tapBip32Derivations, b.tapBip32Derivations, byPubkey),
    other: unite(a.other, b.other, byKey),
    proprietary: unite(a.proprietary, b.proprietary, byKey),
    unknown: unite(a.unknown, b.unknown, byKey),
  };
}

/** True when two PSBTs describe the same unsigned transaction. */
export function sameTransaction(a: Psbt, b: Psbt): boolean {
  return txid(a.tx) === txid(b.tx) && a.inputs.length === b.inputs.length && a.outputs.length === b.outputs.length;
}

/**
 * Merges PSBTs of one unsigned transaction into a new PSBT (inputs are not modified).
 * A PSBT of another transaction throws PsbtError `different_transaction`.
 */
export function combinePsbts(first: Psbt, ...others: Psbt[]): Psbt {
  let result: Psbt = first;
  for (const other of others) {
    if (!sameTransaction(result, other)) {
      throw new PsbtError('different_transaction', `PSBT is for transaction ${txid(other.tx)}, not ${txid(result.tx)}`);
    }
    result = {
      ...result,
      xpubs: unite(result.xpubs, other.xpubs, (x) => toHex(x.xpub)),
      inputs: result.inputs.map((input, i) => mergeInput(input, other.inputs[i]!)),
      outputs: result.outputs.map((output, i) => mergeOutput(output, other.outputs[i]!)),
      proprietary: unite(result.proprietary, other.proprietary, byKey),
      unknown: unite(result.unknown, other.unknown, byKey),
    };
  }
  return result;
}
