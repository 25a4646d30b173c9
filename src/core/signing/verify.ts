/**
 * Verification of a signed transaction's signatures against the outputs it spends, for the script
 * types the service builds: pkh, wpkh, sh-wpkh, sh multisig, wsh multisig, sh-wsh multisig and
 * taproot key path. Anything else is reported as unsupported, never as valid.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { equalBytes } from '../bytes.js';
import { CoreError } from '../errors.js';
import { parseScriptOps } from '../decode.js';
import { p2pkhScript, witnessProgram } from '../address.js';
import { hash160, parseBareMultisig } from '../script-type.js';
import type { Transaction, TxOutput } from '../tx.js';
import { legacySighash, segwitV0Sighash, taprootKeyPathSighash, isValidTaprootHashType, SighashError } from './sighash.js';
import { checkEcdsaSignature, checkSchnorrSignature, isCompressedPublicKey } from './signature.js';

/** A transaction (or PSBT signature) that does not verify; `code` is `invalid_signature` or `unsupported_script`. */
export class VerifyError extends CoreError {}

export type SpendType = 'pkh' | 'wpkh' | 'sh-wpkh' | 'sh-multi' | 'wsh-multi' | 'sh-wsh-multi' | 'tr';

export interface InputVerification {
  index: number;
  valid: boolean;
  type?: SpendType;
  /** Why the input does not verify (absent when valid). */
  reason?: string;
}

export interface TransactionVerification {
  valid: boolean;
  inputs: InputVerification[];
}

export const isP2pkh = (s: Uint8Array): boolean =>
  s.length === 25 && s[0] === 0x76 && s[1] === 0xa9 && s[2] === 20 && s[23] === 0x88 && s[24] === 0xac;
export const isP2sh = (s: Uint8Array): boolean => s.length === 23 && s[0] === 0xa9 && s[1] === 20 && s[22] === 0x87;
export const isP2wpkh = (s: Uint8Array): boolean => s.length === 22 && s[0] === 0x00 && s[1] === 20;
export const isP2wsh = (s: Uint8Array): boolean => s.length === 34 && s[0] === 0x00 && s[1] === 32;
export const isP2tr = (s: Uint8Array): boolean => s.length === 34 && s[0] === 0x51 && s[1] === 32;

class Failure extends Error {}
const fail = (reason: string): never => {
  throw new Failure(reason);
};

/** The data pushes of a push-only script, or a failure. */
function pushes(script: Uint8Array): Uint8Array[] {
  const { ops, complete } = parseScriptOps(script);
  if (!complete) fail('scriptSig does not parse');
  return ops.map((op) => op.data ?? fail('scriptSig is not push-only'));
}

/** The signature hash of an ECDSA signature in a given spending context. */
export type EcdsaHasher = (hashType: number) => Uint8Array;

export function ecdsaHasher(tx: Transaction, index: number, scriptCode: Uint8Array, segwitAmount?: bigint): EcdsaHasher {
  return (hashType) =>
    segwitAmount === undefined ? legacySighash(tx, index, scriptCode, hashType) : segwitV0Sighash(tx, index, scriptCode, segwitAmount, hashType);
}

function checkSignature(sig: Uint8Array, pubkey: Uint8Array, hasher: EcdsaHasher, what: string): void {
  if (sig.length === 0) fail(`${what}: signature is missing`);
  const failure = checkEcdsaSignature(sig, hasher(sig[sig.length - 1]!), pubkey);
  if (failure) fail(`${what}: ${failure.replaceAll('_', ' ')}`);
}

/** OP_CHECKMULTISIG: exactly m signatures, each matching a later key than the previous one. */
function checkMultisig(sigs: Uint8Array[], script: Uint8Array, hasher: EcdsaHasher, segwit: boolean): void {
  const multisig = parseBareMultisig(script) ?? fail('script is not a supported multisig script');
  if (segwit && !multisig.keys.every(isCompressedPublicKey)) fail('witness script has an uncompressed key');
  if (sigs.length !== multisig.m) fail(`expected ${multisig.m} signatures, found ${sigs.length}`);
  let key = 0;
  for (const [n, sig] of sigs.entries()) {
    let matched = false;
    while (!matched && key < multisig.keys.length) {
      if (sigs.length - n > multisig.keys.length - key) break;
      const pubkey = multisig.keys[key++]!;
      matched = sig.length > 0 && checkEcdsaSignature(sig, hasher(sig[sig.length - 1]!), pubkey) === undefined;
    }
    if (!matched) fail(`signature ${n + 1} does not match any remaining key`);
  }
}

