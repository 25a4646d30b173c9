/**
 * Chain source backed by a plain Bitcoin Core node (no wallet RPCs): blocks, BIP158 filters,
 * mempool, broadcast, fee estimates and health. The node's network is checked against the
 * service's before the first answer is used.
 */
import { isNetworkName, networkFromCoreChain, type NetworkName } from '../../core/network.js';
import { parseBlockForScan, parseBlockHeader, type BlockHeaderFields } from '../../core/block.js';
import { parseTransaction, txid as txidOf, type Block, type Transaction } from '../../core/tx.js';
import {
  ChainError,
  type BlockFilter,
  type BlockHeaderInfo,
  type BlockSource,
  type BlockSummary,
  type ChainLog,
  type ChainSource,
  type ChainTip,
  type FeeEstimate,
  type FeeMode,
  type HealthReport,
  type MempoolEntry,
  type MempoolSource,
  type RelayFees,
} from '../types.js';
import { broadcastOnce } from '../broadcast.js';
import type { ChainFollower } from '../follower.js';
import { BlockFileReader } from './block-files.js';
import { BitcoindFollower } from './follower.js';
import { MempoolCache, type HeldMempoolTx } from './mempool-cache.js';
import { watchBitcoindMempool } from './mempool-watch.js';
import { watchBitcoindTip } from './tip-watch.js';
import { RestBlockReader } from './rest-blocks.js';
import { RpcClient, type CallOptions, type RpcClientOptions } from './rpc-client.js';
import { broadcastError, isFilterUnavailable, isNotFound } from './rpc-errors.js';
import { btcPerKvbToSatPerKvb, btcToSats, checkHashArgument, expectHash, expectHexBytes, expectInteger, expectObject, expectString } from './values.js';

export interface BitcoindChainSourceOptions extends RpcClientOptions {
  /** The service's network; a node on another chain is refused with `wrong_network`. */
  network: NetworkName;
  /** Transactions fetched per JSON-RPC batch when reading the mempool (default 100). */
  mempoolBatchSize?: number;
  /** Deadline of each request of a health check (default: the smaller of timeoutMs and 5 s). */
  healthTimeoutMs?: number;
  /** The clock of the pause in asking for filters a node does not keep (default Date.now). */
  now?: () => number;
  /**
   * The node's `blocks` folder, when the service may read it: while the node keeps no block filters, the blocks
   * a scan reads come from the node's block files (those not found there, from the node).
   */
  blocksFolder?: string | undefined;
  /** Where notices about how blocks are read (block files, REST or JSON-RPC) go. */
  log?: ChainLog | undefined;
}

/** How long summaries leave out filters after a read found none for any of its blocks, before asking again. */
const FILTER_RECHECK_MS = 60_000;

export class BitcoindChainSource implements ChainSource, BlockSource, MempoolSource {
  readonly backend = 'bitcoind';
  readonly network: NetworkName;
  readonly follower: ChainFollower;
  private readonly rpc: RpcClient;
  private readonly mempoolBatchSize: number;
  /** The mempool the follower lists, kept between its reads (one per source, whatever the wallet groups). */
  private readonly mempoolCache: MempoolCache;
  private readonly healthCall: { retries: number; timeoutMs: number };
  private networkVerified = false;
  private pendingNetworkCheck: Promise<void> | undefined;
  /** The network (or unknown chain name) the node reported last. */
  private nodeNetwork: string | undefined;
  private readonly rest: RestBlockReader;
  private readonly blockFiles: BlockFileReader | undefined;
  private readonly now: () => number;
  /** Until when summaries do not ask for filters: the node had none for any block of a read (index off or behind). */
  private filtersPausedUntil = 0;

