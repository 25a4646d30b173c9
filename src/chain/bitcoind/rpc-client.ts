/**
 * Bitcoin Core JSON-RPC over HTTP: keep-alive connections, cookie or user/password auth,
 * a deadline per request, and retries with backoff for idempotent reads only.
 *
 * Every failure becomes a ChainError with a distinct code (unauthorized, connection_refused,
 * timeout, unreachable, warming_up, ...) and a message that never contains credentials.
 */
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import { ChainError } from '../types.js';
import { parseJsonBody } from './json-body.js';

export interface RpcClientOptions {
  /** Node RPC address, e.g. `http://127.0.0.1:8332`. */
  url: string;
  /** Path of bitcoind's `.cookie` file; read at each (re)connect because bitcoind rewrites it on restart. */
  cookieFile?: string;
  user?: string;
  password?: string;
  /** Deadline per HTTP request (default 30 s). */
  timeoutMs?: number;
  /** Extra attempts for idempotent calls after a transient failure (default 3). */
  retries?: number;
  /** First backoff delay, doubled per attempt up to 5 s (default 250 ms). */
  retryDelayMs?: number;
  /** Largest accepted response body (default 64 MiB). */
  maxResponseBytes?: number;
}

export interface CallOptions {
  /** Safe to repeat after a transient failure. False for anything with side effects. */
  idempotent?: boolean;
  /** Overrides the client's retry count for this call. */
  retries?: number;
  /** Overrides the client's deadline for this call. */
  timeoutMs?: number;
}

/** RPC error answered by the node (code and message as the node sent them). */
export interface RpcErrorBody {
  code: number;
  message: string;
}

export type BatchOutcome<T = unknown> = { ok: true; result: T } | { ok: false; error: ChainError };

interface RpcResponse {
  result?: unknown;
  error?: RpcErrorBody | null;
  id?: unknown;
}

const RPC_IN_WARMUP = -28;
const MAX_BACKOFF_MS = 5_000;

