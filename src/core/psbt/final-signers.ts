/**
 * Who signed a finalized input. A finalizer clears the partial signatures and leaves only the final
 * scriptSig and witness, so the keys that signed are read from those: a multisig signature is matched
 * to its key by verifying it against the input's sighash, in the order OP_CHECKMULTISIG checks them,
 * so a key of the script that never signed is never named.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { equalBytes } from '../bytes.js';
import { parseScriptOps } from '../decode.js';
import { witnessProgram } from '../address.js';
import { hash160, parseBareMultisig } from '../script-type.js';
import { SighashError } from '../signing/sighash.js';
import { checkEcdsaSignature } from '../signing/signature.js';
import { ecdsaHasher, isP2pkh, isP2sh, isP2tr, isP2wpkh, isP2wsh, type EcdsaHasher } from '../signing/verify.js';
import { spentOutput } from './decode.js';
import { isFinalized, type Psbt, type PsbtInput } from './types.js';

/** The data pushes of a push-only script; undefined for anything else. */
function pushes(script: Uint8Array): Uint8Array[] | undefined {
  const { ops, complete } = parseScriptOps(script);
  if (!complete || ops.some((op) => op.data === undefined)) return undefined;
  return ops.map((op) => op.data!);
}

const verifies = (sig: Uint8Array, pubkey: Uint8Array, hasher: EcdsaHasher) =>
  sig.length > 0 && checkEcdsaSignature(sig, hasher(sig[sig.length - 1]!), pubkey) === undefined;

/** The keys of a multisig script whose signatures are among `sigs`, each key after the one matched before. */
function multisigSigners(sigs: Uint8Array[], script: Uint8Array, sighash: EcdsaHasher): Uint8Array[] {
  const multisig = parseBareMultisig(script);
  if (!multisig) return [];
  const hashes = new Map<number, Uint8Array>(); // one sighash per hash type, not one per key tried
  const hasher: EcdsaHasher = (hashType) => hashes.get(hashType) ?? hashes.set(hashType, sighash(hashType)).get(hashType)!;
  const signers: Uint8Array[] = [];
  let key = 0;
  for (const sig of sigs) {
    for (let k = key; k < multisig.keys.length; k++) {
      if (verifies(sig, multisig.keys[k]!, hasher)) {
        signers.push(multisig.keys[k]!);
        key = k + 1;
        break;
      }
    }
  }
  return signers;
}

function witnessV0Signers(psbt: Psbt, index: number, program: Uint8Array, amount: bigint, witness: readonly Uint8Array[]): Uint8Array[] {
  if (program.length === 20) {
    const pubkey = witness[1];
    return witness.length === 2 && pubkey && equalBytes(hash160(pubkey), program) ? [pubkey] : [];
  }
  const script = witness[witness.length - 1];
  if (witness.length < 2 || !script || !equalBytes(sha256(script), program)) return [];
  return multisigSigners(witness.slice(1, -1), script, ecdsaHasher(psbt.tx, index, script, amount));
}

function signersOf(psbt: Psbt, index: number, input: PsbtInput): Uint8Array[] {
  const utxo = spentOutput(psbt, index);
  if (!utxo) return [];
  const spk = utxo.script;
  const witness = input.finalScriptWitness ?? [];
  if (isP2wpkh(spk) || isP2wsh(spk)) return witnessV0Signers(psbt, index, spk.subarray(2), utxo.value, witness);
  if (isP2tr(spk)) {
    // A key-path spend has one signature, by the output key: its owner is the holder of the internal key.
    const stack = witness.length >= 2 && witness[witness.length - 1]![0] === 0x50 ? witness.slice(0, -1) : witness;
    return stack.length === 1 ? [input.tapInternalKey ?? spk.subarray(2)] : [];
  }
  const items = pushes(input.finalScriptSig ?? new Uint8Array(0));
  if (!items) return [];
  if (isP2pkh(spk)) return items.length === 2 && equalBytes(hash160(items[1]!), spk.subarray(3, 23)) ? [items[1]!] : [];
  if (!isP2sh(spk) || items.length === 0) return [];
  const redeem = items[items.length - 1]!;
  if (!equalBytes(hash160(redeem), spk.subarray(2, 22))) return [];
  const program = witnessProgram(redeem);
  if (program) return program.version === 0 ? witnessV0Signers(psbt, index, program.program, utxo.value, witness) : [];
  return multisigSigners(items.slice(1, -1), redeem, ecdsaHasher(psbt.tx, index, redeem));
}

/**
 * The public keys whose signatures a finalized input's scriptSig and witness carry (the x-only internal key,
 * or the output key when the input does not name it, for a taproot key-path spend); empty for an input that
 * is not finalized or whose final fields this service cannot read.
 */
export function finalSignerKeys(psbt: Psbt, index: number): Uint8Array[] {
  const input = psbt.inputs[index];
  if (!input || !isFinalized(input)) return [];
  try {
    return signersOf(psbt, index, input);
  } catch (e) {
    if (e instanceof SighashError) return [];
    throw e;
  }
}
