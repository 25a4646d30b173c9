/**
 * A real HTTP JSON-RPC server on 127.0.0.1 (random port) that behaves like Bitcoin Core for the
 * chain-source methods, answering from the vendored regtest fixtures. Tests move it through the
 * timeline (`setSnapshot(i)`) and switch node conditions (credentials, warm-up, IBD, filters,
 * delays) to see how the service copes.
 *
 *   const node = await startRpcTestServer({ snapshot: 0 });
 *   const source = new BitcoindChainSource({ url: node.url, ...node.credentials, network: 'regtest' });
 *   node.setSnapshot(3);
 *   await node.close();
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { FixtureChain, RpcFailure } from './rpc-fixture-chain.js';
import { checkParams, METHODS, type NodeBehaviour } from './rpc-methods.js';

export type RpcAuth = { user: string; password: string } | { cookieFile: string };

export interface RpcTestServerOptions extends Partial<NodeBehaviour> {
  /** user/password (rpcuser/rpcpassword) or a cookie file the server writes, as bitcoind does. */
  auth?: RpcAuth;
  /** Timeline snapshot to start at (default 0). */
  snapshot?: number;
  /** Wait this long before answering any request (for timeouts). */
  delayMs?: number;
  /** Extra wait per method, after the method has run (an answer lost after the node acted). */
  methodDelayMs?: Record<string, number>;
  /** Serve the REST interface (`-rest`): chain info and binary blocks, without credentials (default false). */
  rest?: boolean;
}

export interface ReceivedCall {
  method: string;
  params: unknown[];
}

export interface BroadcastRecord {
  hex: string;
  outcome: { txid: string } | { code: number; message: string };
}

interface JsonRpcRequest {
  id?: unknown;
  method?: unknown;
  params?: unknown;
}

const COOKIE_USER = '__cookie__';

export class RpcTestServer {
  readonly chain = new FixtureChain();
  /** Every call received, in order (batch members included). */
  readonly calls: ReceivedCall[] = [];
  /** HTTP requests received (a batch is one request). */
  httpRequests = 0;
  /** REST requests answered, by path. */
  readonly restRequests: string[] = [];
  /** Replaces the REST answer for a block (a node sending something else); undefined: the block as it is. */
  restBlockAnswer: ((hash: string) => { status: number; body: Buffer } | undefined) | undefined;
  /** TCP connections accepted (keep-alive clients reuse theirs). */
  connections = 0;
  /** Every sendrawtransaction received, with the node's answer. */
  readonly broadcasts: BroadcastRecord[] = [];
  readonly behaviour: NodeBehaviour;
  delayMs: number;
  methodDelayMs: Record<string, number>;
  /** Runs after each call has been answered by the node state, before the reply is sent (to change the node in between calls). */
  afterCall: ((call: ReceivedCall) => void) | undefined;
  private readonly server: http.Server;
  private readonly startedAt = Date.now();
  private cookiePassword = '';
  private port = 0;

  private constructor(private readonly options: RpcTestServerOptions) {
    this.behaviour = {
      filters: options.filters ?? true,
      warmingUp: options.warmingUp ?? null,
      initialBlockDownload: options.initialBlockDownload ?? false,
      chain: options.chain ?? 'regtest',
      feeRate: options.feeRate === undefined ? 0.00002001 : options.feeRate,
    };
    this.delayMs = options.delayMs ?? 0;
    this.methodDelayMs = { ...options.methodDelayMs };
    if (options.snapshot !== undefined) this.chain.setSnapshot(options.snapshot);
    if (this.auth && 'cookieFile' in this.auth) this.rotateCookie();
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch(() => {
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    });
  }

