/**
 * Bitcoin transactions: parse and serialise (with and without witness), ids and sizes.
 * Values are integer satoshis (bigint); txids are shown byte-reversed, as Bitcoin Core prints them.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { concatBytes, fromHex, reverseHex, toHex } from './bytes.js';
import { CoreError } from './errors.js';

export class TransactionError extends CoreError {}

export interface TxInput {
  /** Previous transaction id, display (byte-reversed) hex. */
  txid: string;
  vout: number;
  scriptSig: Uint8Array;
  sequence: number;
  witness: Uint8Array[];
}

export interface TxOutput {
  value: bigint;
  script: Uint8Array;
}

export interface Transaction {
  version: number;
  inputs: TxInput[];
  outputs: TxOutput[];
  locktime: number;
}

class Reader {
  private offset = 0;
  constructor(private readonly bytes: Uint8Array) {}
  get done(): boolean {
    return this.offset === this.bytes.length;
  }
  get position(): number {
    return this.offset;
  }
  take(n: number): Uint8Array {
    if (n < 0 || this.offset + n > this.bytes.length) throw new TransactionError('invalid_transaction', 'Transaction is truncated');
    const out = this.bytes.subarray(this.offset, this.offset + n);
    this.offset += n;
    return out;
  }
  u8(): number {
    return this.take(1)[0]!;
  }
  u32(): number {
    const b = this.take(4);
    return (b[0]! | (b[1]! << 8) | (b[2]! << 16) | (b[3]! << 24)) >>> 0;
  }
  i32(): number {
    return this.u32() | 0;
  }
  u64(): bigint {
    const lo = BigInt(this.u32());
    const hi = BigInt(this.u32());
    return (hi << 32n) | lo;
  }
  varint(): number {
    const first = this.u8();
    if (first < 0xfd) return first;
    if (first === 0xfd) return this.u8() | (this.u8() << 8);
    if (first === 0xfe) return this.u32();
    const big = this.u64();
    if (big > BigInt(Number.MAX_SAFE_INTEGER)) throw new TransactionError('invalid_transaction', 'Length out of range');
    return Number(big);
  }
  varBytes(): Uint8Array {
    return this.take(this.varint());
  }
}

export function encodeVarint(n: number): Uint8Array {
  if (n < 0xfd) return Uint8Array.of(n);
  if (n <= 0xffff) return Uint8Array.of(0xfd, n & 0xff, n >>> 8);
  if (n <= 0xffffffff) return concatBytes(Uint8Array.of(0xfe), u32le(n));
  return concatBytes(Uint8Array.of(0xff), u64le(BigInt(n)));
}

export function u32le(n: number): Uint8Array {
  return Uint8Array.of(n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff);
}

export function u64le(n: bigint): Uint8Array {
  const out = new Uint8Array(8);
  for (let i = 0; i < 8; i++) out[i] = Number((n >> BigInt(8 * i)) & 0xffn);
  return out;
}


/**
 * Parses one transaction occupying all of `bytes` (BIP144 witness serialisation accepted unless
 * `witness: false`, which reads the legacy form only, as PSBT unsigned transactions require).
 */
export function parseTransaction(input: Uint8Array | string, options: { witness?: boolean } = {}): Transaction {
  const bytes = typeof input === 'string' ? bytesOfCheckedHex(input) : input;
  const r = new Reader(bytes);
  const tx = readTransaction(r, options.witness ?? true);
  if (!r.done) throw new TransactionError('invalid_transaction', 'Trailing bytes after transaction');
  return tx;
}

/**
 * A transaction and its txid, hashed from the bytes given rather than from a re-serialisation (loading a
 * stored wallet checks every transaction's id: serialising each again doubled the cost of a load).
 */
