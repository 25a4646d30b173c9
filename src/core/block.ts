/**
 * Blocks parsed for scanning. A scan looks at every output script of every transaction, and nearly none pays
 * a wallet: so a block is checked in full (the same rules as parseBlock) but its outputs are decoded only
 * when asked, and a transaction's txid is hashed straight from the block's bytes. Output scripts can be
 * tested against a set of lookup keys without allocating anything (`anyOutputKeyIn`).
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { reverseHex } from './bytes.js';
import { parseTransaction, TransactionError, type Block, type Transaction, type TxInput, type TxOutput } from './tx.js';

/**
 * A cheap, allocation-free key of a script's bytes `bytes[start, end)` (its length, first two and last four
 * bytes): equal scripts have equal keys; different scripts rarely do. Kept within 30 bits so that V8 stores it
 * as a small integer.
 */
export function scriptLookupKey(bytes: Uint8Array, start = 0, end = bytes.length): number {
  const n = end - start;
  if (n < 4) return (n << 24) | ((n > 0 ? bytes[start]! : 0) << 8) | (n > 1 ? bytes[start + 1]! : 0);
  const tail = (bytes[end - 4]! << 24) | (bytes[end - 3]! << 16) | (bytes[end - 2]! << 8) | bytes[end - 1]!;
  return (tail ^ Math.imul(n, 0x9e3779b1) ^ (bytes[start]! << 8) ^ bytes[start + 1]!) & 0x3fffffff;
}

const truncated = () => new TransactionError('invalid_transaction', 'Transaction is truncated');

/** A cursor over a block's bytes; every read is bounds-checked. */
class Cursor {
  pos: number;
  constructor(
    readonly bytes: Uint8Array,
    start = 0,
  ) {
    this.pos = start;
  }
  skip(n: number): void {
    if (n < 0 || this.pos + n > this.bytes.length) throw truncated();
    this.pos += n;
  }
  u8(): number {
    if (this.pos >= this.bytes.length) throw truncated();
    return this.bytes[this.pos++]!;
  }
  u32(): number {
    const b = this.bytes;
    const p = this.pos;
    this.skip(4);
    return (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24)) >>> 0;
  }
  varint(): number {
    const first = this.u8();
    if (first < 0xfd) return first;
    if (first === 0xfd) return this.u8() | (this.u8() << 8);
    if (first === 0xfe) return this.u32();
    const lo = this.u32();
    const hi = this.u32();
    if (hi > 0x1fffff) throw new TransactionError('invalid_transaction', 'Length out of range');
    return hi * 0x100000000 + lo;
  }
  /** Reads a length-prefixed byte string and returns where it starts (the cursor is past it). */
  varBytes(): number {
    const n = this.varint();
    const start = this.pos;
    this.skip(n);
    return start;
  }
}

/** The 32 bytes at `start`, byte-reversed hex (txids, block hashes). */
const reversedHex = (bytes: Uint8Array, start: number): string => reverseHex(bytes, start, start + 32);

/** A transaction inside a block: checked when the block was read, outputs decoded on first use. */
export class BlockTransaction implements Transaction {
  readonly version: number;
  readonly inputs: TxInput[];
  readonly locktime: number;
  private decodedOutputs: TxOutput[] | undefined;

  constructor(
    private readonly bytes: Uint8Array,
    private readonly start: number,
    /** Where the output count starts. */
    private readonly outputsAt: number,
    /** Where the witness data starts (the end of the outputs). */
    private readonly outputsEnd: number,
    /** Whether the transaction is in the segwit form (marker and flag after the version). */
    private readonly segwit: boolean,
    private readonly end: number,
    inputs: TxInput[],
  ) {
    const b = bytes;
    this.version = b[start]! | (b[start + 1]! << 8) | (b[start + 2]! << 16) | (b[start + 3]! << 24);
    const l = end - 4;
    this.locktime = (b[l]! | (b[l + 1]! << 8) | (b[l + 2]! << 16) | (b[l + 3]! << 24)) >>> 0;
    this.inputs = inputs;
  }

  get outputs(): TxOutput[] {
    if (!this.decodedOutputs) {
      const c = new Cursor(this.bytes, this.outputsAt);
      const count = c.varint();
      const outputs: TxOutput[] = [];
      for (let i = 0; i < count; i++) {
        const lo = BigInt(c.u32());
        const hi = BigInt(c.u32());
        const at = c.varBytes();
        outputs.push({ value: (hi << 32n) | lo, script: this.bytes.subarray(at, c.pos) });
      }
      this.decodedOutputs = outputs;
    }
    return this.decodedOutputs;
  }