  constructor(options: BitcoindChainSourceOptions) {
    if (!isNetworkName(options.network)) throw new ChainError('bad_config', `Unknown network ${String(options.network)}`);
    this.network = options.network;
    this.rpc = new RpcClient(options);
    this.rest = new RestBlockReader(this.rpc, options.log);
    this.blockFiles =
      options.blocksFolder === undefined
        ? undefined
        : new BlockFileReader({ folder: options.blocksFolder, network: this.network, heightsOf: (hashes) => this.blockHeights(hashes), log: options.log });
    this.mempoolBatchSize = options.mempoolBatchSize ?? 100;
    this.mempoolCache = new MempoolCache({ call: (method, params) => this.read(method, params), batch: (calls) => this.rpc.batch(calls) }, this.mempoolBatchSize);
    this.now = options.now ?? Date.now;
    // One quick attempt per request: a health check reports the node as it is now.
    this.healthCall = { retries: 0, timeoutMs: options.healthTimeoutMs ?? Math.min(options.timeoutMs ?? 30_000, 5_000) };
    this.follower = new BitcoindFollower(this, {
      watchTip: (onTip) => watchBitcoindTip(options, onTip),
      watchMempool: (onChange) => watchBitcoindMempool(options, onChange),
    });
  }

  async close(): Promise<void> {
    this.rpc.close();
    await this.blockFiles?.close();
  }

  // -- HealthCheck ------------------------------------------------------------------------------

  async checkHealth(): Promise<HealthReport> {
    try {
      const info = expectObject(await this.rpc.call('getblockchaininfo', [], this.healthCall), 'getblockchaininfo');
      this.checkNetwork(info);
      this.networkVerified = true;
      if (info.initialblockdownload === true) {
        const progress = typeof info.verificationprogress === 'number' ? ` (${(info.verificationprogress * 100).toFixed(2)}% verified)` : '';
        throw new ChainError(
          'initial_block_download',
          `Bitcoin Core is in initial block download at block ${String(info.blocks)} of ${String(info.headers)} headers${progress}`,
        );
      }
      const tip = { height: expectInteger(info.blocks, 'height'), hash: expectHash(info.bestblockhash, 'best block hash') };
      const networkInfo = expectObject(await this.rpc.call('getnetworkinfo', [], this.healthCall), 'getnetworkinfo');
      const filters = (await this.fetchFilter(tip.hash, this.healthCall)) !== null;
      return { ok: true, network: this.network, tip, filters, nodeVersion: String(networkInfo.subversion ?? '') };
    } catch (error) {
      if (error instanceof ChainError) {
        return { ok: false, code: error.code, reason: error.message, ...(error.code === 'wrong_network' && this.nodeNetwork ? { nodeNetwork: this.nodeNetwork } : {}) };
      }
      return { ok: false, code: 'rpc_error', reason: 'Unexpected failure while checking Bitcoin Core' };
    }
  }

  // -- BlockSource ------------------------------------------------------------------------------

  async getTip(): Promise<ChainTip> {
    // One call, so height and hash always belong together.
    const info = expectObject(await this.read('getblockchaininfo'), 'getblockchaininfo');
    return { height: expectInteger(info.blocks, 'height'), hash: expectHash(info.bestblockhash, 'best block hash') };
  }

  async getBlockHash(height: number): Promise<string> {
    if (!Number.isSafeInteger(height) || height < 0) throw new ChainError('invalid_argument', 'Block height must be a non-negative integer');
    try {
      return expectHash(await this.read('getblockhash', [height]), 'block hash');
    } catch (error) {
      if (isNotFound(error)) throw new ChainError('not_found', `No block at height ${height} in the active chain`, { rpcCode: error.rpcCode });
      throw error;
    }
  }

  async getBlock(hash: string): Promise<Block> {
    const wanted = checkHashArgument(hash, 'Block hash');
    return parseBlockAnswer(await this.readBlockItem('getblock', [wanted, 0], wanted), wanted);
  }

