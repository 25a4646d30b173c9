/** The NUL guard names where it found U+0000, as a JSON pointer. */
import { describe, expect, it } from 'vitest';
import { findNul } from '../../../src/api/text-guard.js';

describe('findNul', () => {
  it('points at the first string or key holding U+0000, escaping ~ and /', () => {
    expect(findNul({ a: 'ok', b: [{ c: 'x' }, { 'd/e~f': 'y\u0000' }] })).toBe('/b/1/d~1e~0f');
    expect(findNul({ ['k\u0000']: 1 })).toBe('/k\u0000');
    expect(findNul('\u0000')).toBe('');
    expect(findNul(Object.assign(Object.create(null), { q: 'a\u0000' }))).toBe('/q');
  });

  it('finds nothing in clean values, numbers and nulls', () => {
    expect(findNul({ a: 'ok', b: [1, null, { c: true }] })).toBeUndefined();
    expect(findNul(undefined)).toBeUndefined();
  });
});
