/**
 * PSBT binary format: parsing of versions 0 (BIP174) and 2 (BIP370) with the checks Bitcoin Core
 * applies. Writing is in write.ts.
 */
import { base64 } from '@scure/base';
import { reverseHex, toHex } from '../bytes.js';
import { isValidPublicKey } from '../signing/signature.js';
import { parseTransaction, txid, type Transaction } from '../tx.js';
import { CoreError } from '../errors.js';
import {
  PsbtError,
  emptyInput,
  emptyOutput,
  type GlobalXpub,
  type KeyOrigin,
  type KeyValue,
  type Psbt,
  type PsbtInput,
  type PsbtOutput,
  type TaprootBip32Derivation,
} from './types.js';

const MAGIC = Uint8Array.of(0x70, 0x73, 0x62, 0x74, 0xff);
const LOCKTIME_THRESHOLD = 500_000_000;

const fail = (message: string, code = 'invalid_psbt'): never => {
  throw new PsbtError(code, message);
};

class ByteReader {
  offset = 0;
  constructor(readonly bytes: Uint8Array) {}
  get remaining(): number {
    return this.bytes.length - this.offset;
  }
  take(n: number): Uint8Array {
    if (n > this.remaining) fail('PSBT is truncated');
    const out = this.bytes.subarray(this.offset, this.offset + n);
    this.offset += n;
    return out;
  }
  /** Canonical compact size, as Core's ReadCompactSize requires. */
  compactSize(): number {
    const first = this.take(1)[0]!;
    if (first < 0xfd) return first;
    const width = first === 0xfd ? 2 : first === 0xfe ? 4 : 8;
    const b = this.take(width);
    let n = 0;
    for (let i = width - 1; i >= 0; i--) n = n * 256 + b[i]!;
    const minimum = first === 0xfd ? 0xfd : first === 0xfe ? 0x10000 : 0x100000000;
    if (n < minimum) fail('Non-canonical compact size');
    if (n > Number.MAX_SAFE_INTEGER) fail('Compact size out of range');
    return n;
  }
  u32(): number {
    const b = this.take(4);
    return (b[0]! | (b[1]! << 8) | (b[2]! << 16) | (b[3]! << 24)) >>> 0;
  }
  u64(): bigint {
    const lo = BigInt(this.u32());
    return (BigInt(this.u32()) << 32n) | lo;
  }
  varBytes(): Uint8Array {
    return this.take(this.compactSize());
  }
}

interface RawEntry {
  type: number;
  /** The whole key, type included (uniqueness and `unknown` are about whole keys). */
  key: Uint8Array;
  keyData: Uint8Array;
  value: Uint8Array;
}

/** Reads one map up to its 0x00 separator, refusing duplicate keys. */
function readMap(r: ByteReader, where: string): RawEntry[] {
  const entries: RawEntry[] = [];
  const seen = new Set<string>();
  for (;;) {
    const keyLength = r.compactSize();
    if (keyLength === 0) return entries;
    const key = r.take(keyLength);
    const keyReader = new ByteReader(key);
    const type = keyReader.compactSize();
    const keyData = key.subarray(keyReader.offset);
    const value = r.varBytes();
    const id = toHex(key);
    if (seen.has(id)) fail(`Duplicate key in ${where}`);
    seen.add(id);
    entries.push({ type, key, keyData, value });
  }
}

/** Runs a value decoder that must consume the whole value. */
function exact<T>(value: Uint8Array, what: string, read: (r: ByteReader) => T): T {
  const r = new ByteReader(value);
  let out: T;
  try {
    out = read(r);
  } catch (e) {
    if (e instanceof PsbtError) fail(`Invalid ${what}`);
    throw e;
  }
  if (r.remaining !== 0) fail(`Invalid ${what}: trailing bytes`);
  return out;
}

function noKeyData(e: RawEntry, what: string): void {
  if (e.keyData.length !== 0) fail(`Key of ${what} must have no key data`);
}

function readTx(value: Uint8Array, what: string, witness: boolean): Transaction {
  try {
    return parseTransaction(value, { witness });
  } catch (e) {
    if (e instanceof CoreError) fail(`Invalid ${what}: ${e.message}`);
    throw e;
  }
}