  /** Whether the lookup key (scriptLookupKey) of some output's script is in `keys`; allocates nothing. */
  anyOutputKeyIn(keys: { has(key: number): boolean }): boolean {
    const c = new Cursor(this.bytes, this.outputsAt);
    const count = c.varint();
    for (let i = 0; i < count; i++) {
      c.pos += 8;
      const at = c.varBytes();
      if (keys.has(scriptLookupKey(this.bytes, at, c.pos))) return true;
    }
    return false;
  }

  /** The txid: double SHA-256 of the serialisation without witness, hashed from the block's bytes. */
  txid(): string {
    const b = this.bytes;
    const first = sha256.create().update(b.subarray(this.start, this.start + 4));
    if (this.segwit) first.update(b.subarray(this.start + 6, this.outputsEnd)).update(b.subarray(this.end - 4, this.end));
    else first.update(b.subarray(this.start + 4, this.end));
    return reversedHex(sha256(first.digest()), 0);
  }

  /** The transaction as a plain one over a copy of its own bytes (keeps nothing of the block alive). */
  standalone(): Transaction {
    return parseTransaction(this.bytes.slice(this.start, this.end));
  }
}

/** Reads one transaction at the cursor, checking it as parseTransaction does, decoding no output. */
function readBlockTransaction(c: Cursor): BlockTransaction {
  const start = c.pos;
  c.skip(4);
  let inputCount = c.varint();
  let segwit = false;
  if (inputCount === 0) {
    if (c.u8() !== 1) throw new TransactionError('invalid_transaction', 'Bad segwit flag');
    segwit = true;
    inputCount = c.varint();
  }
  const b = c.bytes;
  const inputs: TxInput[] = [];
  for (let i = 0; i < inputCount; i++) {
    const prev = c.pos;
    c.skip(32);
    const vout = c.u32();
    const scriptAt = c.varBytes();
    const scriptSig = b.subarray(scriptAt, c.pos);
    inputs.push({ txid: reversedHex(b, prev), vout, scriptSig, sequence: c.u32(), witness: [] });
  }
  const outputsAt = c.pos;
  const outputCount = c.varint();
  for (let i = 0; i < outputCount; i++) {
    c.skip(8);
    c.varBytes();
  }
  const outputsEnd = c.pos;
  if (segwit) {
    let any = false;
    for (const input of inputs) {
      const items = c.varint();
      for (let j = 0; j < items; j++) {
        const at = c.varBytes();
        input.witness.push(b.subarray(at, c.pos));
      }
      if (items > 0) any = true;
    }
    if (!any) throw new TransactionError('invalid_transaction', 'Segwit flag without witness data');
  }
  c.skip(4);
  return new BlockTransaction(b, start, outputsAt, outputsEnd, segwit, c.pos, inputs);
}

/** One serialised transaction read as a block's are (outputs decoded on first use, txid hashed from its bytes). */
export function parseTransactionForScan(bytes: Uint8Array): BlockTransaction {
  const c = new Cursor(bytes);
  const tx = readBlockTransaction(c);
  if (c.pos !== bytes.length) throw new TransactionError('invalid_transaction', 'Trailing bytes after transaction');
  return tx;
}

export interface ScannedBlock extends Block {
  transactions: BlockTransaction[];
}

/** Parses a serialised block (as `getblock <hash> 0` returns it) for scanning; same checks as parseBlock. */
export function parseBlockForScan(bytes: Uint8Array): ScannedBlock {
  const c = new Cursor(bytes);
  c.skip(80);
  const count = c.varint();
  const transactions: BlockTransaction[] = [];
  for (let i = 0; i < count; i++) transactions.push(readBlockTransaction(c));
  if (c.pos !== bytes.length) throw new TransactionError('invalid_block', 'Trailing bytes after block');
  return { ...readHeader(bytes), transactions };
}

export interface BlockHeaderFields {
  /** Display hex, hashed from the header. */
  hash: string;
  /** Display hex; all zeros for the genesis block. */
  prevHash: string;
  /** Block timestamp (seconds). */
  time: number;
}

/** A serialised 80-byte block header (as `getblockheader <hash> false` returns it). */
export function parseBlockHeader(bytes: Uint8Array): BlockHeaderFields {
  if (bytes.length !== 80) throw new TransactionError('invalid_block', 'A block header is 80 bytes');
  return readHeader(bytes);
}

function readHeader(bytes: Uint8Array): BlockHeaderFields {
  const time = (bytes[68]! | (bytes[69]! << 8) | (bytes[70]! << 16) | (bytes[71]! << 24)) >>> 0;
  const hash = sha256(sha256(bytes.subarray(0, 80)));
  return { hash: reversedHex(hash, 0), prevHash: reversedHex(bytes, 4), time };
}