  async getBlocks(hashes: readonly string[]): Promise<Block[]> {
    const wanted = hashes.map((hash) => checkHashArgument(hash, 'Block hash'));
    if (wanted.length === 0) return [];
    await this.ensureNetwork();
    // With filters a scan reads few blocks, and the node's answers cost little; finding blocks in the files
    // first means reading the files' record headers up to them (on mainnet, one read per block).
    const fromFiles = this.blockFiles && this.now() < this.filtersPausedUntil ? await this.blockFiles.getBlocks(wanted) : [];
    const missing = wanted.filter((_, i) => fromFiles[i] === undefined);
    const fromNode = missing.length === 0 ? [] : await this.blocksFromNode(missing);
    let next = 0;
    return wanted.map((_, i) => fromFiles[i] ?? fromNode[next++]!);
  }

  /** Blocks read from the node: over REST when it serves it, else over JSON-RPC. */
  private async blocksFromNode(hashes: readonly string[]): Promise<Block[]> {
    const overRest = await this.rest.getBlocks(hashes);
    if (overRest) return overRest;
    const answers = await this.rpc.batch(hashes.map((hash) => ({ method: 'getblock', params: [hash, 0] })));
    return answers.map((answer, i) => {
      const hash = hashes[i]!;
      if (!answer.ok) {
        if (isNotFound(answer.error)) throw new ChainError('not_found', `Bitcoin Core does not know block ${hash}`, { rpcCode: answer.error.rpcCode });
        throw answer.error;
      }
      return parseBlockAnswer(answer.result, hash);
    });
  }

  /** The height of each block, stale ones included; undefined for a block the node does not know. */
  async blockHeights(hashes: readonly string[]): Promise<Array<number | undefined>> {
    const answers = await this.rpc.batch(hashes.map((hash) => ({ method: 'getblockheader', params: [checkHashArgument(hash, 'Block hash'), true] })));
    return answers.map((answer) => {
      if (!answer.ok) {
        if (isNotFound(answer.error)) return undefined;
        throw answer.error;
      }
      return expectInteger(expectObject(answer.result, 'getblockheader').height, 'height');
    });
  }

  async getBlockHeader(hash: string): Promise<BlockHeaderInfo> {
    const wanted = checkHashArgument(hash, 'Block hash');
    const h = expectObject(await this.readBlockItem('getblockheader', [wanted, true], wanted), 'getblockheader');
    const confirmations = expectInteger(h.confirmations, 'confirmations');
    return {
      hash: expectHash(h.hash, 'block hash'),
      height: expectInteger(h.height, 'height'),
      time: expectInteger(h.time, 'block time'),
      medianTime: expectInteger(h.mediantime, 'median time'),
      prevHash: h.previousblockhash === undefined ? null : expectHash(h.previousblockhash, 'previous block hash'),
      confirmations,
      inActiveChain: confirmations >= 0,
    };
  }

  async getBlockFilter(hash: string): Promise<BlockFilter | null> {
    const wanted = checkHashArgument(hash, 'Block hash');
    await this.ensureNetwork();
    return this.fetchFilter(wanted);
  }