function readKeyOrigin(r: ByteReader): KeyOrigin {
  const length = r.remaining;
  if (length === 0 || length % 4 !== 0) fail('Invalid length for key origin');
  const fingerprint = Uint8Array.from(r.take(4));
  const path: number[] = [];
  while (r.remaining > 0) path.push(r.u32());
  return { fingerprint, path };
}

/**
 * Whether a public key is a point of the curve, each distinct key checked once per PSBT: a key appears with its
 * signature and its derivation, and a check costs about as much as reading a whole input.
 */
type KeyCheck = (key: Uint8Array) => boolean;
function keyCheck(): KeyCheck {
  const valid = new Set<string>();
  return (key) => {
    const hex = toHex(key);
    if (valid.has(hex)) return true;
    if (!isValidPublicKey(key)) return false;
    valid.add(hex);
    return true;
  };
}

function readPubkeyKey(e: RawEntry, what: string, isValidKey: KeyCheck): Uint8Array {
  if (e.keyData.length !== 33 && e.keyData.length !== 65) fail(`Size of key was not the expected size for ${what}`);
  if (!isValidKey(e.keyData)) fail(`Invalid public key in ${what}`);
  return Uint8Array.from(e.keyData);
}

function readTapDerivation(e: RawEntry): TaprootBip32Derivation {
  if (e.keyData.length !== 32) fail('Size of key was not the expected size for a taproot BIP32 derivation');
  return exact(e.value, 'taproot BIP32 derivation', (r) => {
    const count = r.compactSize();
    const leafHashes: Uint8Array[] = [];
    for (let i = 0; i < count; i++) leafHashes.push(Uint8Array.from(r.take(32)));
    return { pubkey: Uint8Array.from(e.keyData), leafHashes, ...readKeyOrigin(r) };
  });
}

const copy = (e: RawEntry): KeyValue => ({ key: Uint8Array.from(e.key), value: Uint8Array.from(e.value) });

function readU32Value(e: RawEntry, what: string): number {
  noKeyData(e, what);
  return exact(e.value, what, (r) => r.u32());
}

