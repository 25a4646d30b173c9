/**
 * A client of one Electrum server (protocol 1.4 to 1.6): negotiates with `server.version` then `server.features`,
 * sends single calls and paged JSON-RPC batches, hands server notifications on, pings when idle, and after a
 * lost connection reconnects by itself with backoff (0.5 s doubling to 30 s) until closed, then tells the
 * `onReconnect` listeners (a new connection has no subscriptions).
 *
 * Failures are ChainErrors: connection_refused, timeout, unreachable (lost connection, TLS or proxy failure),
 * bad_response (not JSON-RPC, too long, protocol older than 1.4), rpc_error (the server's own error).
 */
import { readVersion } from '../../version.js';
import { ChainError, type ChainLog } from '../types.js';
import { BATCH_MAX_CALLS, BatchPager } from './batch-pages.js';
import { BatchRefused, RpcConnection, type BatchAnswer, type CallOutcome, type RpcCall } from './json-rpc.js';
import { asChainError, openTransport, parseFingerprint, parseProxyUrl, parseServerUrl, type Endpoint } from './transport.js';

export interface ElectrumClientOptions {
  /** tcp://host:port or ssl://host:port */
  url: string;
  /** SHA-256 of the server certificate (hex, colons allowed): pinned instead of the system CAs. */
  tlsFingerprint?: string;
  /** socks5://host:port (Tor); host names are resolved by the proxy. */
  proxy?: string;
  /** Deadline per request, and for opening a connection (default 30 s). */
  timeoutMs?: number;
  /** Idle time after which the client pings the server (default 60 s). */
  keepAliveMs?: number;
  log?: ChainLog;
}

export interface ServerInfo {
  /** The server's software and version, e.g. "Fulcrum 2.1.1". */
  software: string;
  /** The protocol version agreed, e.g. "1.4". */
  protocol: string;
  /** The server's genesis block hash (display hex). */
  genesisHash: string;
}

export type { CallOutcome } from './json-rpc.js';

export interface BatchOptions {
  /** At most this many calls per page (default and ceiling 300). Pages also shrink by themselves for large answers. */
  maxCallsPerPage?: number;
}

const PROTOCOL_MIN = '1.4';
const PROTOCOL_MAX = '1.6';
const DEFAULT_TIMEOUT_MS = 30_000;
/** Longest accepted line: a block's worth of headers or a large transaction fits many times over. */
const MAX_LINE_BYTES = 64 * 1024 * 1024;
/** Pages sent before the first answers come back: keeps the pipe busy without queueing megabytes at the server. */
const PAGES_IN_FLIGHT = 2;
const DEFAULT_KEEP_ALIVE_MS = 60_000;
const BACKOFF_FIRST_MS = 500;
const BACKOFF_MAX_MS = 30_000;

let clientName: string | undefined;

export class ElectrumClient {
  private readonly endpoint: Endpoint;
  private readonly fingerprint: string | undefined;
  private readonly proxy: { host: string; port: number } | undefined;
  private readonly timeoutMs: number;
  private readonly keepAliveMs: number;
  private readonly log: ChainLog | undefined;
  private readonly notificationListeners = new Set<(method: string, params: unknown[]) => void>();
  private readonly reconnectListeners = new Set<() => void>();
  private readonly abort = new AbortController();
  /** The negotiated connection, while it lasts. */
  private connection: RpcConnection | undefined;
  /** The connection being opened and negotiated. */
  private opening: { holder: { connection?: RpcConnection }; done: Promise<ServerInfo> } | undefined;
  private info: ServerInfo | undefined;
  private attempted = false;
  /** Failed attempts since the last success: sets the backoff. */
  private failures = 0;
  private lastError: ChainError | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private keepAliveTimer: NodeJS.Timeout | undefined;
  /** The server answered a batch array with one error: this connection sends single calls instead. */
  private batchesRefused = false;
  private readonly pager = new BatchPager();
  private closed = false;

