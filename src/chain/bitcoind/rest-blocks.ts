/**
 * Blocks read through Bitcoin Core's REST interface (`-rest`) when the node serves it: raw bytes, where
 * `getblock <hash> 0` costs the node a hex encoding and the service a JSON parse and a hex decoding of twice
 * the block's size. The service does not require it: without REST, or when a REST read fails, blocks are
 * read over JSON-RPC as before (the caller's fallback), and the switch is logged.
 */
import { parseBlockForScan } from '../../core/block.js';
import type { Block } from '../../core/tx.js';
import { ChainError, type ChainLog } from '../types.js';
import type { RpcClient } from './rpc-client.js';

/** How long a node found without REST is read over JSON-RPC before REST is looked for again. */
const RECHECK_MS = 10 * 60_000;

export class RestBlockReader {
  /** Whether the node serves REST, and when that was found out; undefined: not looked yet (or a read failed). */
  private state: { available: boolean; at: number } | undefined;
  private checking: Promise<boolean> | undefined;
  /** What the log last said (a change is logged, not every look). */
  private reported: boolean | undefined;

  constructor(
    private readonly rpc: Pick<RpcClient, 'getBinary'>,
    private readonly log: ChainLog | undefined = undefined,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The blocks, in the order asked, each checked to be the one asked for; null when REST is not served or a
   * read failed (the caller reads them over JSON-RPC, which also reports unknown blocks authoritatively).
   */
  async getBlocks(hashes: readonly string[]): Promise<Block[] | null> {
    if (!(await this.available())) return null;
    try {
      return await Promise.all(hashes.map((hash) => this.getBlock(hash)));
    } catch (error) {
      this.state = undefined;
      const reason = error instanceof Error ? error.message : String(error);
      this.log?.('warn', 'reading blocks over REST failed; reading them over JSON-RPC', { reason });
      return null;
    }
  }

  private async getBlock(hash: string): Promise<Block> {
    const bytes = await this.rpc.getBinary(`/rest/block/${hash}.bin`);
    let block: Block;
    try {
      block = parseBlockForScan(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length));
    } catch {
      throw new ChainError('bad_response', `Bitcoin Core sent a block ${hash} over REST that does not parse`);
    }
    if (block.hash !== hash) throw new ChainError('bad_response', `Bitcoin Core sent block ${block.hash} over REST when asked for ${hash}`);
    return block;
  }

  private async available(): Promise<boolean> {
    if (this.state && (this.state.available || this.now() - this.state.at < RECHECK_MS)) return this.state.available;
    this.checking ??= this.check().finally(() => (this.checking = undefined));
    return this.checking;
  }

  private async check(): Promise<boolean> {
    let available: boolean;
    try {
      await this.rpc.getBinary('/rest/chaininfo.json');
      available = true;
    } catch {
      available = false;
    }
    if (available !== this.reported) {
      this.reported = available;
      this.log?.('info', available ? 'reading blocks over the node\'s REST interface' : 'the node serves no REST interface (-rest); reading blocks over JSON-RPC');
    }
    this.state = { available, at: this.now() };
    return available;
  }
}
