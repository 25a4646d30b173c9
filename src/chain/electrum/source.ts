/**
 * Chain source backed by an Electrum server (Fulcrum, ElectrumX, electrs): the follower (follower.ts), the
 * headers a wallet birthday reads, broadcast, fee estimates and health. The server's genesis block is checked
 * against the service's network at each new connection, before any answer is used.
 */
import type { NetworkName } from '../../core/network.js';
import { isNetworkName } from '../../core/network.js';
import { broadcastOnce } from '../broadcast.js';
import { ChainError, type BlockHeaderInfo, type ChainLog, type ChainSource, type ChainTip, type FeeEstimate, type FeeMode, type HealthReport, type RelayFees } from '../types.js';
import type { ElectrumCalls } from './calls.js';
import { broadcastRefusal } from './errors.js';
import { ElectrumFollower } from './follower.js';
import { GENESIS_HASHES, type Header } from './headers.js';

/** Off regtest, a tip older than this means the server (or its node) is still catching up. */
const STALE_TIP_SECONDS = 24 * 3600;
const MAX_MONEY_BTC = 21_000_000;
const TXID = /^[0-9a-f]{64}$/;

export interface ElectrumChainSourceOptions {
  network: NetworkName;
  log?: ChainLog | undefined;
  /** The clock of the health check's stale-tip rule (default Date.now). */
  now?: () => number;
  /** The server is on this machine, reached without a proxy. */
  serverOnLoopback?: boolean;
}

export class ElectrumChainSource implements ChainSource {
  readonly backend = 'electrum';
  readonly network: NetworkName;
  readonly follower: ElectrumFollower;
  private verified = false;
  private pendingCheck: Promise<void> | undefined;
  /** The network the server follows, when it is another one (for the health report). */
  private serverNetwork: string | undefined;
  private readonly now: () => number;

  constructor(
    private readonly client: ElectrumCalls & { close(): Promise<void> },
    options: ElectrumChainSourceOptions,
  ) {
    if (!isNetworkName(options.network)) throw new ChainError('bad_config', `Unknown network ${String(options.network)}`);
    this.network = options.network;
    this.now = options.now ?? Date.now;
    client.onReconnect(() => {
      this.verified = false; // another connection may reach another server
    });
    this.follower = new ElectrumFollower({
      client,
      network: this.network,
      ensureNetwork: () => this.ensureNetwork(),
      verifyNetwork: () => this.verifyNetwork(),
      log: options.log,
      serverOnLoopback: options.serverOnLoopback ?? false,
    });
  }

  async close(): Promise<void> {
    await this.client.close();
  }

  async verifyNetwork(): Promise<void> {
    this.verified = false;
    await this.ensureNetwork();
  }

  // -- HealthCheck ------------------------------------------------------------------------------

  async checkHealth(): Promise<HealthReport> {
    try {
      const info = await this.client.connect();
      this.checkGenesis(info.genesisHash);
      this.verified = true;
      const tip = await this.follower.tip();
      const header = this.follower.headers.tip!;
      const age = Math.floor(this.now() / 1000) - header.time;
      if (this.network !== 'regtest' && age > STALE_TIP_SECONDS) {
        throw new ChainError(
          'initial_block_download',
          `The Electrum server's tip (block ${tip.height}) is ${Math.floor(age / 3600)} hours old: the server or its node is still catching up`,
        );
      }
      return { ok: true, network: this.network, tip, filters: false, nodeVersion: info.software };
    } catch (error) {
      if (error instanceof ChainError) {
        return { ok: false, code: error.code, reason: error.message, ...(error.code === 'wrong_network' && this.serverNetwork ? { nodeNetwork: this.serverNetwork } : {}) };
      }
      return { ok: false, code: 'rpc_error', reason: 'Unexpected failure while checking the Electrum server' };
    }
  }

  // -- Headers (what a wallet birthday reads) ---------------------------------------------------

  getTip(): Promise<ChainTip> {
    return this.follower.tip();
  }

  async getBlockHash(height: number): Promise<string> {
    if (!Number.isSafeInteger(height) || height < 0) throw new ChainError('invalid_argument', 'Block height must be a non-negative integer');
    await this.ensureNetwork();
    const hash = await this.follower.activeHashAt(height);
    if (hash === null) throw new ChainError('not_found', `No block at height ${height} in the active chain`);
    return hash;
  }