  constructor(options: ElectrumClientOptions) {
    this.endpoint = parseServerUrl(options.url);
    this.fingerprint = options.tlsFingerprint ? parseFingerprint(options.tlsFingerprint) : undefined;
    if (this.fingerprint && !this.endpoint.tls) {
      throw new ChainError('bad_config', 'A TLS fingerprint needs an ssl:// Electrum server url');
    }
    this.proxy = options.proxy ? parseProxyUrl(options.proxy) : undefined;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.keepAliveMs = options.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS;
    this.log = options.log;
  }

  /** Whether the server is on this machine, reached without a proxy. */
  get onLoopback(): boolean {
    const host = this.endpoint.host.replace(/^\[|\]$/g, '');
    return this.proxy === undefined && (host === 'localhost' || host === '::1' || /^127\./.test(host));
  }

  get connected(): boolean {
    return this.connection !== undefined && !this.connection.closed;
  }

  /** What the server said about itself at the last negotiation. */
  get serverInfo(): ServerInfo | undefined {
    return this.info;
  }

  /**
   * Connects (again) and negotiates; resolves at once when connected. After a failure the client keeps trying
   * in the background with backoff (and tells the `onReconnect` listeners when it gets through).
   */
  connect(): Promise<ServerInfo> {
    if (this.closed) return Promise.reject(closedError());
    if (this.connected && this.info) return Promise.resolve(this.info);
    if (this.reconnectTimer) {
      clearTimeout(this.reconnectTimer);
      this.reconnectTimer = undefined;
    }
    return this.attempt();
  }

  async request<T = unknown>(method: string, params: unknown[]): Promise<T> {
    const connection = await this.session();
    return (await connection.request(method, params, this.timeoutMs)) as T;
  }

  /**
   * Many calls, sent as JSON-RPC batches paged within the server's limits; results in order; a call's own error
   * rejects. `maxCallsPerPage` lowers the page size for calls with large answers (a page's answer is one line).
   */
  async batch<T = unknown>(calls: ReadonlyArray<{ method: string; params: unknown[] }>, options: BatchOptions = {}): Promise<T[]> {
    const outcomes = await this.batchSettled<T>(calls, options);
    return outcomes.map((outcome) => {
      if (!outcome.ok) throw outcome.error;
      return outcome.result;
    });
  }

  /**
   * Like `batch`, but a call the server answered with an error gives that call's outcome instead of failing
   * the rest (e.g. unknown transactions). A lost connection, timeout or bad answer still rejects the whole.
   */
  async batchSettled<T = unknown>(calls: ReadonlyArray<{ method: string; params: unknown[] }>, options: BatchOptions = {}): Promise<Array<CallOutcome<T>>> {
    const maxCalls = Math.max(1, Math.min(Math.floor(options.maxCallsPerPage ?? BATCH_MAX_CALLS), BATCH_MAX_CALLS));
    const results: CallOutcome[] = new Array<CallOutcome>(calls.length);
    let next = 0;
    let failure: ChainError | undefined;
    const worker = async () => {
      while (next < calls.length && !failure) {
        // Each page is cut when it is sent, so it follows the answer sizes seen so far.
        const start = next;
        next = this.pager.pageEnd(calls, start, maxCalls);
        const page = calls.slice(start, next).map(({ method, params }) => ({ method, params }));
        try {
          const { outcomes, answerBytes } = await this.sendPage(page);
          const broken = outcomes.find((outcome) => !outcome.ok && outcome.error.code !== 'rpc_error');
          if (broken && !broken.ok) throw broken.error;
          this.pager.learn(page, answerBytes);
          for (let i = 0; i < outcomes.length; i++) results[start + i] = outcomes[i]!;
        } catch (error) {
          failure ??= asChainError(error);
        }
      }
    };
    await Promise.all(Array.from({ length: PAGES_IN_FLIGHT }, worker));
    if (failure) throw failure;
    return results as Array<CallOutcome<T>>;
  }

  onNotification(listener: (method: string, params: unknown[]) => void): () => void {
    this.notificationListeners.add(listener);
    return () => this.notificationListeners.delete(listener);
  }

  onReconnect(listener: () => void): () => void {
    this.reconnectListeners.add(listener);
    return () => this.reconnectListeners.delete(listener);
  }

