/**
 * Signature hashes: legacy (pre-segwit), BIP143 (witness v0) and BIP341 (taproot key path).
 * All return the 32-byte message a signature commits to, in internal byte order.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { concatBytes, fromHex } from '../bytes.js';
import { CoreError } from '../errors.js';
import { encodeVarint, u32le, u64le, type Transaction, type TxOutput } from '../tx.js';

export class SighashError extends CoreError {}

export const SIGHASH_DEFAULT = 0x00;
export const SIGHASH_ALL = 0x01;
export const SIGHASH_NONE = 0x02;
export const SIGHASH_SINGLE = 0x03;
export const SIGHASH_ANYONECANPAY = 0x80;

const OP_CODESEPARATOR = 0xab;
const hash256 = (b: Uint8Array) => sha256(sha256(b));
const varBytes = (b: Uint8Array) => concatBytes(encodeVarint(b.length), b);
const outpoint = (tx: Transaction, i: number) => concatBytes(fromHex(tx.inputs[i]!.txid).reverse(), u32le(tx.inputs[i]!.vout));
const serializeOutput = (o: TxOutput) => concatBytes(u64le(o.value), varBytes(o.script));

/** The script code with OP_CODESEPARATOR opcodes removed, as Core's CTransactionSignatureSerializer writes it. */
function legacyScriptCode(script: Uint8Array): Uint8Array {
  const kept: number[] = [];
  let i = 0;
  let separators = 0;
  const copyUpTo = (end: number, from: number) => {
    for (let k = from; k < end; k++) kept.push(script[k]!);
  };
  let segmentStart = 0;
  while (i < script.length) {
    const op = script[i++]!;
    let length = 0;
    if (op <= 0x4e) {
      const lengthBytes = op === 0x4c ? 1 : op === 0x4d ? 2 : op === 0x4e ? 4 : 0;
      if (lengthBytes === 0) length = op;
      else {
        if (i + lengthBytes > script.length) break;
        for (let b = lengthBytes - 1; b >= 0; b--) length = length * 256 + script[i + b]!;
        i += lengthBytes;
      }
      if (i + length > script.length) break;
      i += length;
    } else if (op === OP_CODESEPARATOR) {
      copyUpTo(i - 1, segmentStart);
      segmentStart = i;
      separators++;
    }
  }
  copyUpTo(i, segmentStart);
  // Core declares the length as the full size minus separators even when parsing stopped early.
  const body = Uint8Array.from(kept);
  return concatBytes(encodeVarint(script.length - separators), body);
}

/** Legacy SignatureHash (SIGVERSION_BASE), including the SIGHASH_SINGLE "one" quirk. */
export function legacySighash(tx: Transaction, inputIndex: number, scriptCode: Uint8Array, hashType: number): Uint8Array {
  if (inputIndex < 0 || inputIndex >= tx.inputs.length) throw new SighashError('invalid_input_index', 'Input index out of range');
  const base = hashType & 0x1f;
  const anyoneCanPay = (hashType & SIGHASH_ANYONECANPAY) !== 0;
  if (base === SIGHASH_SINGLE && inputIndex >= tx.outputs.length) {
    const one = new Uint8Array(32);
    one[0] = 1;
    return one;
  }
  const parts: Uint8Array[] = [u32le(tx.version >>> 0)];
  const inputIndexes = anyoneCanPay ? [inputIndex] : tx.inputs.map((_, i) => i);
  parts.push(encodeVarint(inputIndexes.length));
  for (const i of inputIndexes) {
    const own = i === inputIndex;
    const sequence = !own && (base === SIGHASH_NONE || base === SIGHASH_SINGLE) ? 0 : tx.inputs[i]!.sequence;
    parts.push(outpoint(tx, i), own ? legacyScriptCode(scriptCode) : Uint8Array.of(0), u32le(sequence));
  }
  if (base === SIGHASH_NONE) parts.push(encodeVarint(0));
  else if (base === SIGHASH_SINGLE) {
    parts.push(encodeVarint(inputIndex + 1));
    for (let o = 0; o < inputIndex; o++) parts.push(u64le(0xffffffffffffffffn), Uint8Array.of(0));
    parts.push(serializeOutput(tx.outputs[inputIndex]!));
  } else {
    parts.push(encodeVarint(tx.outputs.length), ...tx.outputs.map(serializeOutput));
  }
  parts.push(u32le(tx.locktime), u32le(hashType >>> 0));
  return hash256(concatBytes(...parts));
}

