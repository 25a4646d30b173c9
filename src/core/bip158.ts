/**
 * BIP158 basic block filters: Golomb-Rice coded sets (P = 19, M = 784931) of SipHash-2-4 hashes,
 * keyed with the first 16 bytes of the block hash (internal byte order).
 *
 * The question a wallet asks is "may this block touch any of my scripts?". Answering it for many
 * scripts at once is done as BIP158 suggests: hash every script into the filter's range, sort,
 * and walk the sorted query and the (already sorted) decoded filter together once.
 *
 * Every value lies below N * M < 2^53 for any real block, so plain numbers hold them exactly.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { concatBytes, fromHex, reverseHex, toHex } from './bytes.js';
import { CoreError } from './errors.js';
import { PackedScripts, type ScriptList } from './script-list.js';
import { encodeVarint, type Block } from './tx.js';

export const BASIC_FILTER_P = 19; // decodeBasicFilter spells it out as literals
export const BASIC_FILTER_M = 784931;

/** A filter that does not decode, or a block hash that is not 32 bytes of hex. */
export class FilterError extends CoreError {}

// ---------------------------------------------------------------------------------------------
// SipHash-2-4 on 32-bit halves (no bigint in the hot loop).

/** A 64-bit value as two unsigned 32-bit halves. */
export interface U64 {
  hi: number;
  lo: number;
}

/** Little-endian 32-bit word at `o` (signed); the caller keeps o + 3 in bounds. */
const readI32le = (b: Uint8Array, o: number): number => b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24);
const readU32le = (b: Uint8Array, o: number): number => readI32le(b, o) >>> 0;

/** The SipHash-2-4 key (k0, k1) of a byte string of at least 16 bytes (little-endian words). */
export function sipKey(bytes: Uint8Array): [U64, U64] {
  if (bytes.length < 16) throw new FilterError('invalid_filter_key', 'SipHash key needs 16 bytes');
  return [
    { lo: readU32le(bytes, 0), hi: readU32le(bytes, 4) },
    { lo: readU32le(bytes, 8), hi: readU32le(bytes, 12) },
  ];
}

/**
 * Byte strings as SipHash message words, read once: hashing the same scripts with every block's key then
 * skips reading their bytes. Word i of a string is (lo, hi) at 2 * i; its last word holds the remaining bytes
 * and the length's low byte on top.
 */
export class SipMessages {
  readonly count: number;
  /** (lo, hi) pairs of every string's words, one string after the other. */
  private readonly words: Int32Array;
  /** Where string i's words end (index into `words`); they start where string i - 1's end. */
  private readonly ends: Int32Array;

  constructor(strings: ScriptList) {
    this.count = strings.length;
    this.ends = new Int32Array(strings.length);
    // A packed list is read in place, without a view made per script.
    const packed = strings instanceof PackedScripts ? strings.packed() : undefined;
    const list = packed ? undefined : Array.isArray(strings) ? (strings as readonly Uint8Array[]) : [...strings];
    const startOf = (i: number): number => (i === 0 ? 0 : packed!.ends[i - 1]!);
    let total = 0;
    for (let i = 0; i < this.count; i++) {
      const length = packed ? packed.ends[i]! - startOf(i) : list![i]!.length;
      this.ends[i] = total += 2 * ((length >>> 3) + 1);
    }
    this.words = new Int32Array(total);
    let w = 0;
    for (let i = 0; i < this.count; i++) {
      if (packed) w = this.put(w, packed.bytes, startOf(i), packed.ends[i]!);
      else w = this.put(w, list![i]!, 0, list![i]!.length);
    }
  }

  /** Writes the words of data[start, end) from word `w` on; returns where they end. */
  private put(w: number, data: Uint8Array, start: number, end: number): number {
    const length = end - start;
    const whole = end - (length % 8);
    for (let o = start; o < whole; o += 8) {
      this.words[w++] = readI32le(data, o);
      this.words[w++] = readI32le(data, o + 4);
    }
    let lo = 0;
    let hi = (length & 0xff) << 24;
    for (let j = whole; j < end; j++) {
      const shift = (j - whole) * 8;
      if (shift < 32) lo |= data[j]! << shift;
      else hi |= data[j]! << (shift - 32);
    }
    this.words[w++] = lo;
    this.words[w++] = hi;
    return w;
  }

  /** SipHash-2-4 of string `i` with key (k0, k1), leaving the result's high and low halves in out[0] and out[1] (signed). */
  hashInto(i: number, k0: U64, k1: U64, out: Int32Array): void {
    sipHashWords(k0, k1, this.words, i === 0 ? 0 : this.ends[i - 1]!, this.ends[i]!, out);
  }
}