  async getBlockSummaries(from: number, to: number): Promise<BlockSummary[]> {
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from < 0 || to < from) {
      throw new ChainError('invalid_argument', 'Block heights must be non-negative integers, from <= to');
    }
    await this.ensureNetwork();
    const heights = Array.from({ length: to - from + 1 }, (_, i) => from + i);
    const hashes: string[] = [];
    for (const [i, answer] of (await this.rpc.batch(heights.map((h) => ({ method: 'getblockhash', params: [h] })))).entries()) {
      if (!answer.ok) {
        if (isNotFound(answer.error)) break; // past the tip
        throw answer.error;
      }
      hashes.push(expectHash(answer.result, `block hash at ${heights[i]}`));
    }
    // Headers in binary (the node's JSON form costs it twice the time); the last block's JSON header comes last
    // and tells whether the blocks read are still the active chain's (each summary's parent is the one before).
    const last = hashes.at(-1);
    if (last === undefined) return [];
    const askFilters = this.now() >= this.filtersPausedUntil;
    const perBlock = askFilters ? 2 : 1;
    const answers = await this.rpc.batch([
      ...hashes.flatMap((hash) => [
        { method: 'getblockheader', params: [hash, false] },
        ...(askFilters ? [{ method: 'getblockfilter', params: [hash, 'basic'] }] : []),
      ]),
      { method: 'getblockheader', params: [last, true] },
    ]);
    const summaries: BlockSummary[] = [];
    let filtersFound = 0;
    for (const [i, hash] of hashes.entries()) {
      const header = answers[perBlock * i]!;
      const filter = askFilters ? answers[perBlock * i + 1]! : undefined;
      if (!header.ok) {
        if (isNotFound(header.error)) break;
        throw header.error;
      }
      if (filter && !filter.ok && !isFilterUnavailable(filter.error)) {
        if (isNotFound(filter.error)) break;
        throw filter.error;
      }
      if (filter?.ok) filtersFound++;
      const fields = headerFields(header.result);
      if (fields.hash !== hash) throw new ChainError('bad_response', `Bitcoin Core sent the header of another block for ${hash}`);
      const prevHash = fields.prevHash === NO_BLOCK ? null : fields.prevHash;
      // A block replaced between the two reads (reorg): the summaries stop before it.
      if (i > 0 && prevHash !== hashes[i - 1]) break;
      summaries.push({ height: from + i, hash, prevHash, time: fields.time, filter: filter?.ok ? filterBytes(filter.result) : null });
    }
    // Without filters (index off, or still behind these blocks) the next reads leave them out for a while:
    // asking for each block's filter cost the node and the service one refused call per block.
    if (askFilters && summaries.length > 0 && filtersFound === 0) this.filtersPausedUntil = this.now() + FILTER_RECHECK_MS;
    const lastHeader = answers.at(-1)!;
    const lastLeft = lastHeader.ok ? expectInteger(expectObject(lastHeader.result, 'getblockheader').confirmations, 'confirmations') < 0 : true;
    return summaries.length === hashes.length && !lastLeft ? summaries : this.stillActive(summaries);
  }

  /** The summaries up to the first whose block is no longer the active chain's at its height. */
  private async stillActive(summaries: BlockSummary[]): Promise<BlockSummary[]> {
    const answers = await this.rpc.batch(summaries.map((s) => ({ method: 'getblockhash', params: [s.height] })));
    const kept = answers.findIndex((answer, i) => !answer.ok || answer.result !== summaries[i]!.hash);
    return kept < 0 ? summaries : summaries.slice(0, kept);
  }

  // -- MempoolSource ----------------------------------------------------------------------------

  async getMempoolTxids(): Promise<Array<{ txid: string; time: number }>> {
    return [...(await this.verboseMempool()).entries()].map(([txid, e]) => ({ txid, time: e.time }));
  }

  async getMempool(): Promise<MempoolEntry[]> {
    const entries = [...(await this.verboseMempool()).entries()];
    const out: MempoolEntry[] = [];
    for (let i = 0; i < entries.length; i += this.mempoolBatchSize) {
      const chunk = entries.slice(i, i + this.mempoolBatchSize);
      const answers = await this.rpc.batch(chunk.map(([txid]) => ({ method: 'getrawtransaction', params: [txid, false] })));
      answers.forEach((answer, j) => {
        const [txid, entry] = chunk[j]!;
        if (!answer.ok) {
          // Mined, replaced or evicted since getrawmempool: not in the mempool any more.
          if (isNotFound(answer.error)) return;
          throw answer.error;
        }
        out.push({ txid, ...entry, ...this.parseMempoolTx(txid, answer.result) });
      });
    }
    return out;
  }

  /**
   * The mempool's transactions as the follower lists them: only those the node did not list at the last call
   * are fetched (getMempool reads every one, with its fee and size, each time).
   */
  mempoolTransactions(): Promise<HeldMempoolTx[]> {
    return this.mempoolCache.read();
  }

  async getMempoolEntry(txid: string): Promise<MempoolEntry | null> {
    const wanted = checkHashArgument(txid, 'Txid');
    try {
      const entry = parseVerboseEntry(await this.read('getmempoolentry', [wanted]), wanted);
      const hex = await this.read('getrawtransaction', [wanted, false]);
      return { txid: wanted, ...entry, ...this.parseMempoolTx(wanted, hex) };
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  // -- Broadcaster ------------------------------------------------------------------------------

  async broadcast(txHex: string): Promise<string> {
    if (typeof txHex !== 'string' || txHex.length === 0) throw new ChainError('invalid_argument', 'Transaction hex is required');
    await this.ensureNetwork();
    return broadcastOnce(txHex, {
      send: async (hex) => expectHash(await this.rpc.call('sendrawtransaction', [hex], { idempotent: false }), 'txid'),
      refusal: (error) => (error.rpcCode !== undefined ? broadcastError(error) : undefined),
      knows: (txid) => this.isInMempool(txid),
    });
  }

  // -- FeeEstimator -----------------------------------------------------------------------------

  async estimateFee(targetBlocks: number, mode?: FeeMode): Promise<FeeEstimate | null> {
    if (!Number.isSafeInteger(targetBlocks) || targetBlocks < 1 || targetBlocks > 1008) {
      throw new ChainError('invalid_argument', 'Confirmation target must be an integer from 1 to 1008');
    }
    if (mode !== undefined && mode !== 'economical' && mode !== 'conservative') {
      throw new ChainError('invalid_argument', 'Fee estimate mode must be economical or conservative');
    }
    const answer = expectObject(await this.read('estimatesmartfee', mode ? [targetBlocks, mode] : [targetBlocks]), 'estimatesmartfee');
    // Without enough data the node answers `errors` and no `feerate`: no estimate, not a failure.
    if (answer.feerate === undefined) return null;
    const satPerKvb = btcPerKvbToSatPerKvb(answer.feerate, 'fee rate');
    return { satPerKvb, satPerVb: satPerKvb / 1000, blocks: expectInteger(answer.blocks, 'estimate target') };
  }

  async getRelayFees(): Promise<RelayFees> {
    const mempool = expectObject(await this.read('getmempoolinfo'), 'getmempoolinfo');
    let incremental = mempool.incrementalrelayfee;
    if (incremental === undefined) {
      // Nodes before v25 report it only in getnetworkinfo.
      incremental = expectObject(await this.read('getnetworkinfo'), 'getnetworkinfo').incrementalfee;
    }
    const perVb = (v: unknown, what: string) => btcPerKvbToSatPerKvb(v, what) / 1000;
    return {
      minRelaySatPerVb: perVb(mempool.minrelaytxfee, 'minimum relay fee'),
      incrementalSatPerVb: perVb(incremental, 'incremental relay fee'),
      mempoolMinSatPerVb: perVb(mempool.mempoolminfee, 'mempool minimum fee'),
    };
  }

  // -- internals --------------------------------------------------------------------------------

  /** An idempotent read, after the node's network has been confirmed. */
  private async read(method: string, params: unknown[] = []): Promise<unknown> {
    await this.ensureNetwork();
    return this.rpc.call(method, params);
  }

  /** A read about one block, with -5 (unknown hash) mapped to `not_found`. */
  private async readBlockItem(method: string, params: unknown[], hash: string): Promise<unknown> {
    try {
      return await this.read(method, params);
    } catch (error) {
      if (isNotFound(error)) throw new ChainError('not_found', `Bitcoin Core does not know block ${hash}`, { rpcCode: error.rpcCode });
      throw error;
    }
  }

  private async fetchFilter(hash: string, callOptions: CallOptions = {}): Promise<BlockFilter | null> {
    try {
      const answer = await this.rpc.call('getblockfilter', [hash, 'basic'], callOptions);
      return { filter: filterBytes(answer), header: expectHash(expectObject(answer, 'getblockfilter').header, 'filter header') };
    } catch (error) {
      if (isFilterUnavailable(error)) return null;
      if (isNotFound(error)) throw new ChainError('not_found', `Bitcoin Core does not know block ${hash}`, { rpcCode: error.rpcCode });
      throw error;
    }
  }

  private async verboseMempool(): Promise<Map<string, { time: number; feeSat: bigint; vsize: number }>> {
    const answer = expectObject(await this.read('getrawmempool', [true]), 'getrawmempool');
    const out = new Map<string, { time: number; feeSat: bigint; vsize: number }>();
    for (const [txid, entry] of Object.entries(answer)) out.set(expectHash(txid, 'txid'), parseVerboseEntry(entry, txid));
    return out;
  }

  private parseMempoolTx(txid: string, hex: unknown): { tx: Transaction; hex: string } {
    const text = expectString(hex, 'raw transaction');
    let tx: Transaction;
    try {
      tx = parseTransaction(text);
    } catch {
      throw new ChainError('bad_response', `Bitcoin Core sent a transaction ${txid} that does not parse`);
    }
    if (txidOf(tx) !== txid) throw new ChainError('bad_response', `Bitcoin Core sent another transaction when asked for ${txid}`);
    return { tx, hex: text };
  }

  private async isInMempool(txid: string): Promise<boolean> {
    try {
      await this.rpc.call('getmempoolentry', [txid]);
      return true;
    } catch {
      return false;
    }
  }

  async verifyNetwork(): Promise<void> {
    this.networkVerified = false;
    await this.ensureNetwork();
  }

  private checkNetwork(info: Record<string, unknown>): void {
    const chain = expectString(info.chain, 'chain name');
    const nodeNetwork = networkFromCoreChain(chain);
    this.nodeNetwork = nodeNetwork?.name ?? chain;
    if (nodeNetwork?.name !== this.network) {
      // Every read checks again until the node is back on the service's network.
      this.networkVerified = false;
      throw new ChainError(
        'wrong_network',
        `Bitcoin Core follows ${nodeNetwork?.name ?? `an unknown chain "${chain}"`} but the service is configured for ${this.network}`,
      );
    }
  }

  private ensureNetwork(): Promise<void> {
    if (this.networkVerified) return Promise.resolve();
    this.pendingNetworkCheck ??= this.rpc
      .call('getblockchaininfo')
      .then((info) => {
        this.checkNetwork(expectObject(info, 'getblockchaininfo'));
        this.networkVerified = true;
      })
      .finally(() => {
        this.pendingNetworkCheck = undefined;
      });
    return this.pendingNetworkCheck;
  }
}

/** A `getblock <hash> 0` answer parsed, checked to be the block asked for. */
function parseBlockAnswer(answer: unknown, wanted: string): Block {
  const bytes = expectHexBytes(answer, 'block');
  let block: Block;
  try {
    block = parseBlockForScan(bytes);
  } catch {
    throw new ChainError('bad_response', `Bitcoin Core sent a block ${wanted} that does not parse`);
  }
  if (block.hash !== wanted) throw new ChainError('bad_response', `Bitcoin Core sent block ${block.hash} when asked for ${wanted}`);
  return block;
}

/** The previous-block hash of the genesis block's header. */
const NO_BLOCK = '0'.repeat(64);

/** A `getblockheader <hash> false` answer parsed. */
function headerFields(answer: unknown): BlockHeaderFields {
  const bytes = expectHexBytes(answer, 'block header');
  try {
    return parseBlockHeader(bytes);
  } catch {
    throw new ChainError('bad_response', 'Bitcoin Core sent a block header that does not parse');
  }
}

/** The serialised filter of a `getblockfilter` answer. */
function filterBytes(answer: unknown): Uint8Array {
  return expectHexBytes(expectObject(answer, 'getblockfilter').filter, 'block filter');
}

function parseVerboseEntry(value: unknown, txid: string): { time: number; feeSat: bigint; vsize: number } {
  const entry = expectObject(value, `mempool entry ${txid}`);
  const fees = expectObject(entry.fees, `mempool entry ${txid} fees`);
  return {
    time: expectInteger(entry.time, 'mempool entry time'),
    feeSat: btcToSats(fees.base, `mempool entry ${txid} fee`),
    vsize: expectInteger(entry.vsize, 'mempool entry vsize'),
  };
}
