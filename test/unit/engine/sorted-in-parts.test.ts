/**
 * `sortedInParts` (the wallet lists' sort of a large wallet, cut into parts): the same order as Array.prototype.sort,
 * equal items kept in their order, and parts yielded between once a list is longer than one part.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sortedInParts } from '../../../src/engine/list-cache.js';

interface Item {
  key: number;
  at: number;
}
const byKey = (a: Item, b: Item) => a.key - b.key;

function run<T>(steps: Generator<void, T>): { result: T; pauses: number } {
  let pauses = 0;
  for (;;) {
    const step = steps.next();
    if (step.done) return { result: step.value, pauses };
    pauses++;
  }
}

describe('sortedInParts', () => {
  it('sorts as Array.prototype.sort does, keeping equal items in their order, at every length around a part', () => {
    for (const length of [0, 1, 2, 19_999, 20_000, 20_001, 40_000, 65_537]) {
      const items = Array.from({ length }, (_, at) => ({ key: (at * 7919) % 1_000, at }));
      const { result, pauses } = run(sortedInParts([...items], byKey));
      expect(result).toEqual([...items].sort(byKey));
      expect(pauses > 0, `length ${length}`).toBe(length > 20_000);
    }
  });

  it('agrees with Array.prototype.sort on random lists of several parts, with many repeats', () => {
    fc.assert(
      fc.property(fc.integer({ min: 20_001, max: 70_000 }), fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.integer({ min: 1, max: 5_000 }), (length, seed, distinct) => {
        let x = seed;
        const next = () => (x = (x * 48_271) % 2_147_483_647); // Park-Miller: the list is the seed's
        const items = Array.from({ length }, (_, at) => ({ key: next() % distinct, at }));
        expect(run(sortedInParts([...items], byKey)).result).toEqual([...items].sort(byKey));
      }),
      { numRuns: 8 },
    );
  });
});