export class RpcClient {
  private readonly endpoint: URL;
  private readonly agent: http.Agent;
  private readonly timeoutMs: number;
  private readonly retries: number;
  private readonly retryDelayMs: number;
  private readonly maxResponseBytes: number;
  /** Current Authorization header; dropped after a 401 or a lost connection so the cookie is re-read. */
  private authorization: string | undefined;
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: RpcClientOptions) {
    let endpoint: URL;
    try {
      endpoint = new URL(options.url);
    } catch {
      throw new ChainError('bad_config', 'The Bitcoin Core RPC url is not a valid URL');
    }
    if (endpoint.protocol !== 'http:' && endpoint.protocol !== 'https:') {
      throw new ChainError('bad_config', 'The Bitcoin Core RPC url must start with http:// or https://');
    }
    if (endpoint.username && !options.user) {
      options = { ...options, user: decodeURIComponent(endpoint.username), password: decodeURIComponent(endpoint.password) };
      this.options = options;
    }
    endpoint.username = '';
    endpoint.password = '';
    if (!options.cookieFile && (options.user === undefined || options.password === undefined)) {
      throw new ChainError('bad_config', 'No Bitcoin Core RPC credentials: configure cookieFile, or user and password');
    }
    this.endpoint = endpoint;
    const Agent = endpoint.protocol === 'https:' ? https.Agent : http.Agent;
    this.agent = new Agent({ keepAlive: true, maxSockets: 4 });
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.retries = options.retries ?? 3;
    this.retryDelayMs = options.retryDelayMs ?? 250;
    this.maxResponseBytes = options.maxResponseBytes ?? 64 * 1024 * 1024;
  }

  /**
   * host:port of the node, for the operator (never the credentials). Messages of ChainErrors leave
   * it out: they may reach API users (`chain_unavailable`), who have no business knowing the node's address.
   */
  get address(): string {
    return this.endpoint.host;
  }

  /** Calls one method. RPC errors throw ChainError `rpc_error` (or `warming_up`) with `rpcCode`. */
  async call<T = unknown>(method: string, params: unknown[] = [], options: CallOptions = {}): Promise<T> {
    return this.withRetries(options, async () => {
      const response = await this.post({ jsonrpc: '1.0', id: this.nextId++, method, params }, options.timeoutMs);
      if (Array.isArray(response) || typeof response !== 'object' || response === null) {
        throw new ChainError('bad_response', `Bitcoin Core answered ${method} with something that is not a JSON-RPC reply`);
      }
      return unwrap<T>(response as RpcResponse, method);
    });
  }

  /**
   * Sends several calls in one JSON-RPC batch; each outcome is reported on its own, so one
   * unknown txid does not fail the others. Only for idempotent methods (the batch may be resent).
   */
  async batch<T = unknown>(calls: Array<{ method: string; params: unknown[] }>, options: CallOptions = {}): Promise<BatchOutcome<T>[]> {
    if (calls.length === 0) return [];
    return this.withRetries({ ...options, idempotent: true }, async () => {
      const firstId = this.nextId;
      this.nextId += calls.length;
      const response = await this.post(
        calls.map((c, i) => ({ jsonrpc: '1.0', id: firstId + i, method: c.method, params: c.params })),
        options.timeoutMs,
      );
      if (!Array.isArray(response)) {
        // A node that rejects the whole batch answers with one error object.
        if (response && typeof response === 'object') unwrap(response as RpcResponse, 'batch');
        throw new ChainError('bad_response', 'Bitcoin Core answered a batch with something that is not a list');
      }
      const byId = new Map<unknown, RpcResponse>();
      for (const r of response as RpcResponse[]) if (r && typeof r === 'object') byId.set(r.id, r);
      return calls.map((c, i): BatchOutcome<T> => {
        const r = byId.get(firstId + i);
        if (!r) return { ok: false, error: new ChainError('bad_response', `Bitcoin Core left ${c.method} out of a batch answer`) };
        try {
          return { ok: true, result: unwrap<T>(r, c.method) };
        } catch (error) {
          return { ok: false, error: error as ChainError };
        }
      });
    });
  }

  /** Closes idle keep-alive connections; later calls fail. */
  close(): void {
    this.closed = true;
    this.agent.destroy();
  }

  private async withRetries<T>(options: CallOptions, attempt: () => Promise<T>): Promise<T> {
    const retries = options.idempotent === false ? 0 : (options.retries ?? this.retries);
    for (let n = 0; ; n++) {
      try {
        return await attempt();
      } catch (error) {
        if (!(error instanceof ChainError) || !error.retryable || n >= retries || this.closed) throw error;
        await sleep(Math.min(this.retryDelayMs * 2 ** n, MAX_BACKOFF_MS));
      }
    }
  }

  /** Posts one JSON body; re-reads the cookie once if the node says 401 (it may have restarted). */
  private async post(body: unknown, timeoutMs = this.timeoutMs): Promise<unknown> {
    if (this.closed) throw new ChainError('unreachable', 'The Bitcoin Core RPC client is closed');
    const payload = JSON.stringify(body);
    const hadAuthorization = this.authorization !== undefined;
    try {
      return await this.postOnce(payload, await this.credentials(), timeoutMs);
    } catch (error) {
      const canRefreshCookie = error instanceof ChainError && error.code === 'unauthorized' && this.options.cookieFile && hadAuthorization;
      if (!canRefreshCookie) throw error;
      this.authorization = undefined;
      return this.postOnce(payload, await this.credentials(), timeoutMs);
    }
  }

  private async credentials(): Promise<string> {
    if (this.authorization) return this.authorization;
    let userPass: string;
    if (this.options.cookieFile) {
      let text: string;
      try {
        text = await readFile(this.options.cookieFile, 'utf8');
      } catch (error) {
        const reason = (error as NodeJS.ErrnoException).code ?? 'unreadable';
        throw new ChainError('bad_config', `Cannot read the Bitcoin Core cookie file (${reason})`, {
          retryable: reason === 'ENOENT',
          logContext: { cookie_file: this.options.cookieFile },
        });
      }
      userPass = text.trim();
      if (!userPass.includes(':')) {
        throw new ChainError('bad_config', 'The Bitcoin Core cookie file is not user:password', { logContext: { cookie_file: this.options.cookieFile } });
      }
    } else {
      userPass = `${this.options.user}:${this.options.password}`;
    }
    this.authorization = `Basic ${Buffer.from(userPass, 'utf8').toString('base64')}`;
    return this.authorization;
  }

  private async postOnce(payload: string, authorization: string, timeoutMs: number): Promise<unknown> {
    const { status, body } = await this.exchange('POST', `${this.endpoint.pathname}${this.endpoint.search}`, timeoutMs, payload, authorization);
    try {
      return this.readResponse(status, body);
    } catch (error) {
      // Rejected credentials or a busy node: the next request reads the cookie again (it may be new).
      if (error instanceof ChainError && error.code !== 'bad_response' && error.code !== 'rpc_error') this.authorization = undefined;
      throw error;
    }
  }

  /**
   * GETs a path of the node's REST interface (`-rest`; no credentials) and returns the body of a 200 answer.
   * Any other status is a ChainError: `not_found` for 404 (unknown item, or REST disabled), else `bad_response`.
   */
  async getBinary(path: string, options: { timeoutMs?: number } = {}): Promise<Buffer> {
    if (this.closed) throw new ChainError('unreachable', 'The Bitcoin Core RPC client is closed');
    const { status, body } = await this.exchange('GET', path, options.timeoutMs ?? this.timeoutMs);
    if (status === 404) throw new ChainError('not_found', 'Bitcoin Core answered HTTP 404 on its REST interface');
    if (status !== 200) throw new ChainError('bad_response', `Bitcoin Core answered HTTP ${status} on its REST interface`);
    return body;
  }

  /** One HTTP exchange on the keep-alive agent: status and whole body, bounded in size and time. */
  private exchange(method: 'GET' | 'POST', path: string, timeoutMs: number, payload?: string, authorization?: string): Promise<{ status: number; body: Buffer }> {
    const transport = this.endpoint.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      let settled = false;
      const finish = (error: ChainError | undefined, value?: { status: number; body: Buffer }) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (error) {
          // After a lost connection the node may have restarted with a new cookie.
          if (error.code !== 'bad_response' && error.code !== 'rpc_error') this.authorization = undefined;
          reject(error);
        } else resolve(value!);
      };
      const headers: http.OutgoingHttpHeaders = {};
      if (payload !== undefined) {
        headers['content-type'] = 'application/json';
        headers['content-length'] = Buffer.byteLength(payload);
      }
      if (authorization !== undefined) headers.authorization = authorization;
      const request = transport.request(
        {
          agent: this.agent,
          protocol: this.endpoint.protocol,
          hostname: this.endpoint.hostname,
          port: this.endpoint.port || (this.endpoint.protocol === 'https:' ? 443 : 80),
          path,
          method,
          headers,
        },
        (response) => {
          const chunks: Buffer[] = [];
          let length = 0;
          response.on('data', (chunk: Buffer) => {
            length += chunk.length;
            if (length > this.maxResponseBytes) {
              finish(new ChainError('bad_response', `Bitcoin Core answer exceeds ${this.maxResponseBytes} bytes`));
              request.destroy();
              return;
            }
            chunks.push(chunk);
          });
          response.on('error', (error) => finish(this.transportError(error)));
          response.on('end', () => finish(undefined, { status: response.statusCode ?? 0, body: Buffer.concat(chunks) }));
        },
      );
      const timer = setTimeout(() => {
        finish(new ChainError('timeout', `No answer from Bitcoin Core within ${timeoutMs} ms`, { retryable: true }));
        request.destroy();
      }, timeoutMs);
      request.on('error', (error) => finish(this.transportError(error)));
      request.end(payload);
    });
  }

  private readResponse(status: number, body: Buffer): unknown {
    if (status === 401 || status === 403) {
      throw new ChainError(
        'unauthorized',
        `Bitcoin Core rejected the RPC credentials (HTTP ${status}): check rpcuser/rpcpassword or the cookie file`,
      );
    }
    let parsed: unknown;
    try {
      parsed = parseJsonBody(body);
    } catch {
      if (status === 503) {
        throw new ChainError('unreachable', 'Bitcoin Core is busy (HTTP 503, RPC work queue full)', { retryable: true });
      }
      throw new ChainError('bad_response', `Bitcoin Core answered HTTP ${status} without a JSON body`);
    }
    // Core answers RPC errors with HTTP 500 (or 404 for an unknown method) and a JSON body.
    return parsed;
  }

  private transportError(error: Error): ChainError {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ECONNREFUSED') {
      return new ChainError('connection_refused', 'Connection to Bitcoin Core refused: is bitcoind running with its RPC server on the configured port?', {
        retryable: true,
      });
    }
    if (code === 'ETIMEDOUT') return new ChainError('timeout', 'Connecting to Bitcoin Core timed out', { retryable: true });
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
      return new ChainError('unreachable', 'Cannot resolve the host name of Bitcoin Core', { retryable: true });
    }
    return new ChainError('unreachable', `Connection to Bitcoin Core failed (${code ?? 'network error'})`, { retryable: true });
  }
}

function unwrap<T>(response: RpcResponse, method: string): T {
  if (response.error) {
    const { code, message } = response.error;
    if (typeof code !== 'number' || typeof message !== 'string') {
      throw new ChainError('bad_response', `Bitcoin Core answered ${method} with a malformed error`);
    }
    if (code === RPC_IN_WARMUP) {
      throw new ChainError('warming_up', `Bitcoin Core is starting up: ${message}`, { rpcCode: code, reason: message, retryable: true });
    }
    throw new ChainError('rpc_error', `Bitcoin Core ${method} failed: ${message} (${code})`, { rpcCode: code, reason: message });
  }
  if (!('result' in response)) throw new ChainError('bad_response', `Bitcoin Core answered ${method} without a result`);
  return response.result as T;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