/**
 * SipHash-2-4 of the message words words[from, to). The state v0..v3 stays in local (hi, lo) pairs of signed
 * 32-bit words for the whole hash: V8 keeps int32 arithmetic in registers, where values above 2^31 would
 * become doubles (this is the hot loop of filter matching).
 */
function sipHashWords(k0: U64, k1: U64, words: Int32Array, from: number, to: number, out: Int32Array): void {
  let v0h = k0.hi ^ 0x736f6d65, v0l = k0.lo ^ 0x70736575;
  let v1h = k1.hi ^ 0x646f7261, v1l = k1.lo ^ 0x6e646f6d;
  let v2h = k0.hi ^ 0x6c796765, v2l = k0.lo ^ 0x6e657261;
  let v3h = k1.hi ^ 0x74656462, v3l = k1.lo ^ 0x79746573;
  let lo: number, t: number;
  // One pass per message word (2 rounds), then the finalisation (4 rounds).
  for (let w = from; w <= to; w += 2) {
    let mHi = 0;
    let mLo = 0;
    const final = w === to;
    if (final) v2l ^= 0xff;
    else {
      mLo = words[w]!;
      mHi = words[w + 1]!;
    }
    v3h ^= mHi;
    v3l ^= mLo;
    // a += b on (hi, lo) pairs: the carry is set when the unsigned low sum wrapped.
    for (let i = final ? 4 : 2; i > 0; i--) {
      lo = (v0l + v1l) | 0; v0h = (v0h + v1h + ((lo >>> 0) < (v0l >>> 0) ? 1 : 0)) | 0; v0l = lo; // v0 += v1
      t = (v1h << 13) | (v1l >>> 19); v1l = (v1l << 13) | (v1h >>> 19); v1h = t; // v1 <<<= 13
      v1h ^= v0h; v1l ^= v0l; // v1 ^= v0
      t = v0h; v0h = v0l; v0l = t; // v0 <<<= 32
      lo = (v2l + v3l) | 0; v2h = (v2h + v3h + ((lo >>> 0) < (v2l >>> 0) ? 1 : 0)) | 0; v2l = lo; // v2 += v3
      t = (v3h << 16) | (v3l >>> 16); v3l = (v3l << 16) | (v3h >>> 16); v3h = t; // v3 <<<= 16
      v3h ^= v2h; v3l ^= v2l; // v3 ^= v2
      lo = (v0l + v3l) | 0; v0h = (v0h + v3h + ((lo >>> 0) < (v0l >>> 0) ? 1 : 0)) | 0; v0l = lo; // v0 += v3
      t = (v3h << 21) | (v3l >>> 11); v3l = (v3l << 21) | (v3h >>> 11); v3h = t; // v3 <<<= 21
      v3h ^= v0h; v3l ^= v0l; // v3 ^= v0
      lo = (v2l + v1l) | 0; v2h = (v2h + v1h + ((lo >>> 0) < (v2l >>> 0) ? 1 : 0)) | 0; v2l = lo; // v2 += v1
      t = (v1h << 17) | (v1l >>> 15); v1l = (v1l << 17) | (v1h >>> 15); v1h = t; // v1 <<<= 17
      v1h ^= v2h; v1l ^= v2l; // v1 ^= v2
      t = v2h; v2h = v2l; v2l = t; // v2 <<<= 32
    }
    v0h ^= mHi;
    v0l ^= mLo;
  }
  out[0] = v0h ^ v1h ^ v2h ^ v3h;
  out[1] = v0l ^ v1l ^ v2l ^ v3l;
}

/** SipHash-2-4 of `data` with key (k0, k1). */
export function siphash24(k0: U64, k1: U64, data: Uint8Array): U64 {
  const out = new Int32Array(2);
  new SipMessages([data]).hashInto(0, k0, k1, out);
  return { hi: out[0]! >>> 0, lo: out[1]! >>> 0 };
}

/** A range below 2^53 as four 16-bit limbs, for mulHigh64. */
function rangeLimbs(range: number): [number, number, number, number] {
  const hi = Math.floor(range / 0x100000000);
  const lo = range >>> 0;
  return [lo & 0xffff, lo >>> 16, hi & 0xffff, hi >>> 16];
}

