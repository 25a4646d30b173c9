/**
 * The prefetcher of a scan: blocks asked several per request, at most `maxAhead` held, handed out in order,
 * a block not announced fetched on demand, a failed read reported when (and only when) its block is taken.
 */
import { describe, expect, it } from 'vitest';
import { ChainError } from '../../../src/chain/types.js';
import type { Block } from '../../../src/core/tx.js';
import { BlockPrefetch } from '../../../src/chain/bitcoind/block-prefetch.js';

/** A block source whose answers the test releases by hand, recording every request. */
class ManualBlocks {
  readonly requests: string[][] = [];
  private readonly waiting: { hashes: string[]; settle: (error?: Error) => void }[] = [];
  failing = new Set<string>();
  getBlock = (hash: string): Promise<Block> => this.getBlocks([hash]).then((blocks) => blocks[0]!);
  getBlocks = (hashes: readonly string[]): Promise<Block[]> => {
    this.requests.push([...hashes]);
    return new Promise((resolve, reject) => {
      this.waiting.push({
        hashes: [...hashes],
        settle: () => {
          const bad = hashes.find((h) => this.failing.has(h));
          if (bad) reject(new ChainError('not_found', `no block ${bad}`));
          else resolve(hashes.map((hash) => ({ hash, prevHash: '', time: 0, transactions: [] })));
        },
      });
    });
  };
  /** Answers every request made so far. */
  releaseAll(): void {
    for (const w of this.waiting.splice(0)) w.settle();
  }
  get outstanding(): number {
    return this.waiting.length;
  }
}

const hashes = (n: number, prefix = 'b') => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
const tick = () => new Promise((r) => setImmediate(r));

describe('block prefetch', () => {
  it('requests announced blocks several at a time, never holding more than maxAhead, and hands them out in order', async () => {
    const chain = new ManualBlocks();
    const prefetch = new BlockPrefetch(chain, { maxAhead: 6, perRequest: 3 });
    const wanted = hashes(10);
    prefetch.announce(wanted);
    expect(chain.requests).toEqual([wanted.slice(0, 3), wanted.slice(3, 6)]);
    const taken: string[] = [];
    for (const hash of wanted) {
      const block = prefetch.take(hash);
      chain.releaseAll();
      taken.push((await block).hash);
      // Held: requested or received, not taken; a request waits until a whole one fits (or the rest).
      const held = chain.requests.flat().length - taken.length;
      expect(held).toBeLessThanOrEqual(6);
    }
    expect(taken).toEqual(wanted);
    expect(chain.requests.flat()).toEqual(wanted); // each block asked once
    expect(chain.requests.map((r) => r.length)).toEqual([3, 3, 3, 1]);
  });

  it('fetches a block that was not announced on demand, and a re-announcement does not ask again for blocks held', async () => {
    const chain = new ManualBlocks();
    const prefetch = new BlockPrefetch(chain, { maxAhead: 4, perRequest: 2 });
    prefetch.announce(['a', 'b', 'c']);
    prefetch.announce(['a', 'b', 'c', 'd']);
    const extra = prefetch.take('x');
    chain.releaseAll();
    expect((await extra).hash).toBe('x');
    // The end of an announcement goes in a smaller request rather than waiting for blocks that may never come.
    expect(chain.requests).toEqual([['a', 'b'], ['c'], ['d'], ['x']]);
  });

  it('reports a failed read when its block is taken, and a discarded failure nowhere', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const chain = new ManualBlocks();
      chain.failing = new Set(['b1', 'c1']);
      const prefetch = new BlockPrefetch(chain, { maxAhead: 4, perRequest: 2 });
      prefetch.announce(hashes(4));
      chain.releaseAll();
      await tick();
      await expect(prefetch.take('b0')).rejects.toMatchObject({ code: 'not_found' }); // same request as b1
      const other = new BlockPrefetch(chain, { maxAhead: 4, perRequest: 2 });
      other.announce(hashes(2, 'c'));
      chain.releaseAll();
      other.discard();
      await tick();
      await tick();
      expect(chain.outstanding).toBe(0);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