  static async start(options: RpcTestServerOptions = {}): Promise<RpcTestServer> {
    const node = new RpcTestServer(options);
    await new Promise<void>((resolve, reject) => {
      node.server.once('error', reject);
      node.server.listen(0, '127.0.0.1', () => resolve());
    });
    node.port = (node.server.address() as AddressInfo).port;
    node.server.on('connection', () => node.connections++);
    return node;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  private get auth(): RpcAuth {
    return this.options.auth ?? { user: 'wcs', password: 'wcs-test-password' };
  }

  /** Options a client needs to log in: `{ user, password }` or `{ cookieFile }`. */
  get credentials(): { user: string; password: string } | { cookieFile: string } {
    return this.auth;
  }

  /** Moves the node to timeline snapshot `i` (active chain, tip and mempool). */
  setSnapshot(i: number): void {
    this.chain.setSnapshot(i);
  }

  /** Writes a new cookie password, as bitcoind does when it restarts. */
  rotateCookie(): void {
    const auth = this.auth;
    if (!('cookieFile' in auth)) throw new Error('The test node does not use a cookie file');
    this.cookiePassword = randomBytes(32).toString('hex');
    writeFileSync(auth.cookieFile, `${COOKIE_USER}:${this.cookiePassword}`, { mode: 0o600 });
  }

  /** How many calls of `method` the node received. */
  count(method: string): number {
    return this.calls.filter((c) => c.method === method).length;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private authorized(header: string | undefined): boolean {
    if (!header?.startsWith('Basic ')) return false;
    const given = Buffer.from(header.slice(6), 'base64').toString('utf8');
    const auth = this.auth;
    const expected = 'cookieFile' in auth ? `${COOKIE_USER}:${this.cookiePassword}` : `${auth.user}:${auth.password}`;
    return given === expected;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    this.httpRequests++;
    if (req.method === 'GET' && req.url?.startsWith('/rest/')) return this.handleRest(req.url, res);
    if (!this.authorized(req.headers.authorization)) {
      // What Core does: 401, a Basic challenge, an empty body.
      res.writeHead(401, { 'www-authenticate': 'Basic realm="jsonrpc"', 'content-length': 0 });
      res.end();
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { 'content-length': 0 });
      res.end();
      return;
    }
    if (this.delayMs > 0) await sleep(this.delayMs);
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return this.send(res, 500, { result: null, error: { code: -32700, message: 'Parse error' }, id: null });
    }
    if (Array.isArray(body)) {
      const replies = body.map((r) => this.answer(r as JsonRpcRequest));
      await sleep(Math.max(0, ...replies.map((r) => r.delay)));
      return this.send(res, 200, replies.map((r) => r.reply));
    }
    const { reply, delay } = this.answer(body as JsonRpcRequest);
    if (delay > 0) await sleep(delay);
    // Legacy (JSON-RPC 1.0) status codes: 404 for an unknown method, 500 for other errors.
    const status = reply.error === null ? 200 : reply.error.code === -32601 ? 404 : reply.error.code === -32600 ? 400 : 500;
    this.send(res, status, reply);
  }

  /** What Core's REST interface answers (404 for every path without -rest, as its HTTP server does). */
  private handleRest(path: string, res: http.ServerResponse): void {
    const reply = (status: number, body: Buffer, type = 'text/plain') => {
      res.writeHead(status, { 'content-type': type, 'content-length': body.length });
      res.end(body);
    };
    if (!this.options.rest) return reply(404, Buffer.alloc(0));
    this.restRequests.push(path);
    if (path === '/rest/chaininfo.json') return reply(200, Buffer.from(JSON.stringify({ chain: this.behaviour.chain, blocks: this.chain.tipHeight })), 'application/json');
    const block = /^\/rest\/block\/([0-9a-f]{64})\.bin$/.exec(path);
    if (!block) return reply(400, Buffer.from('Invalid URI format'));
    const hash = block[1]!;
    const replaced = this.restBlockAnswer?.(hash);
    if (replaced) return reply(replaced.status, replaced.body, 'application/octet-stream');
    const known = this.chain.block(hash);
    if (!known) return reply(404, Buffer.from(`${hash} not found`));
    reply(200, Buffer.from(known.hex, 'hex'), 'application/octet-stream');
  }

  private answer(request: JsonRpcRequest): { reply: { result: unknown; error: { code: number; message: string } | null; id: unknown }; delay: number } {
    const id = request && typeof request === 'object' ? (request.id ?? null) : null;
    const fail = (code: number, message: string) => ({ reply: { result: null, error: { code, message }, id }, delay: 0 });
    if (!request || typeof request !== 'object' || typeof request.method !== 'string') return fail(-32600, 'Invalid Request object');
    const params = request.params === undefined || request.params === null ? [] : request.params;
    if (!Array.isArray(params)) return fail(-32600, 'Params must be an array or object');
    this.calls.push({ method: request.method, params });
    const delay = this.methodDelayMs[request.method] ?? 0;
    if (this.behaviour.warmingUp !== null) return { ...fail(-28, this.behaviour.warmingUp), delay };
    const method = METHODS[request.method];
    if (!method) return fail(-32601, 'Method not found');
    try {
      const args = checkParams(request.method, method.params, params);
      const result = method.run(args, {
        chain: this.chain,
        behaviour: this.behaviour,
        startedAt: this.startedAt,
        onBroadcast: (hex, outcome) => this.broadcasts.push({ hex, outcome }),
      });
      this.afterCall?.({ method: request.method, params });
      return { reply: { result, error: null, id }, delay };
    } catch (error) {
      if (error instanceof RpcFailure) return { ...fail(error.code, error.message), delay };
      throw error;
    }
  }

  private send(res: http.ServerResponse, status: number, body: unknown): void {
    if (res.destroyed) return;
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }
}

export const startRpcTestServer = (options: RpcTestServerOptions = {}): Promise<RpcTestServer> => RpcTestServer.start(options);

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
