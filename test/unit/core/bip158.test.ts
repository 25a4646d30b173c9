import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  basicFilterElements,
  basicFilterHeader,
  basicFilterMatchesAny,
  buildBasicFilter,
  decodeBasicFilter,
  decodedFilterMatchesAny,
  FilterError,
  siphash24,
  sipKey,
  SipMessages,
} from '../../../src/core/bip158.js';
import { fromHex, toHex } from '../../../src/core/bytes.js';
import { parseBlock, txid } from '../../../src/core/tx.js';
import { loadFixture } from '../../support/fixtures.js';

type VectorRow = [number, string, string, string[], string, string, string, string];
const vectors = (JSON.parse(readFileSync(new URL('../../vectors/blockfilters.json', import.meta.url), 'utf8')) as unknown[][])
  .slice(1) as VectorRow[];

const hex64 = (u: { hi: number; lo: number }) => u.hi.toString(16).padStart(8, '0') + u.lo.toString(16).padStart(8, '0');

/** Straightforward bigint SipHash-2-4, as the paper writes it, to check the 32-bit version against. */
function referenceSiphash(key: Uint8Array, data: Uint8Array): string {
  const mask = (1n << 64n) - 1n;
  const le = (b: Uint8Array) => b.reduceRight((n, x) => (n << 8n) | BigInt(x), 0n);
  const rotl = (x: bigint, n: bigint) => ((x << n) | (x >> (64n - n))) & mask;
  const k0 = le(key.subarray(0, 8));
  const k1 = le(key.subarray(8, 16));
  const v = [k0 ^ 0x736f6d6570736575n, k1 ^ 0x646f72616e646f6dn, k0 ^ 0x6c7967656e657261n, k1 ^ 0x7465646279746573n];
  const round = () => {
    v[0] = (v[0]! + v[1]!) & mask; v[1] = rotl(v[1]!, 13n) ^ v[0]; v[0] = rotl(v[0], 32n);
    v[2] = (v[2]! + v[3]!) & mask; v[3] = rotl(v[3]!, 16n) ^ v[2];
    v[0] = (v[0] + v[3]) & mask; v[3] = rotl(v[3], 21n) ^ v[0];
    v[2] = (v[2] + v[1]) & mask; v[1] = rotl(v[1], 17n) ^ v[2]; v[2] = rotl(v[2], 32n);
  };
  const padded = new Uint8Array(Math.floor(data.length / 8) * 8 + 8);
  padded.set(data);
  padded[padded.length - 1] = data.length & 0xff;
  for (let o = 0; o < padded.length; o += 8) {
    const m = le(padded.subarray(o, o + 8));
    v[3]! ^= m;
    round();
    round();
    v[0]! ^= m;
  }
  v[2]! ^= 0xffn;
  for (let i = 0; i < 4; i++) round();
  return (v[0]! ^ v[1]! ^ v[2]! ^ v[3]!).toString(16).padStart(16, '0');
}

describe('SipHash-2-4', () => {
  const key = Uint8Array.from({ length: 16 }, (_, i) => i);
  const [k0, k1] = sipKey(key);
  it('matches the reference vectors of the SipHash paper', () => {
    expect(hex64(siphash24(k0, k1, new Uint8Array(0)))).toBe('726fdb47dd0e0e31');
    expect(hex64(siphash24(k0, k1, Uint8Array.from({ length: 15 }, (_, i) => i)))).toBe('a129ca6149be45e5');
    expect(referenceSiphash(key, Uint8Array.from({ length: 15 }, (_, i) => i))).toBe('a129ca6149be45e5');
  });
  it('agrees with a plain bigint implementation for any key and message length', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 16, maxLength: 16 }), fc.uint8Array({ maxLength: 80 }), (k, data) => {
        const [a, b] = sipKey(k);
        expect(hex64(siphash24(a, b, data))).toBe(referenceSiphash(k, data));
      }),
      { numRuns: 500 },
    );
  });
  it('hashes each of several strings prepared together as it hashes it alone', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 16, maxLength: 16 }), fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 12 }), (k, strings) => {
        const [a, b] = sipKey(k);
        const prepared = new SipMessages(strings);
        const out = new Int32Array(2);
        expect(prepared.count).toBe(strings.length);
        strings.forEach((data, i) => {
          prepared.hashInto(i, a, b, out);
          expect(hex64({ hi: out[0]! >>> 0, lo: out[1]! >>> 0 })).toBe(referenceSiphash(k, data));
        });
      }),
      { numRuns: 300 },
    );
  });
});

