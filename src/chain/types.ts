/**
 * What the service needs from a chain backend, as small capability interfaces. A backend
 * implements the ones it can; the sync service depends only on these. Plain data in and out:
 * block hashes and txids are display (byte-reversed) hex, amounts are integer satoshis.
 */
import { CoreError } from '../core/errors.js';
import type { NetworkName } from '../core/network.js';
import type { Block, Transaction } from '../core/tx.js';
import type { ChainFollower } from './follower.js';

/** Stable reasons a chain call fails; the API layer maps them to statuses and messages. */
export type ChainErrorCode =
  /** The node refused the credentials (HTTP 401/403). */
  | 'unauthorized'
  /** Nothing listens at the configured address. */
  | 'connection_refused'
  /** No answer within the configured time. */
  | 'timeout'
  /** Any other transport failure (DNS, reset connection, TLS). */
  | 'unreachable'
  /** The node is starting up (RPC error -28). */
  | 'warming_up'
  /** The node is still in initial block download. */
  | 'initial_block_download'
  /** The node follows another network than the service. */
  | 'wrong_network'
  /** The cookie file is missing or unreadable, or the configuration is incomplete. */
  | 'bad_config'
  /** The caller passed a malformed argument (height, hash, confirmation target). */
  | 'invalid_argument'
  /** Unknown block height, block hash or transaction. */
  | 'not_found'
  /** The node answered something that is not what the protocol promises. */
  | 'bad_response'
  /** Broadcast: the hex is not a transaction (RPC -22). */
  | 'tx_decode_failed'
  /** Broadcast: inputs missing or already spent (RPC -25 bad-txns-inputs-missingorspent). */
  | 'tx_missing_inputs'
  /** Broadcast: refused by the node's mempool policy or consensus rules (RPC -26), e.g. fee too low. */
  | 'tx_rejected'
  /** Broadcast: the transaction is already confirmed (RPC -27). */
  | 'tx_already_confirmed'
  /** Broadcast: another transaction error (RPC -25), e.g. fee above the node's maximum. */
  | 'tx_failed'
  /** Broadcast: the request may have reached the node but no answer came back. */
  | 'broadcast_unknown'
  /** An Electrum server refuses to serve a watched script's history: too large for its limits. */
  | 'history_too_large'
  /** Any other error the node reported. */
  | 'rpc_error';

/** A failed chain call. `message` is safe to show (no credentials); `rpcCode` is the node's own code. */
export class ChainError extends CoreError {
  override readonly code: ChainErrorCode;
  /** The node's JSON-RPC error code, when the node answered with one. */
  readonly rpcCode: number | undefined;
  /** For broadcasts: the node's rejection reason text (e.g. "min relay fee not met"). */
  readonly reason: string | undefined;
  /** True when repeating the same idempotent request later may succeed. */
  readonly retryable: boolean;
  /** What the operator's log may name but an API answer must not (a file path). */
  readonly logContext: Record<string, string> | undefined;

  constructor(
    code: ChainErrorCode,
    message: string,
    details: { rpcCode?: number; reason?: string; retryable?: boolean; logContext?: Record<string, string> } = {},
  ) {
    super(code, message);
    this.code = code;
    this.rpcCode = details.rpcCode;
    this.reason = details.reason;
    this.retryable = details.retryable ?? false;
    this.logContext = details.logContext;
  }
}

export interface ChainTip {
  height: number;
  hash: string;
}

export interface BlockHeaderInfo {
  hash: string;
  height: number;
  /** Block timestamp (seconds). */
  time: number;
  /** Median time past (seconds). */
  medianTime: number;
  /** Null only for the genesis block. */
  prevHash: string | null;
  /** Confirmations as the node counts them: -1 for a block that is not in the active chain. */
  confirmations: number;
  /** False for a stale block (reorged out). */
  inActiveChain: boolean;
}

export interface BlockFilter {
  /** BIP158 basic filter, serialised (CompactSize N, then the Golomb-Rice bits). */
  filter: Uint8Array;
  /** BIP157 filter header, display hex. */
  header: string;
}

/** What a scan needs of a block before deciding to fetch it: its place in the chain and its filter. */
export interface BlockSummary {
  height: number;
  hash: string;
  /** Null only for the genesis block. */
  prevHash: string | null;
  /** Block timestamp (seconds). */
  time: number;
  /** BIP158 basic filter, serialised; null when the backend has none for this block (fetch the block). */
  filter: Uint8Array | null;
}

/** The active chain's headers: what every backend answers (a wallet birthday given as a date reads them). */
export interface HeaderSource {
  getTip(): Promise<ChainTip>;
  /** Hash of the active-chain block at `height`; ChainError `not_found` above the tip. */
  getBlockHash(height: number): Promise<string>;
  /** ChainError `not_found` for an unknown hash (an Electrum server knows only the headers it was asked for by height). */
  getBlockHeader(hash: string): Promise<BlockHeaderInfo>;
}