function verifyWitnessV0(tx: Transaction, index: number, program: Uint8Array, amount: bigint, witness: Uint8Array[], nested: boolean): SpendType {
  if (program.length === 20) {
    if (witness.length !== 2) fail('witness must hold a signature and a public key');
    const [sig, pubkey] = witness as [Uint8Array, Uint8Array];
    if (!isCompressedPublicKey(pubkey)) fail('witness public key is not a valid compressed key');
    if (!equalBytes(hash160(pubkey), program)) fail('public key does not match the spent output');
    checkSignature(sig, pubkey, ecdsaHasher(tx, index, p2pkhScript(program), amount), 'signature');
    return nested ? 'sh-wpkh' : 'wpkh';
  }
  if (witness.length < 2) fail('witness is too short');
  const script = witness[witness.length - 1]!;
  if (!equalBytes(sha256(script), program)) fail('witness script does not match the spent output');
  if (witness[0]!.length !== 0) fail('multisig dummy element is not empty');
  checkMultisig(witness.slice(1, -1), script, ecdsaHasher(tx, index, script, amount), true);
  return nested ? 'sh-wsh-multi' : 'wsh-multi';
}

function verifyInput(tx: Transaction, index: number, prevouts: readonly TxOutput[]): SpendType {
  const input = tx.inputs[index]!;
  const prevout = prevouts[index]!;
  const spk = prevout.script;
  if (isP2pkh(spk)) {
    if (input.witness.length > 0) fail('legacy input has witness data');
    const items = pushes(input.scriptSig);
    if (items.length !== 2) fail('scriptSig must hold a signature and a public key');
    const [sig, pubkey] = items as [Uint8Array, Uint8Array];
    if (!equalBytes(hash160(pubkey), spk.subarray(3, 23))) fail('public key does not match the spent output');
    checkSignature(sig, pubkey, ecdsaHasher(tx, index, spk), 'signature');
    return 'pkh';
  }
  if (isP2wpkh(spk) || isP2wsh(spk)) {
    if (input.scriptSig.length > 0) fail('native segwit input has a scriptSig');
    return verifyWitnessV0(tx, index, spk.subarray(2), prevout.value, input.witness, false);
  }
  if (isP2sh(spk)) {
    const items = pushes(input.scriptSig);
    if (items.length === 0) fail('scriptSig is empty');
    const redeem = items[items.length - 1]!;
    if (!equalBytes(hash160(redeem), spk.subarray(2, 22))) fail('redeem script does not match the spent output');
    const program = witnessProgram(redeem);
    if (program) {
      if (items.length !== 1) fail('nested segwit scriptSig must hold only the redeem script');
      if (program.version !== 0 || (program.program.length !== 20 && program.program.length !== 32)) fail('unsupported nested witness program');
      return verifyWitnessV0(tx, index, program.program, prevout.value, input.witness, true);
    }
    if (input.witness.length > 0) fail('legacy input has witness data');
    if (items[0]!.length !== 0) fail('multisig dummy element is not empty');
    checkMultisig(items.slice(1, -1), redeem, ecdsaHasher(tx, index, redeem), false);
    return 'sh-multi';
  }
  if (isP2tr(spk)) {
    if (input.scriptSig.length > 0) fail('taproot input has a scriptSig');
    let stack = input.witness;
    let annex: Uint8Array | undefined;
    if (stack.length >= 2 && stack[stack.length - 1]![0] === 0x50) {
      annex = stack[stack.length - 1]!;
      stack = stack.slice(0, -1);
    }
    if (stack.length !== 1) fail(stack.length === 0 ? 'witness is empty' : 'taproot script path spends are not supported');
    const sig = stack[0]!;
    if (sig.length !== 64 && sig.length !== 65) fail('taproot signature must be 64 or 65 bytes');
    const hashType = sig.length === 65 ? sig[64]! : 0;
    if (sig.length === 65 && (hashType === 0 || !isValidTaprootHashType(hashType))) fail('invalid taproot sighash type');
    const message = taprootKeyPathSighash(tx, index, prevouts, hashType, annex);
    if (!checkSchnorrSignature(sig.subarray(0, 64), message, spk.subarray(2))) fail('signature: invalid signature');
    return 'tr';
  }
  return fail('unsupported script type');
}

/** Checks one input's signatures against the outputs the transaction spends (`prevouts[i]` for input i). */
export function verifyTransactionInput(tx: Transaction, index: number, prevouts: readonly TxOutput[]): InputVerification {
  try {
    return { index, valid: true, type: verifyInput(tx, index, prevouts) };
  } catch (e) {
    if (e instanceof Failure) return { index, valid: false, reason: e.message };
    if (e instanceof SighashError) return { index, valid: false, reason: e.message };
    throw e;
  }
}

/**
 * Checks every input's signatures against the outputs it spends (`prevouts[i]` for input i).
 * Never throws for a bad signature: the result says which input fails and why.
 */
export function verifyTransaction(tx: Transaction, prevouts: readonly TxOutput[]): TransactionVerification {
  if (prevouts.length !== tx.inputs.length) throw new VerifyError('missing_prevouts', 'One spent output is needed for every input');
  const inputs = tx.inputs.map((_, index) => verifyTransactionInput(tx, index, prevouts));
  return { valid: inputs.every((i) => i.valid), inputs };
}

/** Throws VerifyError naming the first input whose signatures do not verify. */
export function assertTransactionVerifies(tx: Transaction, prevouts: readonly TxOutput[]): void {
  const result = verifyTransaction(tx, prevouts);
  const bad = result.inputs.find((i) => !i.valid);
  if (bad) throw new VerifyError('invalid_signature', `Input ${bad.index} does not verify: ${bad.reason}`);
}