export function parseTransactionWithTxid(input: Uint8Array | string): { tx: Transaction; txid: string } {
  const bytes = typeof input === 'string' ? bytesOfCheckedHex(input) : input;
  const r = new Reader(bytes);
  const layout: TxLayout = { segwit: false, outputsEnd: 0 };
  const tx = readTransaction(r, true, layout);
  if (!r.done) throw new TransactionError('invalid_transaction', 'Trailing bytes after transaction');
  if (!layout.segwit) return { tx, txid: reverseHex(hash256(bytes)) };
  // Without the witness: version, then inputs and outputs (after the marker and flag), then locktime.
  const legacy = new Uint8Array(4 + (layout.outputsEnd - 6) + 4);
  legacy.set(bytes.subarray(0, 4), 0);
  legacy.set(bytes.subarray(6, layout.outputsEnd), 4);
  legacy.set(bytes.subarray(bytes.length - 4), legacy.length - 4);
  return { tx, txid: reverseHex(hash256(legacy)) };
}

interface TxLayout {
  segwit: boolean;
  /** Offset just past the last output. */
  outputsEnd: number;
}

/** Reads one transaction from a reader (used by block parsing too). */
function readTransaction(r: Reader, allowWitness = true, layout?: TxLayout): Transaction {
  const version = r.i32();
  let inputCount = r.varint();
  let segwit = false;
  if (inputCount === 0 && allowWitness) {
    const flag = r.u8();
    if (flag !== 1) throw new TransactionError('invalid_transaction', 'Bad segwit flag');
    segwit = true;
    inputCount = r.varint();
  }
  const inputs: TxInput[] = [];
  for (let i = 0; i < inputCount; i++) {
    const prev = r.take(32);
    inputs.push({ txid: reverseHex(prev), vout: r.u32(), scriptSig: r.varBytes(), sequence: r.u32(), witness: [] });
  }
  const outputCount = r.varint();
  const outputs: TxOutput[] = [];
  for (let i = 0; i < outputCount; i++) outputs.push({ value: r.u64(), script: r.varBytes() });
  if (layout) {
    layout.segwit = segwit;
    layout.outputsEnd = r.position;
  }
  if (segwit) {
    for (const input of inputs) {
      const items = r.varint();
      for (let j = 0; j < items; j++) input.witness.push(r.varBytes());
    }
    if (inputs.every((i) => i.witness.length === 0)) throw new TransactionError('invalid_transaction', 'Segwit flag without witness data');
  }
  const locktime = r.u32();
  return { version, inputs, outputs, locktime };
}

export const hasWitness = (tx: Transaction): boolean => tx.inputs.some((i) => i.witness.length > 0);

const varintLength = (n: number): number => (n < 0xfd ? 1 : n <= 0xffff ? 3 : n <= 0xffffffff ? 5 : 9);

/** Bytes of the legacy serialisation, and of the witness part (marker, flag and stacks; 0 without witness). */
function serializedSizes(tx: Transaction): { base: number; witness: number } {
  let base = 4 + varintLength(tx.inputs.length) + varintLength(tx.outputs.length) + 4;
  for (const i of tx.inputs) base += 32 + 4 + varintLength(i.scriptSig.length) + i.scriptSig.length + 4;
  for (const o of tx.outputs) base += 8 + varintLength(o.script.length) + o.script.length;
  if (!hasWitness(tx)) return { base, witness: 0 };
  let witness = 2;
  for (const i of tx.inputs) {
    witness += varintLength(i.witness.length);
    for (const item of i.witness) witness += varintLength(item.length) + item.length;
  }
  return { base, witness };
}