  /** Ends the connection and every timer; pending calls fail with `unreachable`. The client is unusable afterwards. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    clearTimeout(this.keepAliveTimer);
    this.reconnectTimer = this.keepAliveTimer = undefined;
    this.abort.abort();
    const opening = this.opening;
    opening?.holder.connection?.close(closedError());
    this.connection?.close(closedError());
    this.connection = undefined;
    await opening?.done.catch(() => undefined);
  }

  private async session(): Promise<RpcConnection> {
    for (let tries = 0; tries < 2; tries++) {
      if (this.closed) throw closedError();
      if (this.connection && !this.connection.closed) return this.connection;
      // Waiting out a backoff: fail now with why the last attempt failed rather than hold the caller.
      if (this.reconnectTimer && this.lastError) throw copyError(this.lastError);
      await this.attempt();
    }
    throw copyError(this.lastError ?? new ChainError('unreachable', 'The connection to the Electrum server was lost', { retryable: true }));
  }

  private attempt(): Promise<ServerInfo> {
    if (!this.opening) {
      const holder: { connection?: RpcConnection } = {};
      const done = this.open(holder).finally(() => {
        if (this.opening?.done === done) this.opening = undefined;
      });
      this.opening = { holder, done };
    }
    return this.opening.done;
  }

  private async open(opening: { connection?: RpcConnection }): Promise<ServerInfo> {
    const first = !this.attempted;
    this.attempted = true;
    try {
      const socket = await openTransport({
        endpoint: this.endpoint,
        fingerprint: this.fingerprint,
        proxy: this.proxy,
        timeoutMs: this.timeoutMs,
        signal: this.abort.signal,
      });
      if (this.closed) {
        socket.destroy();
        throw closedError();
      }
      const connection = new RpcConnection(socket, {
        maxLineBytes: MAX_LINE_BYTES,
        onNotification: (method, params) => this.notify(method, params),
        onClose: (error) => this.lost(connection, error),
        onStray: (message) => this.log?.('warn', 'The Electrum server sent an error not tied to a request', { message }),
      });
      opening.connection = connection;
      const info = await this.negotiate(connection);
      if (this.closed) throw closedError();
      if (connection.closed) throw new ChainError('unreachable', 'The connection to the Electrum server was lost', { retryable: true });
      this.connection = connection;
      this.info = info;
      this.failures = 0;
      this.lastError = undefined;
      this.batchesRefused = false;
      this.scheduleKeepAlive(connection);
      this.log?.('info', 'Connected to the Electrum server', { software: info.software, protocol: info.protocol });
      if (!first) this.emitReconnect();
      return info;
    } catch (error) {
      const chainError = asChainError(error);
      opening.connection?.close(chainError);
      if (!this.closed) {
        this.lastError = chainError;
        this.failures++;
        this.log?.('warn', 'Could not connect to the Electrum server', { code: chainError.code, message: chainError.message });
        this.scheduleReconnect();
      }
      throw chainError;
    }
  }

  private async negotiate(connection: RpcConnection): Promise<ServerInfo> {
    clientName ??= `wcs ${readVersion()}`;
    let version: unknown;
    try {
      version = await connection.request('server.version', [clientName, [PROTOCOL_MIN, PROTOCOL_MAX]], this.timeoutMs);
    } catch (error) {
      if (error instanceof ChainError && error.code === 'rpc_error') {
        throw new ChainError('bad_response', `The Electrum server does not speak protocol ${PROTOCOL_MIN} to ${PROTOCOL_MAX} (${error.reason ?? 'refused'})`);
      }
      throw error;
    }
    if (!Array.isArray(version) || typeof version[0] !== 'string' || typeof version[1] !== 'string') {
      throw new ChainError('bad_response', 'The Electrum server answered server.version with something else than [software, protocol]');
    }
    const [software, protocol] = version as [string, string];
    if (!/^\d+\.\d+(\.\d+)?$/.test(protocol) || compareVersions(protocol, PROTOCOL_MIN) < 0 || compareVersions(protocol, PROTOCOL_MAX) > 0) {
      throw new ChainError('bad_response', `The Electrum server speaks protocol ${protocol.slice(0, 20)}; ${PROTOCOL_MIN} to ${PROTOCOL_MAX} is needed`);
    }
    const features = (await connection.request('server.features', [], this.timeoutMs)) as { genesis_hash?: unknown } | null;
    const genesisHash = features?.genesis_hash;
    if (typeof genesisHash !== 'string' || !/^[0-9a-fA-F]{64}$/.test(genesisHash)) {
      throw new ChainError('bad_response', 'The Electrum server did not tell its genesis block hash (server.features)');
    }
    return { software: software.slice(0, 100), protocol, genesisHash: genesisHash.toLowerCase() };
  }

  private async sendPage(page: readonly RpcCall[]): Promise<BatchAnswer> {
    const connection = await this.session();
    if (page.length === 1 || this.batchesRefused) return this.pipeline(connection, page);
    try {
      return await connection.batch(page, this.timeoutMs);
    } catch (error) {
      if (!(error instanceof BatchRefused)) throw error;
      if (!this.batchesRefused) {
        this.log?.('warn', 'The Electrum server refused a JSON-RPC batch; sending single requests on this connection', { message: error.serverMessage });
      }
      this.batchesRefused = true;
      return this.pipeline(connection, page);
    }
  }

  /** The calls as single requests written one after the other, without waiting for answers in between. */
  private async pipeline(connection: RpcConnection, page: readonly RpcCall[]): Promise<BatchAnswer> {
    const answers = await connection.callMany(page, this.timeoutMs);
    return { outcomes: answers.map((answer) => answer.outcomes[0]!), answerBytes: answers.reduce((sum, answer) => sum + answer.answerBytes, 0) };
  }

