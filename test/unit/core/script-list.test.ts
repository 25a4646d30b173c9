import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { basicFilterMatchesAny, buildBasicFilter, SipMessages } from '../../../src/core/bip158.js';
import { toHex } from '../../../src/core/bytes.js';
import { PackedScripts } from '../../../src/core/script-list.js';

const script = fc.uint8Array({ minLength: 0, maxLength: 80 });
const hexOf = (list: Iterable<Uint8Array>) => [...list].map(toHex);

describe('PackedScripts', () => {
  it('holds what was appended, in order, whatever the lengths and however often it grew', () => {
    fc.assert(
      fc.property(fc.array(fc.array(script, { maxLength: 30 }), { maxLength: 12 }), (parts) => {
        let list = PackedScripts.of([]);
        const versions: Array<[PackedScripts, string[]]> = [[list, []]];
        for (const part of parts) {
          list = list.concat(part);
          versions.push([list, [...versions.at(-1)![1], ...part.map(toHex)]]);
        }
        // Every version keeps its own scripts after later ones grew (and moved) the shared buffer.
        for (const [version, expected] of versions) {
          expect(version.length).toBe(expected.length);
          expect(hexOf(version)).toEqual(expected);
          expect(version.map((s, i) => `${i}:${toHex(s)}`)).toEqual(expected.map((s, i) => `${i}:${s}`));
        }
      }),
    );
  });

  it('tells a version grown from another from one that only has equal scripts', () => {
    const a = fc.sample(script, 3);
    const first = PackedScripts.of(a.slice(0, 2));
    const grown = first.concat([a[2]!]);
    expect(grown.grownFrom(first)).toBe(true);
    expect(grown.from(2).map(toHex)).toEqual([toHex(a[2]!)]);
    expect(first.grownFrom(grown)).toBe(false);
    expect(grown.grownFrom(PackedScripts.of(a.slice(0, 2)))).toBe(false); // equal bytes, another list
    expect(grown.grownFrom(a.slice(0, 2))).toBe(false); // an array is never the same list
  });

  it('forks when an older version is extended, leaving the newer one as it was', () => {
    const [x, y, z] = [new Uint8Array([1, 2]), new Uint8Array([3]), new Uint8Array([4, 5, 6])];
    const first = PackedScripts.of([x]);
    const newer = first.concat([y]);
    const fork = first.concat([z]);
    expect(hexOf(newer)).toEqual(['0102', '03']);
    expect(hexOf(fork)).toEqual(['0102', '040506']);
    expect(fork.grownFrom(first)).toBe(false); // its own buffer: not the list `first` is a version of
    expect(newer.grownFrom(first)).toBe(true);
    expect(() => newer.at(2)).toThrow(RangeError);
    expect(() => newer.at(-1)).toThrow(RangeError);
  });

  it('hashes as the same scripts in an array do, whatever their lengths (read in place)', () => {
    fc.assert(
      fc.property(fc.array(script, { minLength: 1, maxLength: 30 }), fc.array(script, { maxLength: 5 }), (scripts, more) => {
        const list = PackedScripts.of(scripts).concat(more); // a grown list: words read past the first version
        const all = [...scripts, ...more];
        const [packed, array] = [new SipMessages(list), new SipMessages(all)];
        const [a, b] = [new Int32Array(2), new Int32Array(2)];
        for (let i = 0; i < all.length; i++) {
          packed.hashInto(i, { hi: 5, lo: 6 }, { hi: 7, lo: 8 }, a);
          array.hashInto(i, { hi: 5, lo: 6 }, { hi: 7, lo: 8 }, b);
          expect([...a]).toEqual([...b]);
        }
      }),
    );
  });

  it('matches block filters as the same scripts in an array do', () => {
    const hash = '11'.repeat(32);
    const watched = [new Uint8Array([0x00, 0x14, ...new Array(20).fill(7)]), new Uint8Array([0x51])];
    const other = new Uint8Array([0x00, 0x14, ...new Array(20).fill(9)]);
    const packed = PackedScripts.of(watched);
    expect(basicFilterMatchesAny(buildBasicFilter(hash, [watched[1]!]), hash, packed)).toBe(true);
    expect(basicFilterMatchesAny(buildBasicFilter(hash, [other]), hash, packed)).toBe(false);
    const fromPacked = new SipMessages(packed);
    const fromArray = new SipMessages(watched);
    const out = [new Int32Array(2), new Int32Array(2)];
    for (let i = 0; i < 2; i++) {
      fromPacked.hashInto(i, { hi: 1, lo: 2 }, { hi: 3, lo: 4 }, out[0]!);
      fromArray.hashInto(i, { hi: 1, lo: 2 }, { hi: 3, lo: 4 }, out[1]!);
      expect([...out[0]!]).toEqual([...out[1]!]);
    }
  });
});