function readInput(entries: RawEntry[], version: 0 | 2, isValidKey: KeyCheck): PsbtInput {
  const input = emptyInput();
  for (const e of entries) {
    const v2Only = (what: string) => {
      if (version !== 2) fail(`${what} is not allowed in a version 0 PSBT`);
    };
    switch (e.type) {
      case 0x00:
        noKeyData(e, 'non-witness UTXO');
        input.nonWitnessUtxo = readTx(e.value, 'non-witness UTXO', true);
        break;
      case 0x01:
        noKeyData(e, 'witness UTXO');
        input.witnessUtxo = exact(e.value, 'witness UTXO', (r) => ({ value: r.u64(), script: Uint8Array.from(r.varBytes()) }));
        break;
      case 0x02:
        input.partialSigs.push({ pubkey: readPubkeyKey(e, 'a partial signature', isValidKey), signature: Uint8Array.from(e.value) });
        break;
      case 0x03:
        input.sighashType = readU32Value(e, 'sighash type');
        break;
      case 0x04:
        noKeyData(e, 'redeem script');
        input.redeemScript = Uint8Array.from(e.value);
        break;
      case 0x05:
        noKeyData(e, 'witness script');
        input.witnessScript = Uint8Array.from(e.value);
        break;
      case 0x06:
        input.bip32Derivations.push({ pubkey: readPubkeyKey(e, 'a BIP32 derivation', isValidKey), ...exact(e.value, 'BIP32 derivation', readKeyOrigin) });
        break;
      case 0x07:
        noKeyData(e, 'final scriptSig');
        input.finalScriptSig = Uint8Array.from(e.value);
        break;
      case 0x08:
        noKeyData(e, 'final scriptWitness');
        input.finalScriptWitness = exact(e.value, 'final scriptWitness', (r) => {
          const count = r.compactSize();
          const items: Uint8Array[] = [];
          for (let i = 0; i < count; i++) items.push(Uint8Array.from(r.varBytes()));
          return items;
        });
        break;
      case 0x0a:
      case 0x0c:
        if (e.keyData.length !== 20) fail('Size of key was not the expected size for a hash preimage');
        input.other.push(copy(e));
        break;
      case 0x0b:
      case 0x0d:
        if (e.keyData.length !== 32) fail('Size of key was not the expected size for a hash preimage');
        input.other.push(copy(e));
        break;
      case 0x0e:
        v2Only('Previous txid');
        noKeyData(e, 'previous txid');
        if (e.value.length !== 32) fail('Previous txid must be 32 bytes');
        input.previousTxid = reverseHex(e.value);
        break;
      case 0x0f:
        v2Only('Spent output index');
        input.outputIndex = readU32Value(e, 'spent output index');
        break;
      case 0x10:
        v2Only('Sequence');
        input.sequence = readU32Value(e, 'sequence');
        break;
      case 0x11:
        v2Only('Required time locktime');
        input.requiredTimeLocktime = readU32Value(e, 'required time locktime');
        if (input.requiredTimeLocktime < LOCKTIME_THRESHOLD) fail('Required time locktime is below 500000000');
        break;
      case 0x12:
        v2Only('Required height locktime');
        input.requiredHeightLocktime = readU32Value(e, 'required height locktime');
        if (input.requiredHeightLocktime >= LOCKTIME_THRESHOLD) fail('Required height locktime is not below 500000000');
        break;
      case 0x13:
        noKeyData(e, 'taproot key path signature');
        if (e.value.length !== 64 && e.value.length !== 65) fail('Taproot key path signature must be 64 or 65 bytes');
        input.tapKeySig = Uint8Array.from(e.value);
        break;
      case 0x14:
        if (e.keyData.length !== 64) fail('Size of key was not the expected size for a taproot script signature');
        if (e.value.length !== 64 && e.value.length !== 65) fail('Taproot script signature must be 64 or 65 bytes');
        input.other.push(copy(e));
        break;
      case 0x15:
        if (e.keyData.length < 33 || (e.keyData.length - 33) % 32 !== 0 || e.keyData.length > 33 + 128 * 32) {
          fail('Invalid taproot control block size');
        }
        if (e.value.length < 1) fail('Taproot leaf script is empty');
        input.other.push(copy(e));
        break;
      case 0x16:
        input.tapBip32Derivations.push(readTapDerivation(e));
        break;
      case 0x17:
        noKeyData(e, 'taproot internal key');
        if (e.value.length !== 32) fail('Taproot internal key must be 32 bytes');
        input.tapInternalKey = Uint8Array.from(e.value);
        break;
      case 0x18:
        noKeyData(e, 'taproot merkle root');
        if (e.value.length !== 32) fail('Taproot merkle root must be 32 bytes');
        input.other.push(copy(e));
        break;
      case 0x1a:
      case 0x1b:
      case 0x1c:
        input.other.push(copy(e));
        break;
      case 0xfc:
        input.proprietary.push(copy(e));
        break;
      default:
        input.unknown.push(copy(e));
    }
  }
  if (version === 2) {
    if (input.previousTxid === undefined) fail('Version 2 input has no previous txid');
    if (input.outputIndex === undefined) fail('Version 2 input has no spent output index');
  }
  return input;
}

function readOutput(entries: RawEntry[], version: 0 | 2, isValidKey: KeyCheck): PsbtOutput {
  const output = emptyOutput();
  for (const e of entries) {
    switch (e.type) {
      case 0x00:
        noKeyData(e, 'output redeem script');
        output.redeemScript = Uint8Array.from(e.value);
        break;
      case 0x01:
        noKeyData(e, 'output witness script');
        output.witnessScript = Uint8Array.from(e.value);
        break;
      case 0x02:
        output.bip32Derivations.push({ pubkey: readPubkeyKey(e, 'an output BIP32 derivation', isValidKey), ...exact(e.value, 'BIP32 derivation', readKeyOrigin) });
        break;
      case 0x03:
        if (version !== 2) fail('Output amount is not allowed in a version 0 PSBT');
        noKeyData(e, 'output amount');
        output.amount = exact(e.value, 'output amount', (r) => r.u64());
        break;
      case 0x04:
        if (version !== 2) fail('Output script is not allowed in a version 0 PSBT');
        noKeyData(e, 'output script');
        output.script = Uint8Array.from(e.value);
        break;
      case 0x05:
        noKeyData(e, 'output taproot internal key');
        if (e.value.length !== 32) fail('Taproot internal key must be 32 bytes');
        output.tapInternalKey = Uint8Array.from(e.value);
        break;
      case 0x06:
        noKeyData(e, 'taproot tree');
        if (e.value.length === 0) fail('Taproot tree is empty');
        output.other.push(copy(e));
        break;
      case 0x07:
        output.tapBip32Derivations.push(readTapDerivation(e));
        break;
      case 0x08:
        output.other.push(copy(e));
        break;
      case 0xfc:
        output.proprietary.push(copy(e));
        break;
      default:
        output.unknown.push(copy(e));
    }
  }
  if (version === 2 && (output.amount === undefined || output.script === undefined)) fail('Version 2 output needs an amount and a script');
  return output;
}