describe('BIP158 official test vectors (Bitcoin Core blockfilters.json)', () => {
  it('has the vectors', () => expect(vectors.length).toBe(6));

  for (const [height, hash, blockHex, prevScripts, prevHeader, filterHex, headerHex, notes] of vectors) {
    describe(`block ${height} ${notes}`, () => {
      const block = parseBlock(blockHex);
      const elements = basicFilterElements(block, prevScripts.map(fromHex));
      const filter = fromHex(filterHex);

      it('the vector block hashes to its stated hash', () => expect(block.hash).toBe(hash));
      it('builds the exact filter and header', () => {
        expect(toHex(buildBasicFilter(hash, elements))).toBe(filterHex);
        expect(basicFilterHeader(filter, prevHeader)).toBe(headerHex);
      });
      it('matches every element, alone and among other scripts', () => {
        for (const e of elements) {
          expect(basicFilterMatchesAny(filter, hash, [e])).toBe(true);
          expect(basicFilterMatchesAny(filter, hash, [Uint8Array.of(0x51, 1, 2), e, Uint8Array.of(0x00, 0x14)])).toBe(true);
        }
      });
      it('decodes to N sorted values', () => {
        const values = decodeBasicFilter(filter);
        const distinct = new Set(elements.map(toHex)).size;
        expect(values.length).toBe(distinct);
        for (let i = 1; i < values.length; i++) expect(values[i]!).toBeGreaterThanOrEqual(values[i - 1]!);
      });
      it('answers the same from the decoded filter', () => {
        const values = decodeBasicFilter(filter);
        const strangers = Array.from({ length: 200 }, (_, i) => Uint8Array.of(0x6a, 0x04, i & 0xff, i >> 8, 0xaa, 0xbb));
        for (const query of [...elements.map((e) => [e]), strangers, [], [...strangers, ...elements.slice(-1)]]) {
          expect(decodedFilterMatchesAny(values, hash, query)).toBe(basicFilterMatchesAny(filter, hash, query));
          expect(decodedFilterMatchesAny(values, hash, new SipMessages(query))).toBe(basicFilterMatchesAny(filter, hash, query));
        }
        if (elements.length > 0) expect(decodedFilterMatchesAny(values, hash, [elements[0]!])).toBe(true);
      });
      it('does not match scripts that are not in the block', () => {
        const strangers = Array.from({ length: 2000 }, (_, i) => Uint8Array.of(0x6a, 0x04, i & 0xff, i >> 8, 0xaa, 0xbb));
        const hits = strangers.filter((s) => basicFilterMatchesAny(filter, hash, [s])).length;
        expect(hits).toBeLessThanOrEqual(1);
      });
    });
  }
});

describe('BIP158 filters of the regtest fixtures', () => {
  const blocks = loadFixture<Record<string, { height: number; prev: string | null; hex: string; filter: string; filter_header: string }>>('blocks');
  const parsed = Object.entries(blocks).map(([hash, b]) => ({ hash, ...b, block: parseBlock(b.hex) }));
  // Every output any fixture block created, to find the scripts each block spends.
  const outputs = new Map<string, Uint8Array>();
  for (const { block } of parsed) {
    for (const tx of block.transactions) tx.outputs.forEach((o, i) => outputs.set(`${txid(tx)}:${i}`, o.script));
  }
  const allScripts = [...new Map([...outputs.values()].map((s) => [toHex(s), s])).values()];

  it('rebuilds every block filter and filter header the node produced', () => {
    for (const b of parsed) {
      const spent = b.block.transactions.slice(1).flatMap((tx) => tx.inputs.map((i) => outputs.get(`${i.txid}:${i.vout}`)!));
      expect(spent.every((s) => s !== undefined)).toBe(true);
      expect(toHex(buildBasicFilter(b.hash, basicFilterElements(b.block, spent)))).toBe(b.filter);
      const prevHeader = b.prev === null ? '0'.repeat(64) : blocks[b.prev]!.filter_header;
      expect(basicFilterHeader(fromHex(b.filter), prevHeader)).toBe(b.filter_header);
    }
  });

  it('every output script of every block matches its filter; other scripts mostly do not', () => {
    let strangersTried = 0;
    let falsePositives = 0;
    let batchFalsePositives = 0;
    for (const b of parsed) {
      const filter = fromHex(b.filter);
      const own = new Set<string>();
      for (const tx of b.block.transactions) {
        for (const o of tx.outputs) {
          if (o.script.length === 0 || o.script[0] === 0x6a) continue;
          own.add(toHex(o.script));
          expect(basicFilterMatchesAny(filter, b.hash, [o.script])).toBe(true);
        }
      }
      const spent = new Set(b.block.transactions.slice(1).flatMap((tx) => tx.inputs.map((i) => toHex(outputs.get(`${i.txid}:${i.vout}`)!))));
      for (const s of allScripts) {
        const h = toHex(s);
        if (own.has(h) || spent.has(h)) continue;
        strangersTried++;
        if (basicFilterMatchesAny(filter, b.hash, [s])) falsePositives++;
      }
      // All strangers in one query (the sorted merge) only match when one of them collides.
      const strangers = allScripts.filter((s) => !own.has(toHex(s)) && !spent.has(toHex(s)));
      if (basicFilterMatchesAny(filter, b.hash, strangers)) batchFalsePositives++;
      // And adding one of the block's own scripts to that query makes it match.
      const ownScript = b.block.transactions[0]!.outputs.find((o) => o.script.length > 0 && o.script[0] !== 0x6a)!.script;
      expect(basicFilterMatchesAny(filter, b.hash, [...strangers, ownScript])).toBe(true);
    }
    expect(strangersTried).toBeGreaterThan(5_000);
    expect(falsePositives / strangersTried).toBeLessThan(0.001);
    expect(batchFalsePositives).toBeLessThanOrEqual(2);
  });

  it('an empty filter or an empty query matches nothing', () => {
    const hash = parsed[0]!.hash;
    expect(basicFilterMatchesAny(Uint8Array.of(0), hash, allScripts)).toBe(false);
    expect(basicFilterMatchesAny(fromHex(parsed[0]!.filter), hash, [])).toBe(false);
    expect(toHex(buildBasicFilter(hash, []))).toBe('00');
  });
});