  /**
   * A block's header, for a block whose header was read lately (an Electrum server finds headers by height only):
   * a hash from getBlockHash, the tip, or a followed block. Others are `not_found`.
   */
  async getBlockHeader(hash: string): Promise<BlockHeaderInfo> {
    if (typeof hash !== 'string' || !TXID.test(hash)) throw new ChainError('invalid_argument', 'Block hash must be 64 lower-case hex digits');
    await this.ensureNetwork();
    const header = this.follower.headerOf(hash);
    if (!header) throw new ChainError('not_found', `The Electrum source has not read block ${hash} lately`);
    const start = Math.max(0, header.height - 10);
    const [tip, recent] = await Promise.all([this.follower.tip(), this.follower.readHeaders(start, header.height - start + 1)]);
    const inActiveChain = recent.at(-1)?.hash === hash;
    const times = recent.map((h: Header) => h.time).sort((a, b) => a - b);
    return {
      hash,
      height: header.height,
      time: header.time,
      medianTime: inActiveChain ? times[Math.floor(times.length / 2)]! : header.time,
      prevHash: header.height === 0 ? null : header.prevHash,
      confirmations: inActiveChain ? tip.height - header.height + 1 : -1,
      inActiveChain,
    };
  }

  // -- Broadcaster ------------------------------------------------------------------------------

  async broadcast(txHex: string): Promise<string> {
    if (typeof txHex !== 'string' || txHex.length === 0) throw new ChainError('invalid_argument', 'Transaction hex is required');
    await this.ensureNetwork();
    return broadcastOnce(txHex, {
      send: async (hex) => {
        const answer = await this.client.request('blockchain.transaction.broadcast', [hex]);
        if (typeof answer !== 'string' || !TXID.test(answer)) throw new ChainError('bad_response', 'The Electrum server sent an unexpected answer to a broadcast');
        return answer;
      },
      refusal: (error) => (error.code === 'rpc_error' ? broadcastRefusal(error) : undefined),
      knows: (txid) => this.knows(txid),
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
    await this.ensureNetwork();
    // The protocol takes no mode: the server asks its node with the node's default.
    const answer = await this.client.request('blockchain.estimatefee', [targetBlocks]);
    if (answer === -1) return null; // the node has no estimate yet
    const satPerKvb = btcPerKvbToSatPerKvb(answer, 'fee estimate');
    return { satPerKvb, satPerVb: satPerKvb / 1000, blocks: targetBlocks };
  }

  async getRelayFees(): Promise<RelayFees> {
    await this.ensureNetwork();
    const relay = btcPerKvbToSatPerKvb(await this.client.request('blockchain.relayfee', []), 'relay fee') / 1000;
    let info: Record<string, unknown> | undefined;
    try {
      // Protocol 1.6: the node's mempool minimum and incremental fee, as getmempoolinfo reports them.
      info = (await this.client.request('mempool.get_info', [])) as Record<string, unknown>;
    } catch (error) {
      if (!(error instanceof ChainError) || error.code !== 'rpc_error') throw error;
    }
    const perVb = (value: unknown, what: string) => (value === undefined ? relay : btcPerKvbToSatPerKvb(value, what) / 1000);
    return {
      minRelaySatPerVb: relay,
      // Without mempool.get_info: Bitcoin Core's incremental fee has always been its default relay fee.
      incrementalSatPerVb: perVb(info?.incrementalrelayfee, 'incremental relay fee'),
      mempoolMinSatPerVb: perVb(info?.mempoolminfee, 'mempool minimum fee'),
    };
  }

  // -- internals --------------------------------------------------------------------------------

  /** Whether the server knows the transaction (after a broadcast whose answer was lost). */
  private async knows(txid: string): Promise<boolean> {
    try {
      await this.client.request('blockchain.transaction.get', [txid, false]);
      return true;
    } catch {
      return false;
    }
  }

  private ensureNetwork(): Promise<void> {
    if (this.verified) return Promise.resolve();
    this.pendingCheck ??= this.client
      .connect()
      .then((info) => {
        this.checkGenesis(info.genesisHash);
        this.verified = true;
      })
      .finally(() => {
        this.pendingCheck = undefined;
      });
    return this.pendingCheck;
  }

  private checkGenesis(genesisHash: string): void {
    if (genesisHash === GENESIS_HASHES[this.network]) return;
    const known = (Object.keys(GENESIS_HASHES) as NetworkName[]).filter((n) => GENESIS_HASHES[n] === genesisHash);
    // testnet and testnet4 have different genesis blocks; no two networks share one.
    this.serverNetwork = known[0] ?? `an unknown chain (genesis ${genesisHash})`;
    this.verified = false;
    throw new ChainError('wrong_network', `The Electrum server follows ${this.serverNetwork} but the service is configured for ${this.network}`);
  }
}

/** A BTC/kvB amount as the protocol sends it, in integer sat/kvB (exact: rounded to the satoshi). */
function btcPerKvbToSatPerKvb(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_MONEY_BTC) {
    throw new ChainError('bad_response', `The Electrum server sent an invalid ${what}`);
  }
  return Math.round(value * 1e8);
}
