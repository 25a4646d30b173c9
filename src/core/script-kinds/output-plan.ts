/**
 * The spend plan of one concrete output, read from the output and the scripts a PSBT input
 * carries (redeem script, witness script): its keys, and for each path how the final scriptSig
 * and witness are laid out. Finalization and signature checks and counts read it.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { p2pkhScript, witnessProgram } from '../address.js';
import { concatBytes, equalBytes } from '../bytes.js';
import type { PsbtInput } from '../psbt/types.js';
import { hash160 } from '../script-type.js';
import { isP2pkh, isP2sh, isP2tr, isP2wpkh, isP2wsh } from '../signing/verify.js';
import { oneKey, type FinalScripts, type OutputSpendPath, type OutputSpendPlan, type SatisfactionSize, type SignatureOf, type SignatureScheme, type SignerThreshold } from '../spend-plan.js';
import type { TxOutput } from '../tx.js';
import { SCRIPT_LEAVES, type ScriptLeaf } from './leaves.js';
import { KEY_HASH_STACK } from './single-key.js';
import { SCHNORR_SIGNATURE, legacySize, witnessSize } from './sizes.js';

/** Why an output's plan cannot be read (a script missing or not matching the output). */
export class OutputPlanError extends Error {}
const fail = (reason: string): never => {
  throw new OutputPlanError(reason);
};

/** A concrete output's plan and, for ECDSA, what its signatures commit to. */
export interface SpendableOutput {
  readonly plan: OutputSpendPlan;
  /** The script code of ECDSA signatures, and whether they commit to the amount (segwit v0). */
  readonly ecdsa?: { readonly scriptCode: Uint8Array; readonly segwit: boolean };
}

/** A minimal data push, as Core's `CScript() << bytes` writes it. */
export function pushData(data: Uint8Array): Uint8Array {
  const n = data.length;
  if (n < 0x4c) return concatBytes(Uint8Array.of(n), data);
  if (n <= 0xff) return concatBytes(Uint8Array.of(0x4c, n), data);
  if (n <= 0xffff) return concatBytes(Uint8Array.of(0x4d, n & 0xff, n >> 8), data);
  return concatBytes(Uint8Array.of(0x4e, n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, n >>> 24), data);
}

/** Where a satisfying stack goes: pushed in the scriptSig (legacy), or in the witness with its script, P2SH-wrapped or not. */
interface Envelope {
  readonly segwit: boolean;
  size(stack: readonly number[]): SatisfactionSize;
  place(stack: readonly Uint8Array[]): FinalScripts;
}

const legacy = (redeem?: Uint8Array): Envelope => ({
  segwit: false,
  size: (stack) => legacySize(stack, redeem?.length),
  place: (stack) => ({ scriptSig: concatBytes(...stack.map(pushData), ...(redeem ? [pushData(redeem)] : [])), witness: [] }),
});

const witness = (script?: Uint8Array, nestedIn?: Uint8Array): Envelope => ({
  segwit: true,
  size: (stack) => witnessSize(stack, script?.length, nestedIn?.length),
  place: (stack) => ({ scriptSig: nestedIn ? pushData(nestedIn) : new Uint8Array(0), witness: script ? [...stack, script] : [...stack] }),
});

interface Leaf {
  readonly name: string;
  readonly keys: readonly Uint8Array[];
  readonly signers: SignerThreshold;
  readonly scheme: SignatureScheme;
  /** Largest stack lengths, bottom first. */
  readonly stack: readonly number[];
  satisfy(signatureOf: SignatureOf): Uint8Array[] | string;
}

function plan(leaf: Leaf, envelope: Envelope): OutputSpendPlan {
  const path: OutputSpendPath = {
    name: leaf.name,
    signers: leaf.signers,
    scheme: leaf.scheme,
    size: envelope.size(leaf.stack),
    finalize: (signatureOf) => {
      const stack = leaf.satisfy(signatureOf);
      return typeof stack === 'string' ? stack : envelope.place(stack);
    },
  };
  return { segwit: envelope.segwit, keyCount: leaf.keys.length, keys: leaf.keys, paths: [path] };
}

/**
 * A key committed to by its hash: the key is the one of a signature or of a BIP32 derivation that
 * hashes to it (none when the input names neither).
 */
