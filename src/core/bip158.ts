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
import { encodeVarint, type Block } from './tx.js';

export const BASIC_FILTER_P = 19;
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

/** Working state v0..v3 as [v0hi, v0lo, v1hi, v1lo, v2hi, v2lo, v3hi, v3lo]. */
type SipState = Uint32Array;

function rotl(s: SipState, i: number, n: number): void {
  const hi = s[i]!;
  const lo = s[i + 1]!;
  if (n === 32) {
    s[i] = lo;
    s[i + 1] = hi;
    return;
  }
  s[i] = (hi << n) | (lo >>> (32 - n));
  s[i + 1] = (lo << n) | (hi >>> (32 - n));
}

/** s[a] += s[b] (mod 2^64). */
function add(s: SipState, a: number, b: number): void {
  const lo = s[a + 1]! + s[b + 1]!;
  s[a] = s[a]! + s[b]! + (lo > 0xffffffff ? 1 : 0);
  s[a + 1] = lo;
}

/** s[a] ^= s[b]. */
function xor(s: SipState, a: number, b: number): void {
  s[a] = s[a]! ^ s[b]!;
  s[a + 1] = s[a + 1]! ^ s[b + 1]!;
}

const V0 = 0;
const V1 = 2;
const V2 = 4;
const V3 = 6;

function sipRound(s: SipState): void {
  add(s, V0, V1);
  rotl(s, V1, 13);
  xor(s, V1, V0);
  rotl(s, V0, 32);
  add(s, V2, V3);
  rotl(s, V3, 16);
  xor(s, V3, V2);
  add(s, V0, V3);
  rotl(s, V3, 21);
  xor(s, V3, V0);
  add(s, V2, V1);
  rotl(s, V1, 17);
  xor(s, V1, V2);
  rotl(s, V2, 32);
}

const readU32le = (b: Uint8Array, o: number): number =>
  ((b[o] ?? 0) | ((b[o + 1] ?? 0) << 8) | ((b[o + 2] ?? 0) << 16) | ((b[o + 3] ?? 0) << 24)) >>> 0;

/** The SipHash-2-4 key (k0, k1) of a byte string of at least 16 bytes (little-endian words). */
export function sipKey(bytes: Uint8Array): [U64, U64] {
  if (bytes.length < 16) throw new FilterError('invalid_filter_key', 'SipHash key needs 16 bytes');
  return [
    { lo: readU32le(bytes, 0), hi: readU32le(bytes, 4) },
    { lo: readU32le(bytes, 8), hi: readU32le(bytes, 12) },
  ];
}

/** SipHash-2-4 of `data` with key (k0, k1). `state` is scratch space reused by hot loops. */
export function siphash24(k0: U64, k1: U64, data: Uint8Array, state: SipState = new Uint32Array(8)): U64 {
  const s = state;
  s[0] = k0.hi ^ 0x736f6d65;
  s[1] = k0.lo ^ 0x70736575;
  s[2] = k1.hi ^ 0x646f7261;
  s[3] = k1.lo ^ 0x6e646f6d;
  s[4] = k0.hi ^ 0x6c796765;
  s[5] = k0.lo ^ 0x6e657261;
  s[6] = k1.hi ^ 0x74656462;
  s[7] = k1.lo ^ 0x79746573;
  const whole = data.length - (data.length % 8);
  let mHi: number;
  let mLo: number;
  const compress = () => {
    s[6] = s[6]! ^ mHi;
    s[7] = s[7]! ^ mLo;
    sipRound(s);
    sipRound(s);
    s[0] = s[0]! ^ mHi;
    s[1] = s[1]! ^ mLo;
  };
  for (let o = 0; o < whole; o += 8) {
    mLo = readU32le(data, o);
    mHi = readU32le(data, o + 4);
    compress();
  }
  // Last word: the remaining bytes, and the length's low byte in the top byte.
  const tail = new Uint8Array(8);
  tail.set(data.subarray(whole));
  tail[7] = data.length & 0xff;
  mLo = readU32le(tail, 0);
  mHi = readU32le(tail, 4);
  compress();
  s[5] = s[5]! ^ 0xff;
  sipRound(s);
  sipRound(s);
  sipRound(s);
  sipRound(s);
  return { hi: (s[0]! ^ s[2]! ^ s[4]! ^ s[6]!) >>> 0, lo: (s[1]! ^ s[3]! ^ s[5]! ^ s[7]!) >>> 0 };
}