/** floor(h * range / 2^64) for a 64-bit h = (hi, lo) (signed or unsigned words) and range < 2^53, exactly. */
function mulHigh64(hi: number, lo: number, b: [number, number, number, number]): number {
  const [b0, b1, b2, b3] = b;
  const a0 = lo & 0xffff, a1 = lo >>> 16, a2 = hi & 0xffff, a3 = hi >>> 16;
  let c = Math.floor((a0 * b0) / 0x10000);
  c = Math.floor((c + a0 * b1 + a1 * b0) / 0x10000);
  c = Math.floor((c + a0 * b2 + a1 * b1 + a2 * b0) / 0x10000);
  c = Math.floor((c + a0 * b3 + a1 * b2 + a2 * b1 + a3 * b0) / 0x10000);
  let sum = c + a1 * b3 + a2 * b2 + a3 * b1;
  const l4 = sum % 0x10000;
  sum = Math.floor(sum / 0x10000) + a2 * b3 + a3 * b2;
  const l5 = sum % 0x10000;
  sum = Math.floor(sum / 0x10000) + a3 * b3;
  const l6 = sum % 0x10000;
  const l7 = Math.floor(sum / 0x10000);
  return l4 + l5 * 0x10000 + l6 * 0x100000000 + l7 * 0x1000000000000;
}

// ---------------------------------------------------------------------------------------------
// Golomb-Rice coding.

class BitWriter {
  private readonly out: number[] = [];
  private current = 0;
  private used = 0;
  write(value: number, n: number): void {
    for (let i = n - 1; i >= 0; i--) this.push((value >>> i) & 1);
  }
  unary(q: number): void {
    for (let i = 0; i < q; i++) this.push(1);
    this.push(0);
  }
  bytes(): Uint8Array {
    const out = [...this.out];
    if (this.used > 0) out.push(this.current << (8 - this.used));
    return Uint8Array.from(out);
  }
  private push(bit: number): void {
    this.current = (this.current << 1) | bit;
    if (++this.used === 8) {
      this.out.push(this.current);
      this.current = 0;
      this.used = 0;
    }
  }
}

/** Reads the CompactSize element count at the start of a filter. */
function readCount(filter: Uint8Array): { n: number; offset: number } {
  const first = filter[0];
  if (first === undefined) throw new FilterError('invalid_filter', 'Filter is empty');
  if (first < 0xfd) return { n: first, offset: 1 };
  const width = first === 0xfd ? 2 : first === 0xfe ? 4 : 8;
  if (filter.length < 1 + width) throw new FilterError('invalid_filter', 'Filter is truncated');
  let n = 0;
  for (let i = width; i >= 1; i--) n = n * 256 + filter[i]!;
  if (!Number.isSafeInteger(n) || n * BASIC_FILTER_M > Number.MAX_SAFE_INTEGER) {
    throw new FilterError('invalid_filter', 'Filter element count out of range');
  }
  return { n, offset: 1 + width };
}

/** Block hash (display hex) -> SipHash key from its first 16 bytes in internal order. */
function blockKey(blockHash: string): [U64, U64] {
  if (typeof blockHash !== 'string' || !/^[0-9a-fA-F]{64}$/.test(blockHash)) {
    throw new FilterError('invalid_block_hash', 'Block hash must be 64 hex characters');
  }
  return sipKey(fromHex(blockHash.toLowerCase()).reverse());
}

/** Every script hashed into [0, range), sorted ascending; equal values collapsed when `unique`. */
function hashedSet(k: [U64, U64], range: number, scripts: SipMessages, unique: boolean): Float64Array {
  const state = new Int32Array(2);
  const limbs = rangeLimbs(range);
  const values = new Float64Array(scripts.count);
  for (let i = 0; i < scripts.count; i++) {
    scripts.hashInto(i, k[0], k[1], state);
    values[i] = mulHigh64(state[0]!, state[1]!, limbs);
  }
  values.sort();
  if (!unique) return values;
  let count = 0;
  for (let i = 0; i < values.length; i++) if (i === 0 || values[i] !== values[count - 1]) values[count++] = values[i]!;
  return values.subarray(0, count);
}

/**
 * The sorted hashed values of a basic filter. Golomb-Rice decoding through a 32-bit window over a copy of
 * the filter padded with zero bytes, so that no read needs a bounds check: a read that reaches into the
 * padding leaves the position past the end, which is reported as truncation.
 */
export function decodeBasicFilter(filter: Uint8Array): Float64Array {
  const { n, offset } = readCount(filter);
  const b = new Uint8Array(filter.length + 8);
  b.set(filter);
  const end = filter.length * 8;
  const values = new Float64Array(n);
  // Literals (P = 19): with values derived from the module's constant, V8 runs this loop about ten times slower.
  const p = 19;
  const scale = 524288;
  const drop = 13;
  let pos = offset * 8;
  let last = 0;
  for (let i = 0; i < n; i++) {
    let quotient = 0;
    for (;;) {
      const k = pos >>> 3;
      const shift = pos & 7;
      // At least 25 bits of the window are the stream's (or padding) from `pos` on.
      const window = (((b[k]! << 24) | (b[k + 1]! << 16) | (b[k + 2]! << 8) | b[k + 3]!) << shift) | (b[k + 4]! >>> (8 - shift));
      const ones = Math.clz32(~window);
      if (ones < 25) {
        quotient += ones;
        pos += ones + 1;
        break;
      }
      quotient += 24;
      pos += 24;
      if (pos > end) throw truncated();
    }
    const k = pos >>> 3;
    const shift = pos & 7;
    const window = (((b[k]! << 24) | (b[k + 1]! << 16) | (b[k + 2]! << 8) | b[k + 3]!) << shift) | (b[k + 4]! >>> (8 - shift));
    pos += p;
    if (pos > end) throw truncated();
    last += quotient * scale + (window >>> drop);
    values[i] = last;
  }
  return values;
}

