/**
 * Fetches the blocks a scan will apply ahead of it, so the node reads and sends the next blocks while the
 * engine applies the current one: several blocks per request (one JSON-RPC batch) and several requests at
 * once. Blocks are handed out in the order asked; a block not announced ahead (its filter matched only after
 * the wallets derived more scripts) is fetched on demand. At most `maxAhead` blocks are held (requested or
 * received, not yet taken), which bounds memory whatever the length of the scan.
 */
import type { BlockSource } from '../types.js';
import type { Block } from '../../core/tx.js';

export interface BlockPrefetchLimits {
  /** Blocks requested or held ahead of the one being applied. */
  maxAhead: number;
  /** Blocks per request. */
  perRequest: number;
}

export class BlockPrefetch {
  private readonly held = new Map<string, Promise<Block>>();
  private queue: string[] = [];

  constructor(
    private readonly chain: Pick<BlockSource, 'getBlock' | 'getBlocks'>,
    private readonly limits: BlockPrefetchLimits,
  ) {}

  /** The blocks expected next, in the order they will be taken. */
  announce(hashes: readonly string[]): void {
    this.queue = hashes.filter((hash) => !this.held.has(hash));
    this.fill();
  }

  take(hash: string): Promise<Block> {
    const pending = this.held.get(hash) ?? this.chain.getBlock(hash);
    this.held.delete(hash);
    if (this.queue[0] === hash) this.queue.shift();
    else this.queue = this.queue.filter((h) => h !== hash);
    this.fill();
    return pending;
  }

  /** Drops what was fetched ahead and not taken (the scan stopped early); their failures are not reported. */
  discard(): void {
    for (const pending of this.held.values()) pending.catch(() => undefined);
    this.held.clear();
    this.queue = [];
  }

  private fill(): void {
    while (this.queue.length > 0) {
      const room = Math.min(this.limits.perRequest, this.limits.maxAhead - this.held.size);
      // Wait for room for a whole request (or the last few blocks): small requests cost round trips.
      if (room < Math.min(this.limits.perRequest, this.queue.length)) return;
      const hashes = this.queue.splice(0, room);
      const request = this.chain.getBlocks(hashes);
      hashes.forEach((hash, i) => {
        const block = request.then((blocks) => blocks[i]!);
        block.catch(() => undefined); // reported when taken
        this.held.set(hash, block);
      });
    }
  }
}