/** Golomb-Rice decoding one bit at a time, as BIP158 describes it, to check the word-wise reader against. */
function referenceDecode(filter: Uint8Array, n: number, offset: number): number[] {
  let pos = offset * 8;
  const bit = () => {
    if (pos >= filter.length * 8) throw new Error('truncated');
    const b = (filter[pos >>> 3]! >>> (7 - (pos & 7))) & 1;
    pos++;
    return b;
  };
  const values: number[] = [];
  let last = 0;
  for (let i = 0; i < n; i++) {
    let q = 0;
    while (bit() === 1) q++;
    let r = 0;
    for (let j = 0; j < 19; j++) r = r * 2 + bit();
    last += q * 2 ** 19 + r;
    values.push(last);
  }
  return values;
}

describe('Golomb-Rice reader', () => {
  it('decodes like a bit-by-bit reader, and every cut-off filter either decodes the same prefix or is reported truncated', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ minLength: 1, maxLength: 40 }), { minLength: 1, maxLength: 60 }),
        fc.nat({ max: 400 }),
        (scripts, cut) => {
          const hash = vectors[1]![1];
          const filter = buildBasicFilter(hash, scripts);
          const n = filter[0]!; // fewer than 0xfd elements: a one-byte count
          expect([...decodeBasicFilter(filter)]).toEqual(referenceDecode(filter, n, 1));
          const short = filter.subarray(0, Math.max(1, filter.length - 1 - (cut % filter.length)));
          let expected: number[] | 'truncated';
          try {
            expected = referenceDecode(short, n, 1);
          } catch {
            expected = 'truncated';
          }
          if (expected === 'truncated') expect(() => decodeBasicFilter(short)).toThrow(/truncated/);
          else expect([...decodeBasicFilter(short)]).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });
  it('reads quotients longer than a 32-bit word', () => {
    // One element: 40 one-bits, a zero, then 19 remainder bits of 0b101 (value 40 * 2^19 + 5).
    const bits = '1'.repeat(40) + '0' + (5).toString(2).padStart(19, '0');
    const bytes = Uint8Array.from({ length: Math.ceil(bits.length / 8) }, (_, i) => parseInt(bits.slice(i * 8, i * 8 + 8).padEnd(8, '0'), 2));
    const filter = Uint8Array.of(1, ...bytes);
    expect([...decodeBasicFilter(filter)]).toEqual([40 * 2 ** 19 + 5]);
    expect(() => decodeBasicFilter(filter.subarray(0, 5))).toThrow(/truncated/);
  });
});

describe('bad input', () => {
  const hash = vectors[0]![1];
  it('rejects a truncated filter with a typed error', () => {
    expect(() => basicFilterMatchesAny(Uint8Array.of(5, 0xff), hash, [Uint8Array.of(1)])).toThrow(FilterError);
    expect(() => decodeBasicFilter(new Uint8Array(0))).toThrow(/empty/);
    expect(() => decodeBasicFilter(Uint8Array.of(0xfd, 1))).toThrow(/truncated/);
  });
  it('rejects a malformed block hash', () => {
    expect(() => basicFilterMatchesAny(Uint8Array.of(0), 'zz', [])).toThrow(FilterError);
  });
});
