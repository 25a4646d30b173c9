/**
 * Follows Bitcoin Core for groups of wallets: summaries (hash, header, BIP158 filter) read ahead of the blocks
 * applied, several reads at once; a block whose filter matches none of the group's scripts connected without
 * reading it, the others read ahead in batches (block-prefetch.ts); the group's last block checked against the
 * active chain before moving on, and disconnected when it left it. The mempool is listed from what the source
 * keeps between reads (mempool-cache.ts).
 */
import { NO_PARENT, type BlockConnected, type BlockDisconnected, type ChainFollower, type FollowRequest, type MempoolSnapshot, type ChainWatch } from '../follower.js';
import { ChainError, type BlockSource, type BlockSummary, type ChainTip } from '../types.js';
import { BlockPrefetch } from './block-prefetch.js';
import { GroupFilters } from './group-filters.js';
import type { HeldMempoolTx } from './mempool-cache.js';

/** Blocks summarised (hash, header, filter) per read of the node, and reads in flight at once. */
const SUMMARIES_PER_READ = 125;
const SUMMARY_READS_AHEAD = 4;
/**
 * Full blocks requested ahead of the one being applied, and per request: four requests in flight keep the
 * node's RPC threads busy, and eight blocks of the largest possible size (4 MB, 8 MB of hex) stay within the
 * RPC client's 64 MiB limit of an answer. Held blocks bound the scan's memory whatever the chain's length.
 */
const BLOCKS_AHEAD = { maxAhead: 32, perRequest: 8 };

export type BitcoindFollowerSource = BlockSource & { mempoolTransactions(): Promise<HeldMempoolTx[]>; verifyNetwork(): Promise<void> };

export class BitcoindFollower implements ChainFollower {
  /** The groups being followed, by their wallets: their filters are matched against their scripts now. */
  private readonly following = new Map<string, FollowRequest>();
  private readonly filters = new GroupFilters((watchers) => this.following.get(watchers.join(' '))!.scripts());

  /** A long poll of the node's tip (absent: the follower is polled alone). */
  readonly watchTip?: (onTip: (tip: ChainTip) => void) => ChainWatch;
  /** A frequent look at the node's mempool (absent: it is read at the sync's interval alone). */
  readonly watchMempool?: (onChange: () => void) => ChainWatch;

  constructor(
    private readonly source: BitcoindFollowerSource,
    watches: Pick<ChainFollower, 'watchTip' | 'watchMempool'> = {},
  ) {
    if (watches.watchTip) this.watchTip = watches.watchTip;
    if (watches.watchMempool) this.watchMempool = watches.watchMempool;
  }

  verifyNetwork(): Promise<void> {
    return this.source.verifyNetwork();
  }

  tip(): Promise<ChainTip> {
    return this.source.getTip();
  }

  async *follow(request: FollowRequest, to: ChainTip, maxBlocks: number): AsyncGenerator<BlockConnected | BlockDisconnected> {
    const { from } = request;
    if (from.hash !== null && (await this.activeHashAt(from.height)) !== from.hash) {
      yield await this.disconnected(request, from.height, from.hash);
      return;
    }
    const last = Math.min(to.height, from.height + maxBlocks);
    const prefetch = new BlockPrefetch(this.source, BLOCKS_AHEAD);
    const group = request.watchers.join(' ');
    this.following.set(group, request);
    let prevHash = from.hash;
    // Later summaries are read while the current ones are applied, several reads at once so that the node
    // answers them on several threads (those not reached are dropped unread when the step stops early).
    const reads: Array<{ from: number; to: number; summaries: Promise<BlockSummary[]> }> = [];
    let unread = from.height + 1;
    const readAhead = () => {
      for (; reads.length < SUMMARY_READS_AHEAD && unread <= last; unread = reads.at(-1)!.to + 1) {
        const end = Math.min(last, unread + SUMMARIES_PER_READ - 1);
        const summaries = this.source.getBlockSummaries(unread, end);
        summaries.catch(() => undefined); // reported when awaited
        reads.push({ from: unread, to: end, summaries });
      }
    };
    try {
      readAhead();
      for (let read = reads.shift(); read; read = reads.shift()) {
        const summaries = await read.summaries;
        const complete = summaries.length === read.to - read.from + 1;
        if (complete) readAhead();
        prefetch.announce(this.filters.blocksToFetch(request.watchers, summaries));
        for (const summary of summaries) {
          if (prevHash !== null && summary.prevHash !== prevHash) return; // the node's chain moved under us
          const update = await this.connected(prefetch, request, summary);
          if (!update) return;
          yield update;
          prevHash = summary.hash;
        }
        if (!complete) return; // the chain ended or changed during the read
      }
    } finally {
      prefetch.discard();
      this.following.delete(group);
    }
  }

  async mempool(): Promise<MempoolSnapshot> {
    const mempool = await this.source.mempoolTransactions();
    return { type: 'mempool', transactions: mempool.map((m) => ({ tx: m.tx, txid: m.txid, time: m.time })) };
  }

  private async activeHashAt(height: number): Promise<string | null> {
    try {
      return await this.source.getBlockHash(height);
    } catch (error) {
      if (error instanceof ChainError && error.code === 'not_found') return null;
      throw error;
    }
  }

  private async disconnected(request: FollowRequest, height: number, hash: string): Promise<BlockDisconnected> {
    const prevHash = (await request.recordedParent?.(hash)) ?? (await this.source.getBlockHeader(hash)).prevHash ?? NO_PARENT;
    return { type: 'block_disconnected', height, hash, prevHash };
  }

  /**
   * One block: empty when its filter matches none of the group's scripts (checked again here: the block before
   * may have made the wallets derive more), else read in full. Undefined when the block read is not the one
   * summarised (reorg in progress).
   */
  private async connected(prefetch: BlockPrefetch, request: FollowRequest, summary: BlockSummary): Promise<BlockConnected | undefined> {
    const { height, hash } = summary;
    const prevHash = summary.prevHash ?? NO_PARENT;
    if (summary.filter !== null && !this.filters.matches(request.watchers, hash, summary.filter)) {
      return { type: 'block_connected', height, hash, prevHash, time: summary.time, transactions: [], read: false };
    }
    const block = await prefetch.take(hash);
    if (block.prevHash !== prevHash) return undefined;
    return { type: 'block_connected', height, hash, prevHash, time: block.time, transactions: block.transactions, read: true };
  }
}