/** Writes into one buffer sized up front (no per-field arrays: wallets serialise every transaction they load). */
class Writer {
  private offset = 0;
  constructor(readonly bytes: Uint8Array) {}
  u8(n: number): void {
    this.bytes[this.offset++] = n;
  }
  u32(n: number): void {
    const b = this.bytes;
    b[this.offset++] = n & 0xff;
    b[this.offset++] = (n >>> 8) & 0xff;
    b[this.offset++] = (n >>> 16) & 0xff;
    b[this.offset++] = (n >>> 24) & 0xff;
  }
  u64(n: bigint): void {
    this.u32(Number(n & 0xffffffffn));
    this.u32(Number((n >> 32n) & 0xffffffffn));
  }
  varint(n: number): void {
    if (n < 0xfd) this.u8(n);
    else if (n <= 0xffff) {
      this.u8(0xfd);
      this.u8(n & 0xff);
      this.u8(n >>> 8);
    } else if (n <= 0xffffffff) {
      this.u8(0xfe);
      this.u32(n);
    } else {
      this.u8(0xff);
      this.u64(BigInt(n));
    }
  }
  raw(b: Uint8Array): void {
    this.bytes.set(b, this.offset);
    this.offset += b.length;
  }
  varBytes(b: Uint8Array): void {
    this.varint(b.length);
    this.raw(b);
  }
  /** A display (byte-reversed) txid as its 32 internal bytes. */
  reversedHash(display: string): void {
    const bytes = fromHex(display);
    if (bytes.length !== 32) throw new TransactionError('invalid_transaction', 'Input txid must be 32 bytes');
    for (let k = 31; k >= 0; k--) this.u8(bytes[k]!);
  }
}

export function serializeTransaction(tx: Transaction, options: { witness?: boolean } = {}): Uint8Array {
  const sizes = serializedSizes(tx);
  const withWitness = (options.witness ?? true) && sizes.witness > 0;
  const w = new Writer(new Uint8Array(sizes.base + (withWitness ? sizes.witness : 0)));
  w.u32(tx.version >>> 0);
  if (withWitness) {
    w.u8(0);
    w.u8(1);
  }
  w.varint(tx.inputs.length);
  for (const i of tx.inputs) {
    w.reversedHash(i.txid);
    w.u32(i.vout);
    w.varBytes(i.scriptSig);
    w.u32(i.sequence);
  }
  w.varint(tx.outputs.length);
  for (const o of tx.outputs) {
    w.u64(o.value);
    w.varBytes(o.script);
  }
  if (withWitness) {
    for (const i of tx.inputs) {
      w.varint(i.witness.length);
      for (const item of i.witness) w.varBytes(item);
    }
  }
  w.u32(tx.locktime);
  return w.bytes;
}

const hash256 = (b: Uint8Array) => sha256(sha256(b));

export const txid = (tx: Transaction): string => reverseHex(hash256(serializeTransaction(tx, { witness: false })));
export const wtxid = (tx: Transaction): string => reverseHex(hash256(serializeTransaction(tx)));

/** BIP141 weight, from the serialised sizes (nothing is serialised). */
export function weight(tx: Transaction): number {
  const { base, witness } = serializedSizes(tx);
  return base * 3 + base + witness;
}
export const vsize = (tx: Transaction): number => Math.ceil(weight(tx) / 4);
export const size = (tx: Transaction): number => serializeTransaction(tx).length;

export interface Block {
  hash: string;
  prevHash: string;
  time: number;
  transactions: Transaction[];
}

/** Parses a serialised block (as `getblock <hash> 0` returns it). */
export function parseBlock(input: Uint8Array | string): Block {
  const bytes = typeof input === 'string' ? bytesOfCheckedHex(input) : input;
  const r = new Reader(bytes);
  const header = r.take(80);
  const count = r.varint();
  const transactions: Transaction[] = [];
  for (let i = 0; i < count; i++) transactions.push(readTransaction(r));
  if (!r.done) throw new TransactionError('invalid_block', 'Trailing bytes after block');
  const time = (header[68]! | (header[69]! << 8) | (header[70]! << 16) | (header[71]! << 24)) >>> 0;
  return { hash: reverseHex(hash256(header)), prevHash: reverseHex(header.subarray(4, 36)), time, transactions };
}

export const isCoinbase = (tx: Transaction): boolean =>
  tx.inputs.length === 1 && tx.inputs[0]!.vout === 0xffffffff && /^0{64}$/.test(tx.inputs[0]!.txid);

/** The bytes of a raw transaction's or block's hex (either case); TransactionError if it is not hex. */
export function bytesOfCheckedHex(text: string): Uint8Array {
  if (text.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(text)) throw new TransactionError('invalid_transaction', 'Not hex');
  return fromHex(text.toLowerCase());
}

export { toHex };