  private lost(connection: RpcConnection, error: ChainError): void {
    if (connection !== this.connection) return;
    this.connection = undefined;
    clearTimeout(this.keepAliveTimer);
    this.keepAliveTimer = undefined;
    if (this.closed) return;
    this.lastError = error;
    this.log?.('warn', 'Lost the connection to the Electrum server; reconnecting', { code: error.code, message: error.message });
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnectTimer) return;
    const delay = Math.min(BACKOFF_FIRST_MS * 2 ** Math.min(this.failures, 16), BACKOFF_MAX_MS);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.attempt().catch(() => undefined); // a failed attempt schedules the next one itself
    }, delay);
  }

  /** Pings when nothing was written for keepAliveMs; a ping without answer ends the connection (then reconnect). */
  private scheduleKeepAlive(connection: RpcConnection): void {
    clearTimeout(this.keepAliveTimer);
    const due = Math.max(Math.min(1_000, this.keepAliveMs), connection.lastWriteAt + this.keepAliveMs - Date.now());
    this.keepAliveTimer = setTimeout(() => {
      if (connection !== this.connection || connection.closed) return;
      if (Date.now() - connection.lastWriteAt >= this.keepAliveMs) {
        connection.request('server.ping', [], this.timeoutMs).catch((error: unknown) => {
          const cause = asChainError(error);
          connection.close(new ChainError('unreachable', `The Electrum server stopped answering (${cause.message})`, { retryable: true }));
        });
      }
      this.scheduleKeepAlive(connection);
    }, due);
  }

  private notify(method: string, params: unknown[]): void {
    for (const listener of this.notificationListeners) {
      try {
        listener(method, params);
      } catch (error) {
        this.log?.('warn', 'An Electrum notification listener failed', { method, message: (error as Error).message });
      }
    }
  }

  private emitReconnect(): void {
    for (const listener of this.reconnectListeners) {
      try {
        listener();
      } catch (error) {
        this.log?.('warn', 'An Electrum reconnect listener failed', { message: (error as Error).message });
      }
    }
  }
}

function compareVersions(a: string, b: string): number {
  const left = a.split('.').map(Number);
  const right = b.split('.').map(Number);
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    const diff = (left[i] ?? 0) - (right[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return 0;
}

function closedError(): ChainError {
  return new ChainError('unreachable', 'The Electrum client was closed');
}

function copyError(error: ChainError): ChainError {
  return new ChainError(error.code, error.message, { rpcCode: error.rpcCode, reason: error.reason, retryable: error.retryable });
}
