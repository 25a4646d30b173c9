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

const varBytes = (b: Uint8Array) => concatBytes(encodeVarint(b.length), b);

/**
 * Parses one transaction occupying all of `bytes` (BIP144 witness serialisation accepted unless
 * `witness: false`, which reads the legacy form only, as PSBT unsigned transactions require).
 */
export function parseTransaction(input: Uint8Array | string, options: { witness?: boolean } = {}): Transaction {
  const bytes = typeof input === 'string' ? hexToBytesChecked(input) : input;
  const r = new Reader(bytes);
  const tx = readTransaction(r, options.witness ?? true);
  if (!r.done) throw new TransactionError('invalid_transaction', 'Trailing bytes after transaction');
  return tx;
}

/** Reads one transaction from a reader (used by block parsing too). */
function readTransaction(r: Reader, allowWitness = true): Transaction {
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

export function serializeTransaction(tx: Transaction, options: { witness?: boolean } = {}): Uint8Array {
  const withWitness = (options.witness ?? true) && hasWitness(tx);
  const parts: Uint8Array[] = [u32le(tx.version >>> 0)];
  if (withWitness) parts.push(Uint8Array.of(0, 1));
  parts.push(encodeVarint(tx.inputs.length));
  for (const i of tx.inputs) parts.push(fromHex(i.txid).reverse(), u32le(i.vout), varBytes(i.scriptSig), u32le(i.sequence));
  parts.push(encodeVarint(tx.outputs.length));
  for (const o of tx.outputs) parts.push(u64le(o.value), varBytes(o.script));
  if (withWitness) for (const i of tx.inputs) parts.push(encodeVarint(i.witness.length), ...i.witness.map(varBytes));
  parts.push(u32le(tx.locktime));
  return concatBytes(...parts);
}

const hash256 = (b: Uint8Array) => sha256(sha256(b));

export const txid = (tx: Transaction): string => reverseHex(hash256(serializeTransaction(tx, { witness: false })));
export const wtxid = (tx: Transaction): string => reverseHex(hash256(serializeTransaction(tx)));

export function weight(tx: Transaction): number {
  const base = serializeTransaction(tx, { witness: false }).length;
  const total = serializeTransaction(tx).length;
  return base * 3 + total;
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
  const bytes = typeof input === 'string' ? hexToBytesChecked(input) : input;
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

function hexToBytesChecked(text: string): Uint8Array {
  if (text.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(text)) throw new TransactionError('invalid_transaction', 'Not hex');
  return fromHex(text.toLowerCase());
}

export { toHex };