/** Blocks of the active chain, and their BIP158 filters when the backend has them (Bitcoin Core's follower reads them). */
export interface BlockSource extends HeaderSource {
  /** The full block (parsed); ChainError `not_found` for an unknown hash. */
  getBlock(hash: string): Promise<Block>;
  /** Several full blocks in one round trip, in the order asked; fails as getBlock for the first bad one. */
  getBlocks(hashes: readonly string[]): Promise<Block[]>;
  /** The block's basic filter, or null when the backend keeps no filters (then fetch the block). */
  getBlockFilter(hash: string): Promise<BlockFilter | null>;
  /**
   * Summaries of the active chain's blocks at heights `from`..`to`, in height order, read together (few round
   * trips). Shorter when the chain ends before `to` or changed during the read (each summary's prevHash is the
   * hash before it): the caller continues from the last one it got.
   */
  getBlockSummaries(from: number, to: number): Promise<BlockSummary[]>;
}

export interface MempoolEntry {
  txid: string;
  /** When the node first saw it (seconds). */
  time: number;
  /** Fee paid, integer satoshis. */
  feeSat: bigint;
  vsize: number;
  tx: Transaction;
  /** Raw transaction hex, as the node returned it. */
  hex: string;
}

export interface MempoolSource {
  /** Txids in the mempool with their entry time (seconds). */
  getMempoolTxids(): Promise<Array<{ txid: string; time: number }>>;
  /**
   * The whole mempool with transactions. A transaction that leaves the mempool while it is being
   * read (mined, replaced, evicted) is left out rather than failing the call.
   */
  getMempool(): Promise<MempoolEntry[]>;
  /** One mempool transaction, or null when it is not (or no longer) in the mempool. */
  getMempoolEntry(txid: string): Promise<MempoolEntry | null>;
}

export interface Broadcaster {
  /**
   * Submits a signed transaction (hex) and returns its txid. A refusal throws ChainError with a
   * `tx_*` code and the node's `reason`; a lost answer throws `broadcast_unknown`, never success.
   */
  broadcast(txHex: string): Promise<string>;
}

export interface FeeEstimate {
  /** Estimated fee rate in sat/vB (may be fractional). */
  satPerVb: number;
  /** The same rate in integer satoshis per 1000 vbytes, as the node reports it. */
  satPerKvb: number;
  /** The confirmation target the estimate is actually for. */
  blocks: number;
}

export interface RelayFees {
  /** The node's minimum relay fee rate (minrelaytxfee), sat/vB. */
  minRelaySatPerVb: number;
  /** Minimum fee rate increase for a replacement (incrementalrelayfee), sat/vB. */
  incrementalSatPerVb: number;
  /** Current mempool minimum (rises above minRelay when the mempool is full), sat/vB. */
  mempoolMinSatPerVb: number;
}

export type FeeMode = 'economical' | 'conservative';

export interface FeeEstimator {
  /** Fee rate to confirm within `targetBlocks` (1..1008), or null when the node has no estimate yet. */
  estimateFee(targetBlocks: number, mode?: FeeMode): Promise<FeeEstimate | null>;
  getRelayFees(): Promise<RelayFees>;
}

export type HealthReport =
  | {
      ok: true;
      network: NetworkName;
      tip: ChainTip;
      /** Whether BIP158 basic filters are available. */
      filters: boolean;
      /** The node's version text, e.g. "/Satoshi:31.0.0/". */
      nodeVersion: string;
    }
  | {
      ok: false;
      code: ChainErrorCode;
      /** Why, in words an operator can act on (never the node's address: it may be shown to users). */
      reason: string;
      /** With `wrong_network`: the network the node follows (or its chain name when unknown). */
      nodeNetwork?: string;
    };

export interface HealthCheck {
  /** Never throws: a node that is down, starting, syncing or misconfigured gives `ok: false`. */
  checkHealth(): Promise<HealthReport>;
}

/**
 * What the services use of a chain backend: headers, broadcast, fee estimates, health, and the follower that the
 * sync follows the chain with. Full blocks, filters and the whole mempool stay inside the backends that have them
 * (Bitcoin Core's source is also a BlockSource and a MempoolSource; an Electrum server has neither).
 */
export interface ChainSource extends HeaderSource, Broadcaster, FeeEstimator, HealthCheck {
  /** Backend name for service details, e.g. `bitcoind`. */
  readonly backend: string;
  readonly network: NetworkName;
  /** Follows the chain for groups of wallets: what the sync applies comes from it alone. */
  readonly follower: ChainFollower;
  /**
   * Asks the node again which chain it follows (it may have been restarted on another one); throws
   * ChainError `wrong_network` when it is not `network`, and reads fail the same way from then on.
   */
  verifyNetwork?(): Promise<void>;
  /** Releases connections; the source is unusable afterwards. */
  close(): Promise<void>;
}

export type ChainLog = (level: 'info' | 'warn', message: string, details?: Record<string, unknown>) => void;
