/**
 * The blocks a group of wallets reads in full, by the blocks' BIP158 filters (built here as Core builds them)
 * and the group's scripts: a block without a filter always, a matching one, never another; scripts derived
 * while a read's blocks are applied match that read's blocks.
 */
import { describe, expect, it } from 'vitest';
import type { BlockSummary } from '../../../src/chain/types.js';
import { buildBasicFilter } from '../../../src/core/bip158.js';
import { GroupFilters, type GroupScripts } from '../../../src/chain/bitcoind/group-filters.js';

/** A distinct P2WPKH-shaped script per number. */
const script = (n: number): Uint8Array => Uint8Array.from([0x00, 0x14, ...Array.from({ length: 20 }, (_, i) => (n * 31 + i) & 0xff)]);
const hashOf = (n: number): string => n.toString(16).padStart(2, '0').repeat(32);
/** Other outputs of the blocks (P2TR-shaped: never one of the wallet's). */
const noise = Array.from({ length: 50 }, (_, i) => Uint8Array.from([0x51, 0x20, ...Array.from({ length: 32 }, (_, j) => (i * 7 + j) & 0xff)]));

function summary(n: number, scripts: readonly Uint8Array[] | null): BlockSummary {
  const hash = hashOf(n);
  return { height: n, hash, prevHash: null, time: 0, filter: scripts === null ? null : buildBasicFilter(hash, [...noise, ...scripts]) };
}

/** A group whose wallets have derived `derived.count` scripts so far; counts how often they are listed. */
function group(derived: { count: number }) {
  const listed = { times: 0 };
  const scriptsOfGroup = (): GroupScripts => ({
    key: String(derived.count),
    derive: () => {
      listed.times++;
      return Array.from({ length: derived.count }, (_, i) => script(i));
    },
  });
  return { filters: new GroupFilters(scriptsOfGroup), listed };
}

describe('GroupFilters', () => {
  it('reads in full the blocks without a filter and those whose filter matches, and no other', () => {
    const { filters } = group({ count: 3 });
    const read = [summary(1, []), summary(2, [script(2)]), summary(3, null), summary(4, [script(7)])];
    expect(filters.blocksToFetch(['w'], read)).toEqual([hashOf(2), hashOf(3)]);
    expect(filters.matches(['w'], hashOf(2), read[1]!.filter!)).toBe(true);
    expect(filters.matches(['w'], hashOf(1), read[0]!.filter!)).toBe(false);
    expect(filters.matches(['w'], hashOf(4), read[3]!.filter!)).toBe(false);
  });

  it('a script derived while the read is applied matches that read\'s blocks; the scripts are listed once per change', () => {
    const derived = { count: 3 };
    const { filters, listed } = group(derived);
    const read = [summary(1, [script(0)]), summary(2, [script(5)])];
    expect(filters.blocksToFetch(['w'], read)).toEqual([hashOf(1)]);
    expect(filters.matches(['w'], hashOf(2), read[1]!.filter!)).toBe(false);
    // Block 1 paid the wallet: it derives up to script 5, which block 2 pays.
    derived.count = 6;
    expect(filters.matches(['w'], hashOf(2), read[1]!.filter!)).toBe(true);
    expect(filters.matches(['w'], hashOf(1), read[0]!.filter!)).toBe(true);
    expect(listed.times).toBe(2);
  });

  it('a block outside the last read, or another group\'s, is matched on its own filter', () => {
    const { filters } = group({ count: 3 });
    filters.blocksToFetch(['w'], [summary(1, [script(9)])]);
    const later = summary(2, [script(1)]);
    expect(filters.matches(['w'], later.hash, later.filter!)).toBe(true);
    const other = summary(1, [script(9)]);
    expect(filters.matches(['w', 'v'], other.hash, other.filter!)).toBe(false);
  });
  it('a list that grows by appending (the same scripts, then more) matches old and new scripts, over many versions', () => {
    const scripts = [script(0), script(1)];
    let version = 0;
    // As the sync's lists do: each version a new array holding the very same scripts first.
    const filters = new GroupFilters(() => ({ key: String(version), derive: () => scripts.slice() }));
    for (let round = 0; round < 20; round++) {
      scripts.push(script(2 + round));
      version++;
      const read = [summary(100 + round, [script(2 + round)]), summary(150 + round, [script(round % 2)]), summary(30 + round, [Uint8Array.from([0xa9, 0x14, ...Array.from({ length: 20 }, (_, i) => (round * 13 + i) & 0xff), 0x87])])];
      expect(filters.blocksToFetch(['w'], read), `round ${round}`).toEqual([hashOf(100 + round), hashOf(150 + round)]);
      expect(filters.matches(['w'], hashOf(30 + round), read[2]!.filter!)).toBe(false);
    }
    // A list that is not an extension of the last one (a rescan forgot scripts): only its own scripts match.
    scripts.splice(0, scripts.length, script(3));
    version++;
    expect(filters.blocksToFetch(['w'], [summary(10, [script(0)]), summary(11, [script(3)])])).toEqual([hashOf(11)]);
  });
});
