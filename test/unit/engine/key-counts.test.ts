import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KeyCounts } from '../../../src/engine/key-counts.js';

describe('KeyCounts', () => {
  it('answers as a map of counts does, through growth and removals that move probed keys back', () => {
    // Few distinct random keys (consecutive ones rarely share a home slot), as many removes as adds: long probe
    // runs, keys leaving from their middle, tables grown.
    const run = fc.array(fc.integer({ min: 0, max: 2 ** 30 - 1 }), { minLength: 5, maxLength: 60 }).chain((pool) =>
      fc.tuple(fc.constant(pool), fc.array(fc.tuple(fc.constantFrom('add', 'remove'), fc.constantFrom(...pool)), { minLength: 50, maxLength: 300 })),
    );
    fc.assert(
      fc.property(run, ([pool, steps]) => {
        const counts = new KeyCounts();
        const model = new Map<number, number>();
        for (const [op, k] of steps) {
          if (op === 'add') {
            counts.add(k);
            model.set(k, (model.get(k) ?? 0) + 1);
          } else {
            counts.remove(k);
            const n = model.get(k) ?? 0;
            if (n <= 1) model.delete(k);
            else model.set(k, n - 1);
          }
          expect(counts.size).toBe(model.size);
          for (const k of pool) expect([k, counts.has(k)]).toEqual([k, model.has(k)]);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('holds 100,000 keys, then none once each was removed as often as added', () => {
    const counts = new KeyCounts();
    for (let k = 0; k < 100_000; k++) counts.add(k * 7919);
    counts.add(0);
    expect(counts.size).toBe(100_000);
    expect(counts.has(7919 * 99_999)).toBe(true);
    expect(counts.has(1)).toBe(false);
    for (let k = 0; k < 100_000; k++) counts.remove(k * 7919);
    expect([counts.size, counts.has(0)]).toEqual([1, true]);
    counts.remove(0);
    expect([counts.size, counts.has(0)]).toEqual([0, false]);
  });
});
