/**
 * Fetches the blocks a scan will apply ahead of it, a few at a time, so the node reads and sends the next
 * blocks while the engine applies the current one. Blocks are handed out in the order asked; a block not
 * announced ahead (its filter matched only after the wallets derived more scripts) is fetched on demand.
 */
import type { BlockSource } from '../../chain/types.js';
import type { Block } from '../../core/tx.js';

export class BlockPrefetch {
  private readonly inFlight = new Map<string, Promise<Block>>();
  private queue: string[] = [];

  constructor(
    private readonly chain: Pick<BlockSource, 'getBlock'>,
    /** Blocks requested at once (the RPC client's sockets bound it further). */
    private readonly depth: number,
  ) {}

  /** The blocks expected next, in the order they will be taken. */
  announce(hashes: readonly string[]): void {
    this.queue = [...hashes];
    this.fill();
  }

  take(hash: string): Promise<Block> {
    const pending = this.inFlight.get(hash) ?? this.chain.getBlock(hash);
    this.inFlight.delete(hash);
    this.queue = this.queue.filter((h) => h !== hash);
    this.fill();
    return pending;
  }

  /** Drops what was fetched ahead and not taken (the scan stopped early); their failures are not reported. */
  discard(): void {
    for (const pending of this.inFlight.values()) pending.catch(() => undefined);
    this.inFlight.clear();
    this.queue = [];
  }

  private fill(): void {
    while (this.inFlight.size < this.depth && this.queue.length > 0) {
      const hash = this.queue.shift()!;
      if (this.inFlight.has(hash)) continue;
      const pending = this.chain.getBlock(hash);
      pending.catch(() => undefined); // reported when taken
      this.inFlight.set(hash, pending);
    }
  }
}