/** Decodes base64 text or raw bytes into a PSBT; any malformed input throws PsbtError. */
export function parsePsbt(input: string | Uint8Array): Psbt {
  const steps = parsePsbtInSteps(input);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * `parsePsbt` one input or output at a time: the generator yields after each, so that a caller can give way
 * between them on a PSBT of a thousand inputs, and returns the PSBT (or throws as `parsePsbt` does).
 */
export function* parsePsbtInSteps(input: string | Uint8Array): Generator<void, Psbt> {
  let bytes: Uint8Array;
  if (typeof input === 'string') {
    try {
      bytes = base64.decode(input.trim());
    } catch {
      return fail('PSBT is not valid base64', 'invalid_base64');
    }
  } else bytes = input;
  try {
    return yield* parseBytes(bytes);
  } catch (e) {
    if (e instanceof PsbtError) throw e;
    if (e instanceof CoreError) throw new PsbtError('invalid_psbt', e.message);
    throw new PsbtError('invalid_psbt', 'Malformed PSBT');
  }
}

function* parseBytes(bytes: Uint8Array): Generator<void, Psbt> {
  if (bytes.length < MAGIC.length || !MAGIC.every((b, i) => bytes[i] === b)) fail('Not a PSBT: bad magic bytes');
  const r = new ByteReader(bytes);
  r.take(MAGIC.length);
  const globals = readMap(r, 'the global map');
  let unsignedTx: Transaction | undefined;
  let version: number | undefined;
  let txVersion: number | undefined;
  let fallbackLocktime: number | undefined;
  let inputCount: number | undefined;
  let outputCount: number | undefined;
  let txModifiable: number | undefined;
  const xpubs: GlobalXpub[] = [];
  const proprietary: KeyValue[] = [];
  const unknown: KeyValue[] = [];
  for (const e of globals) {
    switch (e.type) {
      case 0x00:
        noKeyData(e, 'unsigned transaction');
        unsignedTx = readTx(e.value, 'unsigned transaction', false);
        if (unsignedTx.inputs.some((i) => i.scriptSig.length > 0)) fail('Unsigned tx does not have empty scriptSigs and scriptWitnesses');
        break;
      case 0x01: {
        if (e.keyData.length !== 78) fail('Size of key was not the expected size for a global xpub');
        const origin = exact(e.value, 'global xpub origin', readKeyOrigin);
        xpubs.push({ xpub: Uint8Array.from(e.keyData), ...origin });
        break;
      }
      case 0x02:
        txVersion = readU32Value(e, 'transaction version');
        break;
      case 0x03:
        fallbackLocktime = readU32Value(e, 'fallback locktime');
        break;
      case 0x04:
        noKeyData(e, 'input count');
        inputCount = exact(e.value, 'input count', (x) => x.compactSize());
        break;
      case 0x05:
        noKeyData(e, 'output count');
        outputCount = exact(e.value, 'output count', (x) => x.compactSize());
        break;
      case 0x06:
        noKeyData(e, 'transaction modifiable flags');
        if (e.value.length !== 1) fail('Transaction modifiable flags must be one byte');
        txModifiable = e.value[0]!;
        break;
      case 0xfb:
        version = readU32Value(e, 'PSBT version');
        break;
      case 0xfc:
        proprietary.push(copy(e));
        break;
      default:
        unknown.push(copy(e));
    }
  }
  const psbtVersion = version ?? 0;
  if (psbtVersion !== 0 && psbtVersion !== 2) fail(`Unsupported PSBT version ${psbtVersion}`, 'unsupported_version');
  if (psbtVersion === 0) {
    if (!unsignedTx) fail('No unsigned transaction was provided');
    if ([txVersion, fallbackLocktime, inputCount, outputCount, txModifiable].some((v) => v !== undefined)) {
      fail('Version 2 global fields are not allowed in a version 0 PSBT');
    }
  } else {
    if (unsignedTx) fail('A version 2 PSBT must not carry an unsigned transaction');
    if (txVersion === undefined || inputCount === undefined || outputCount === undefined) {
      fail('A version 2 PSBT needs the transaction version, input count and output count');
    }
  }
  const v = psbtVersion as 0 | 2;
  const nInputs = unsignedTx ? unsignedTx.inputs.length : inputCount!;
  const nOutputs = unsignedTx ? unsignedTx.outputs.length : outputCount!;
  const isValidKey = keyCheck();
  const inputs: PsbtInput[] = [];
  for (let i = 0; i < nInputs; i++) {
    if (r.remaining === 0) fail('Inputs provided do not match the number of inputs in the transaction');
    inputs.push(readInput(readMap(r, `input ${i}`), v, isValidKey));
    yield;
  }
  const outputs: PsbtOutput[] = [];
  for (let i = 0; i < nOutputs; i++) {
    if (r.remaining === 0) fail('Outputs provided do not match the number of outputs in the transaction');
    outputs.push(readOutput(readMap(r, `output ${i}`), v, isValidKey));
    yield;
  }
  if (r.remaining !== 0) fail('Extra data after PSBT');
  const tx = unsignedTx ?? assembleV2Transaction(txVersion!, fallbackLocktime, inputs, outputs);
  checkUtxos(tx, inputs);
  const psbt: Psbt = { version: v, tx, xpubs, inputs, outputs, proprietary, unknown };
  if (fallbackLocktime !== undefined) psbt.fallbackLocktime = fallbackLocktime;
  if (txModifiable !== undefined) psbt.txModifiable = txModifiable;
  return psbt;
}

/** Core: a non-witness UTXO must be the transaction the input spends, and have the spent output. */
function checkUtxos(tx: Transaction, inputs: PsbtInput[]): void {
  inputs.forEach((input, i) => {
    const prev = input.nonWitnessUtxo;
    const spent = tx.inputs[i]!;
    if (prev && txid(prev) !== spent.txid) fail(`Non-witness UTXO of input ${i} does not match the outpoint`);
    if (prev && spent.vout >= prev.outputs.length) fail(`Input ${i} spends an output that does not exist`);
  });
}

/** BIP370: the transaction described by a version 2 PSBT, including its locktime rule. */
function assembleV2Transaction(version: number, fallbackLocktime: number | undefined, inputs: PsbtInput[], outputs: PsbtOutput[]): Transaction {
  return {
    version,
    inputs: inputs.map((i) => ({ txid: i.previousTxid!, vout: i.outputIndex!, scriptSig: new Uint8Array(0), sequence: i.sequence ?? 0xffffffff, witness: [] })),
    outputs: outputs.map((o) => ({ value: o.amount!, script: o.script! })),
    locktime: computeV2Locktime(fallbackLocktime, inputs),
  };
}

function computeV2Locktime(fallbackLocktime: number | undefined, inputs: PsbtInput[]): number {
  const constrained = inputs.filter((i) => i.requiredHeightLocktime !== undefined || i.requiredTimeLocktime !== undefined);
  if (constrained.length === 0) return fallbackLocktime ?? 0;
  const allowHeight = constrained.every((i) => i.requiredHeightLocktime !== undefined);
  const allowTime = constrained.every((i) => i.requiredTimeLocktime !== undefined);
  if (allowHeight) return Math.max(...constrained.map((i) => i.requiredHeightLocktime!));
  if (allowTime) return Math.max(...constrained.map((i) => i.requiredTimeLocktime!));
  return fail('Inputs require both a height and a time locktime');
}

export { serializePsbt, serializePsbtV2, psbtToBase64, psbtTxid } from './write.js';
