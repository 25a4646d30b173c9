import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromHex, reverseHex, toHex } from '../../../src/core/bytes.js';

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