function keyHashLeaf(input: PsbtInput, keyHash: Uint8Array): Leaf {
  const known = [...input.partialSigs, ...input.bip32Derivations];
  const signer = known.find((s) => equalBytes(hash160(s.pubkey), keyHash))?.pubkey;
  const keys = signer ? [signer] : [];
  return {
    name: 'key',
    keys,
    signers: oneKey(0),
    scheme: 'ecdsa',
    stack: KEY_HASH_STACK,
    satisfy: (signatureOf) => {
      const signature = signer && signatureOf(0);
      return signature ? [signature, signer] : 'no signature for the key';
    },
  };
}

function scriptLeaf(script: Uint8Array): Leaf {
  for (const read of SCRIPT_LEAVES) {
    const leaf: ScriptLeaf | undefined = read(script);
    if (leaf) return { ...leaf, scheme: 'ecdsa' };
  }
  return fail('the script is not a supported multisig script');
}

function witnessV0(input: PsbtInput, program: Uint8Array, amountScript: Uint8Array | undefined): SpendableOutput {
  if (program.length === 20) {
    return { plan: plan(keyHashLeaf(input, program), witness(undefined, amountScript)), ecdsa: { scriptCode: p2pkhScript(program), segwit: true } };
  }
  const script = input.witnessScript ?? fail('the witness script is missing');
  if (!equalBytes(sha256(script), program)) fail('the witness script does not match the spent output');
  return { plan: plan(scriptLeaf(script), witness(script, amountScript)), ecdsa: { scriptCode: script, segwit: true } };
}

function taprootKeyPath(outputKey: Uint8Array): SpendableOutput {
  const leaf: Leaf = {
    name: 'key',
    keys: [outputKey],
    signers: oneKey(0),
    scheme: 'schnorr',
    stack: [SCHNORR_SIGNATURE],
    satisfy: (signatureOf) => {
      const signature = signatureOf(0);
      return signature ? [signature] : 'no taproot key path signature';
    },
  };
  return { plan: plan(leaf, witness()) };
}

/**
 * The plan of the output an input spends, from the scripts the input carries; undefined for an
 * output of no kind this service spends. Throws OutputPlanError when a script it needs is missing
 * or does not match the output.
 */
export function spendableOutput(input: PsbtInput, utxo: TxOutput): SpendableOutput | undefined {
  const spk = utxo.script;
  if (isP2pkh(spk)) return { plan: plan(keyHashLeaf(input, spk.subarray(3, 23)), legacy()), ecdsa: { scriptCode: spk, segwit: false } };
  if (isP2wpkh(spk) || isP2wsh(spk)) return witnessV0(input, spk.subarray(2), undefined);
  if (isP2sh(spk)) {
    const redeem = input.redeemScript ?? fail('the redeem script is missing');
    if (!equalBytes(hash160(redeem), spk.subarray(2, 22))) fail('the redeem script does not match the spent output');
    const program = witnessProgram(redeem);
    if (program && program.version === 0) return witnessV0(input, program.program, redeem);
    if (program) fail('unsupported nested witness program');
    return { plan: plan(scriptLeaf(redeem), legacy(redeem)), ecdsa: { scriptCode: redeem, segwit: false } };
  }
  if (isP2tr(spk)) return taprootKeyPath(spk.subarray(2));
  return undefined;
}

const PSBT_IN_TAP_SCRIPT_SIG = 0x14;

/** A tapscript signature (PSBT_IN_TAP_SCRIPT_SIG, kept among the input's other fields) of an x-only key for a leaf. */
function tapScriptSig(input: PsbtInput, key: Uint8Array, leafHash: Uint8Array): Uint8Array | undefined {
  const xOnly = key.length === 33 ? key.subarray(1) : key;
  const entry = input.other.find(
    (kv) => kv.key.length === 65 && kv.key[0] === PSBT_IN_TAP_SCRIPT_SIG && equalBytes(kv.key.subarray(1, 33), xOnly) && equalBytes(kv.key.subarray(33), leafHash),
  );
  return entry?.value;
}

/**
 * The signatures an input holds for a path of its output's plan, by key index: partial ECDSA
 * signatures by key, the taproot key-path signature for key 0 of a key path, tapscript signatures
 * by key and the path's leaf.
 */
export function signaturesFor(input: PsbtInput, plan: OutputSpendPlan, path: OutputSpendPath): SignatureOf {
  const { tapLeafHash } = path;
  if (tapLeafHash) return (key) => (plan.keys[key] ? tapScriptSig(input, plan.keys[key], tapLeafHash) : undefined);
  if (path.scheme === 'schnorr') return (key) => (key === 0 ? input.tapKeySig : undefined);
  return (key) => {
    const pubkey = plan.keys[key];
    return pubkey && input.partialSigs.find((s) => equalBytes(s.pubkey, pubkey))?.signature;
  };
}