/** floor(h * range / 2^64) for a 64-bit h and range < 2^53, exactly (16-bit limb multiplication). */
function mulHigh64(h: U64, range: number): number {
  const a = [h.lo & 0xffff, h.lo >>> 16, h.hi & 0xffff, h.hi >>> 16];
  const rangeHi = Math.floor(range / 0x100000000);
  const rangeLo = range >>> 0;
  const b = [rangeLo & 0xffff, rangeLo >>> 16, rangeHi & 0xffff, rangeHi >>> 16];
  let carry = 0;
  let result = 0;
  for (let k = 0; k < 8; k++) {
    let sum = carry;
    for (let i = Math.max(0, k - 3); i <= Math.min(3, k); i++) sum += a[i]! * b[k - i]!;
    const limb = sum % 0x10000;
    carry = Math.floor(sum / 0x10000);
    if (k >= 4) result += limb * 2 ** (16 * (k - 4));
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// Golomb-Rice coding.

class BitReader {
  private bit = 0;
  constructor(
    private readonly bytes: Uint8Array,
    private byte: number,
  ) {}
  /** Counts 1 bits up to the next 0 bit (which is consumed). */
  unary(): number {
    let count = 0;
    for (;;) {
      if (this.byte >= this.bytes.length) throw new FilterError('invalid_filter', 'Filter is truncated');
      const value = this.bytes[this.byte]!;
      const b = (value >>> (7 - this.bit)) & 1;
      this.advance(1);
      if (b === 0) return count;
      count++;
    }
  }
  /** Reads `n` bits (n <= 24) most significant first. */
  bits(n: number): number {
    let out = 0;
    let left = n;
    while (left > 0) {
      if (this.byte >= this.bytes.length) throw new FilterError('invalid_filter', 'Filter is truncated');
      const available = 8 - this.bit;
      const take = Math.min(available, left);
      const chunk = (this.bytes[this.byte]! >>> (available - take)) & ((1 << take) - 1);
      out = (out << take) | chunk;
      left -= take;
      this.advance(take);
    }
    return out;
  }
  private advance(n: number): void {
    this.bit += n;
    while (this.bit >= 8) {
      this.bit -= 8;
      this.byte++;
    }
  }
}

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

/** Every script hashed into [0, n * M), sorted ascending; equal values collapsed when `unique`. */
function hashedSet(k: [U64, U64], range: number, scripts: readonly Uint8Array[], unique: boolean): Float64Array {
  const state = new Uint32Array(8);
  const values = new Float64Array(scripts.length);
  for (let i = 0; i < scripts.length; i++) values[i] = mulHigh64(siphash24(k[0], k[1], scripts[i]!, state), range);
  values.sort();
  if (!unique) return values;
  let count = 0;
  for (let i = 0; i < values.length; i++) if (i === 0 || values[i] !== values[count - 1]) values[count++] = values[i]!;
  return values.subarray(0, count);
}

/** The sorted hashed values of a basic filter. */
export function decodeBasicFilter(filter: Uint8Array): Float64Array {
  const { n, offset } = readCount(filter);
  const reader = new BitReader(filter, offset);
  const values = new Float64Array(n);
  let last = 0;
  for (let i = 0; i < n; i++) {
    const quotient = reader.unary();
    last += quotient * 2 ** BASIC_FILTER_P + reader.bits(BASIC_FILTER_P);
    values[i] = last;
  }
  return values;
}

/**
 * True when the block's basic filter may contain any of `scripts` (false positives at about
 * 1 in 784931 per script, never false negatives). An empty query never matches.
 */
export function basicFilterMatchesAny(filter: Uint8Array, blockHash: string, scripts: readonly Uint8Array[]): boolean {
  const key = blockKey(blockHash);
  const { n, offset } = readCount(filter);
  if (n === 0 || scripts.length === 0) return false;
  const query = hashedSet(key, n * BASIC_FILTER_M, scripts, true);
  const reader = new BitReader(filter, offset);
  let value = 0;
  let q = 0;
  for (let i = 0; i < n; i++) {
    value += reader.unary() * 2 ** BASIC_FILTER_P + reader.bits(BASIC_FILTER_P);
    while (query[q]! < value) if (++q === query.length) return false;
    if (query[q] === value) return true;
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
  const values = hashedSet(key, n * BASIC_FILTER_M, [...distinct.values()], false);
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