const truncated = () => new FilterError('invalid_filter', 'Filter is truncated');

/**
 * True when the block's basic filter may contain any of `scripts` (false positives at about
 * 1 in 784931 per script, never false negatives). An empty query never matches.
 */
export function basicFilterMatchesAny(filter: Uint8Array, blockHash: string, scripts: ScriptList): boolean {
  blockKey(blockHash); // a bad hash is reported whatever the filter
  if (readCount(filter).n === 0 || scripts.length === 0) return false;
  return decodedFilterMatchesAny(decodeBasicFilter(filter), blockHash, scripts);
}

/**
 * basicFilterMatchesAny on a filter decoded once with decodeBasicFilter: asking again with more scripts
 * (a wallet derived some) then costs their hashes and a search, not another decode.
 */
export function decodedFilterMatchesAny(values: Float64Array, blockHash: string, scripts: ScriptList | SipMessages): boolean {
  const key = blockKey(blockHash);
  const messages = scripts instanceof SipMessages ? scripts : new SipMessages(scripts);
  if (values.length === 0 || messages.count === 0) return false;
  const query = hashedSet(key, values.length * BASIC_FILTER_M, messages, true);
  // A few scripts (those a wallet just derived) are looked up by halving; more are walked with the filter once.
  if (query.length * Math.log2(values.length) < values.length) return query.some((value) => sortedIncludes(values, value));
  let q = 0;
  for (let i = 0; i < values.length; i++) {
    const value = values[i]!;
    while (query[q]! < value) if (++q === query.length) return false;
    if (query[q] === value) return true;
  }
  return false;
}

/** Whether ascending `values` hold `value`. */
function sortedIncludes(values: Float64Array, value: number): boolean {
  let low = 0;
  let high = values.length - 1;
  while (low <= high) {
    const mid = (low + high) >>> 1;
    const v = values[mid]!;
    if (v === value) return true;
    if (v < value) low = mid + 1;
    else high = mid - 1;
  }
  return false;
}

/** Serialises a basic filter for a block over the given element scripts (empty ones are ignored). */
export function buildBasicFilter(blockHash: string, scripts: readonly Uint8Array[]): Uint8Array {
  const key = blockKey(blockHash);
  const distinct = new Map<string, Uint8Array>();
  for (const s of scripts) if (s.length > 0) distinct.set(toHex(s), s);
  const n = distinct.size;
  // Distinct scripts that collide after hashing stay as separate (zero-delta) entries, as in Core.
  const values = hashedSet(key, n * BASIC_FILTER_M, new SipMessages([...distinct.values()]), false);
  const writer = new BitWriter();
  let last = 0;
  for (const v of values) {
    const delta = v - last;
    writer.unary(Math.floor(delta / 2 ** BASIC_FILTER_P));
    writer.write(delta % 2 ** BASIC_FILTER_P, BASIC_FILTER_P);
    last = v;
  }
  return concatBytes(encodeVarint(n), writer.bytes());
}

/**
 * The elements BIP158 puts in a block's basic filter: every output script except empty and
 * OP_RETURN ones, and the scripts of the outputs the block spends (given by the caller).
 */
export function basicFilterElements(block: Block, spentScripts: readonly Uint8Array[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (const tx of block.transactions) {
    for (const o of tx.outputs) if (o.script.length > 0 && o.script[0] !== 0x6a) out.push(o.script);
  }
  for (const s of spentScripts) if (s.length > 0) out.push(s);
  return out;
}

/** BIP157 filter header: double-SHA256(double-SHA256(filter) || previous header), display hex. */
export function basicFilterHeader(filter: Uint8Array, previousHeader: string): string {
  if (!/^[0-9a-fA-F]{64}$/.test(previousHeader)) {
    throw new FilterError('invalid_filter_header', 'Filter header must be 64 hex characters');
  }
  const hash256 = (b: Uint8Array) => sha256(sha256(b));
  const prev = fromHex(previousHeader.toLowerCase()).reverse();
  return reverseHex(hash256(concatBytes(hash256(filter), prev)));
}