/** BIP143 signature hash of a witness v0 input spending `amount` satoshis. */
export function segwitV0Sighash(tx: Transaction, inputIndex: number, scriptCode: Uint8Array, amount: bigint, hashType: number): Uint8Array {
  if (inputIndex < 0 || inputIndex >= tx.inputs.length) throw new SighashError('invalid_input_index', 'Input index out of range');
  const base = hashType & 0x1f;
  const anyoneCanPay = (hashType & SIGHASH_ANYONECANPAY) !== 0;
  const zero = new Uint8Array(32);
  const hashPrevouts = anyoneCanPay ? zero : hash256(concatBytes(...tx.inputs.map((_, i) => outpoint(tx, i))));
  const hashSequence =
    anyoneCanPay || base === SIGHASH_SINGLE || base === SIGHASH_NONE ? zero : hash256(concatBytes(...tx.inputs.map((i) => u32le(i.sequence))));
  let hashOutputs = zero;
  if (base !== SIGHASH_SINGLE && base !== SIGHASH_NONE) hashOutputs = hash256(concatBytes(...tx.outputs.map(serializeOutput)));
  else if (base === SIGHASH_SINGLE && inputIndex < tx.outputs.length) hashOutputs = hash256(serializeOutput(tx.outputs[inputIndex]!));
  const input = tx.inputs[inputIndex]!;
  return hash256(
    concatBytes(
      u32le(tx.version >>> 0),
      hashPrevouts,
      hashSequence,
      outpoint(tx, inputIndex),
      varBytes(scriptCode),
      u64le(amount),
      u32le(input.sequence),
      hashOutputs,
      u32le(tx.locktime),
      u32le(hashType >>> 0),
    ),
  );
}

const tagHashes = new Map<string, Uint8Array>();
/** BIP340 tagged hash. */
export function taggedHash(tag: string, ...data: Uint8Array[]): Uint8Array {
  let tagHash = tagHashes.get(tag);
  if (!tagHash) {
    tagHash = sha256(new TextEncoder().encode(tag));
    tagHashes.set(tag, tagHash);
  }
  return sha256(concatBytes(tagHash, tagHash, ...data));
}

export const isValidTaprootHashType = (t: number): boolean => t === 0 || (t >= 1 && t <= 3) || (t >= 0x81 && t <= 0x83);

/** The BIP341 SigMsg (without the epoch byte): a key-path spend (ext_flag 0), or with `leafHash` a BIP342 script-path one (ext_flag 1). */
export function taprootSigMsg(tx: Transaction, inputIndex: number, prevouts: readonly TxOutput[], hashType: number, annex?: Uint8Array, leafHash?: Uint8Array): Uint8Array {
  if (!isValidTaprootHashType(hashType)) throw new SighashError('invalid_sighash_type', `Invalid taproot sighash type ${hashType}`);
  if (inputIndex < 0 || inputIndex >= tx.inputs.length) throw new SighashError('invalid_input_index', 'Input index out of range');
  if (prevouts.length !== tx.inputs.length) throw new SighashError('missing_prevouts', 'Taproot signature hashes need every spent output');
  const base = hashType & 0x03;
  const anyoneCanPay = (hashType & SIGHASH_ANYONECANPAY) !== 0;
  const parts: Uint8Array[] = [Uint8Array.of(hashType), u32le(tx.version >>> 0), u32le(tx.locktime)];
  if (!anyoneCanPay) {
    parts.push(
      sha256(concatBytes(...tx.inputs.map((_, i) => outpoint(tx, i)))),
      sha256(concatBytes(...prevouts.map((p) => u64le(p.value)))),
      sha256(concatBytes(...prevouts.map((p) => varBytes(p.script)))),
      sha256(concatBytes(...tx.inputs.map((i) => u32le(i.sequence)))),
    );
  }
  if (base !== SIGHASH_NONE && base !== SIGHASH_SINGLE) parts.push(sha256(concatBytes(...tx.outputs.map(serializeOutput))));
  parts.push(Uint8Array.of((leafHash ? 2 : 0) + (annex ? 1 : 0)));
  if (anyoneCanPay) {
    const prev = prevouts[inputIndex]!;
    parts.push(outpoint(tx, inputIndex), u64le(prev.value), varBytes(prev.script), u32le(tx.inputs[inputIndex]!.sequence));
  } else {
    parts.push(u32le(inputIndex));
  }
  if (annex) parts.push(sha256(varBytes(annex)));
  if (base === SIGHASH_SINGLE) {
    const output = tx.outputs[inputIndex];
    if (!output) throw new SighashError('invalid_sighash_single', 'SIGHASH_SINGLE without a matching output');
    parts.push(sha256(serializeOutput(output)));
  }
  // BIP342: the leaf, key version 0, no OP_CODESEPARATOR executed.
  if (leafHash) parts.push(leafHash, Uint8Array.of(0), u32le(0xffffffff));
  return concatBytes(...parts);
}

/** BIP341 signature hash of a taproot key-path spend. */
export function taprootKeyPathSighash(
  tx: Transaction,
  inputIndex: number,
  prevouts: readonly TxOutput[],
  hashType: number,
  annex?: Uint8Array,
): Uint8Array {
  return taggedHash('TapSighash', Uint8Array.of(0), taprootSigMsg(tx, inputIndex, prevouts, hashType, annex));
}

/** BIP342 signature hash of a tapscript spend of the leaf `leafHash`. */
export function taprootScriptPathSighash(tx: Transaction, inputIndex: number, prevouts: readonly TxOutput[], hashType: number, leafHash: Uint8Array): Uint8Array {
  return taggedHash('TapSighash', Uint8Array.of(0), taprootSigMsg(tx, inputIndex, prevouts, hashType, undefined, leafHash));
}
