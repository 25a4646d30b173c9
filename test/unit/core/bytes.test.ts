import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { binaryOfBytes, bytesOfBinary, fromHex, hexOfBinary, isHexOfBinary, reverseHex, toHex } from '../../../src/core/bytes.js';

/** The plain definition the fast encoders must equal. */
const hexOf = (bytes: Iterable<number>): string => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');

describe('hex', () => {
  it('encodes every byte value in lower case, and fromHex reads it back', () => {
    const all = Uint8Array.from({ length: 256 }, (_, b) => b);
    expect(toHex(all)).toBe(hexOf(all));
    expect(fromHex(toHex(all))).toEqual(all);
    expect(toHex(new Uint8Array(0))).toBe('');
  });

  it('encodes only the bytes of a view, not the rest of its buffer', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.nat(), fc.nat(), (bytes, a, b) => {
        const start = bytes.length === 0 ? 0 : a % (bytes.length + 1);
        const end = start + (bytes.length === 0 ? 0 : b % (bytes.length - start + 1));
        const view = bytes.subarray(start, end);
        expect(toHex(view)).toBe(hexOf(view));
        expect(reverseHex(view)).toBe(hexOf([...view].reverse()));
        expect(reverseHex(bytes, start, end)).toBe(hexOf([...view].reverse()));
      }),
      { numRuns: 500 },
    );
  });

  it('reverses a txid as Bitcoin Core shows it, also after a longer value grew the scratch space', () => {
    const hash = fromHex('6fe28c0ab6f1b372c1a6a246ae63f74f931e8365e15a089c68d6190000000000');
    expect(reverseHex(hash)).toBe('000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f');
    reverseHex(new Uint8Array(1000).fill(0xab));
    expect(reverseHex(hash)).toBe('000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f');
    expect(reverseHex(hash, 30, 32)).toBe('0000');
    expect(reverseHex(hash, 0, 2)).toBe('e26f');
  });
});

describe('bytes as a string of one character per byte', () => {
  it('holds every byte value in one character, and gives back the same bytes and hex', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), (bytes) => {
        const binary = binaryOfBytes(bytes);
        expect(binary.length).toBe(bytes.length);
        expect(hexOfBinary(binary)).toBe(toHex(bytes));
        expect(bytesOfBinary(binary)).toEqual(bytes);
        expect(isHexOfBinary(toHex(bytes), binary)).toBe(true);
      }),
      { numRuns: 500 },
    );
    const all = Uint8Array.from({ length: 256 }, (_, b) => b);
    expect([...binaryOfBytes(all)].map((c) => c.charCodeAt(0))).toEqual([...all]);
  });

  it('never takes hex with a bad digit, a byte missing or one more for the same bytes', () => {
    const binary = binaryOfBytes(fromHex('0200000001ab'));
    expect(isHexOfBinary('0200000001ab', binary)).toBe(true);
    expect(isHexOfBinary('0200000001ac', binary)).toBe(false);
    expect(isHexOfBinary('0200000001', binary)).toBe(false);
    expect(isHexOfBinary('0200000001ab00', binary)).toBe(false);
    // Node's decoding stops at the first pair that is not hex: the length alone must not let it through.
    expect(isHexOfBinary('0200000001zz', binaryOfBytes(fromHex('0200000001')) + '\u0000')).toBe(false);
    expect(isHexOfBinary('02000000zzab', binary)).toBe(false);
    expect(isHexOfBinary('0200000001AB', binary)).toBe(true); // the same bytes
    expect(isHexOfBinary('0200000001ab', binaryOfBytes(fromHex('0200000001ac')))).toBe(false);
    expect(hexOfBinary(binaryOfBytes(new Uint8Array(10_000).fill(0xab)))).toBe('ab'.repeat(10_000)); // past the scratch space
    expect(hexOfBinary(binary)).toBe('0200000001ab');
    expect(isHexOfBinary('', '')).toBe(true);
  });
});
