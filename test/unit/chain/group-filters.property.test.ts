/**
 * GroupFilters never misses a block: over reads of random blocks, with the wallets deriving more scripts at
 * random points while a read's blocks are applied, every answer equals matching the block's filter with the
 * group's scripts of that moment, as if nothing were kept. A miss would be a payment the scan never sees.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { BlockSummary } from '../../../src/chain/types.js';
import { basicFilterMatchesAny, buildBasicFilter } from '../../../src/core/bip158.js';
import { GroupFilters } from '../../../src/chain/bitcoind/group-filters.js';

const UNIVERSE = 40;
/** A distinct P2WPKH-shaped script per number. */
const script = (n: number): Uint8Array => Uint8Array.from([0x00, 0x14, n, ...Array.from({ length: 19 }, (_, i) => (n * 13 + i) & 0xff)]);
const other = (n: number): Uint8Array => Uint8Array.from([0x51, 0x20, n, ...Array.from({ length: 31 }, (_, i) => (n * 7 + i) & 0xff)]);

/** A block paying some of the universe's scripts (or none), among other outputs; `filter` false: no filter. */
const blockArbitrary = fc.record({
  paid: fc.uniqueArray(fc.integer({ min: 0, max: UNIVERSE - 1 }), { maxLength: 3 }),
  others: fc.integer({ min: 0, max: 20 }),
  filter: fc.boolean(),
});

/** Reads of blocks; before each block is applied, the wallets may derive up to 10 more scripts. */
const scenarioArbitrary = fc.record({
  firstDerived: fc.integer({ min: 0, max: UNIVERSE }),
  reads: fc.array(fc.array(fc.record({ block: blockArbitrary, derive: fc.integer({ min: 0, max: 10 }) }), { minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 4 }),
});

describe('GroupFilters (property)', () => {
  it('answers as a match of the filter with the scripts of the moment, for every block of every read', () => {
    fc.assert(
      fc.property(scenarioArbitrary, ({ firstDerived, reads }) => {
        let derived = firstDerived;
        const current = () => Array.from({ length: derived }, (_, i) => script(i));
        const filters = new GroupFilters(() => ({ key: String(derived), derive: current }));
        let height = 0;
        for (const read of reads) {
          const summaries: BlockSummary[] = read.map(({ block }) => {
            const hash = (++height).toString(16).padStart(64, '0');
            const outputs = [...block.paid.map(script), ...Array.from({ length: block.others }, (_, i) => other(height + i))];
            return { height, hash, prevHash: null, time: 0, filter: block.filter ? buildBasicFilter(hash, outputs) : null };
          });
          const directly = (s: BlockSummary) => s.filter === null || basicFilterMatchesAny(s.filter, s.hash, current());
          expect(filters.blocksToFetch(['w'], summaries)).toEqual(summaries.filter(directly).map((s) => s.hash));
          read.forEach(({ derive }, i) => {
            derived = Math.min(UNIVERSE, derived + derive);
            const summary = summaries[i]!;
            if (summary.filter !== null) expect(filters.matches(['w'], summary.hash, summary.filter)).toBe(directly(summary));
          });
        }
      }),
      { numRuns: 200 },
    );
  });
});
