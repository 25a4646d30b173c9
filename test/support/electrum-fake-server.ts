/**
 * A small Electrum server for tests of Electrum clients, over TCP or TLS on loopback, that can be told to
 * misbehave: answers are scripted per method (a handler may be slow, fail, or stay silent), batches can be
 * refused or capped, answers of a batch come in reverse order (as the protocol allows), and the test can drop
 * every connection, push notifications or write raw bytes.
 *
 *   const server = await startFakeElectrum({ protocol: '1.4' });
 *   server.handle('blockchain.block.header', ([height]) => headerHex(height));
 *   ... new ElectrumClient({ url: server.url }) ...
 *   await server.close();
 */
import net from 'node:net';
import tls from 'node:tls';

export type FakeHandler = (params: unknown[], context: { connection: number }) => unknown;

/** A handler's answer that sends nothing back (the request times out). */
export const NO_REPLY = Symbol('no reply');

/** Thrown by a handler: answered as a JSON-RPC error. */
export class FakeRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export interface FakeElectrumOptions {
  /** Serve TLS with this key and certificate (PEM). */
  tls?: { key: string; cert: string };
  /** What server.version answers as the agreed protocol (default "1.4"). */
  protocol?: string;
  software?: string;
  /** Default: the regtest genesis block. */
  genesisHash?: string;
}

export interface FakeRequest {
  connection: number;
  method: string;
  params: unknown[];
}

export interface FakeElectrumServer {
  /** `tcp://127.0.0.1:<port>` or `ssl://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** Every request received, in order (batched ones included). */
  readonly requests: FakeRequest[];
  /** The number of calls in each batch array received. */
  readonly batchSizes: number[];
  /** Connections accepted so far. */
  readonly connectionCount: number;
  /** Sets (or replaces) the handler of a method. */
  handle(method: string, handler: FakeHandler): void;
  /** Answers every batch array with one error, as a server without batch support does. */
  refuseBatches: boolean;
  /** Refuses batch arrays of more calls than this (as Fulcrum's max_batch). */
  maxBatch: number;
  /** Answers batch arrays in reverse order. */
  reverseBatches: boolean;
  /** Refuses new connections right away (they are accepted and closed). */
  rejectConnections: boolean;
  /** Sends a notification to every open connection. */
  notify(method: string, params: unknown[]): void;
  /** Writes raw text to every open connection. */
  sendRaw(text: string): void;
  /** Destroys every open connection. */
  dropConnections(): void;
  /** Resolves once `count` connections in all have been accepted. */
  waitForConnections(count: number): Promise<void>;
  close(): Promise<void>;
}

const REGTEST_GENESIS = '0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206';

export async function startFakeElectrum(options: FakeElectrumOptions = {}): Promise<FakeElectrumServer> {
  const handlers = new Map<string, FakeHandler>();
  const sockets = new Set<net.Socket>();
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  let connectionCount = 0;

  handlers.set('server.version', () => [options.software ?? 'FakeElectrum 0.1', options.protocol ?? '1.4']);
  handlers.set('server.features', () => ({ genesis_hash: options.genesisHash ?? REGTEST_GENESIS, hash_function: 'sha256', protocol_min: '1.4', protocol_max: options.protocol ?? '1.4' }));
  handlers.set('server.ping', () => null);

  const state = {
    url: '',
    port: 0,
    requests: [] as FakeRequest[],
    batchSizes: [] as number[],
    get connectionCount() {
      return connectionCount;
    },
    refuseBatches: false,
    maxBatch: Number.POSITIVE_INFINITY,
    reverseBatches: false,
    rejectConnections: false,
    handle(method: string, handler: FakeHandler) {
      handlers.set(method, handler);
    },
    notify(method: string, params: unknown[]) {
      for (const socket of sockets) socket.write(`${JSON.stringify({ jsonrpc: '2.0', method, params })}\n`);
    },
    sendRaw(text: string) {
      for (const socket of sockets) socket.write(text);
    },
    dropConnections() {
      for (const socket of sockets) socket.destroy();
    },
    waitForConnections(count: number) {
      if (connectionCount >= count) return Promise.resolve();
      return new Promise<void>((resolve) => waiters.push({ count, resolve }));
    },
    close: async () => {
      state.dropConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  async function answer(connection: number, call: unknown): Promise<object | typeof NO_REPLY> {
    const { method, params, id } = call as { method: string; params?: unknown[]; id: unknown };
    state.requests.push({ connection, method, params: params ?? [] });
    const handler = handlers.get(method);
    if (!handler) return { jsonrpc: '2.0', error: { code: -32601, message: `unknown method "${method}"` }, id };
    try {
      const result = await handler(params ?? [], { connection });
      if (result === NO_REPLY) return NO_REPLY;
      return { jsonrpc: '2.0', result, id };
    } catch (error) {
      const code = error instanceof FakeRpcError ? error.code : -32603;
      return { jsonrpc: '2.0', error: { code, message: (error as Error).message }, id };
    }
  }

  async function onLine(socket: net.Socket, connection: number, line: string) {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      socket.write(`${JSON.stringify({ jsonrpc: '2.0', error: { code: -32700, message: 'parse error' }, id: null })}\n`);
      return;
    }
    if (Array.isArray(message)) {
      state.batchSizes.push(message.length);
      if (state.refuseBatches || message.length > state.maxBatch) {
        socket.write(`${JSON.stringify({ jsonrpc: '2.0', error: { code: -32600, message: 'batch requests are not supported' }, id: null })}\n`);
        return;
      }
      const answers = (await Promise.all(message.map((call) => answer(connection, call)))).filter((a) => a !== NO_REPLY);
      if (state.reverseBatches) answers.reverse();
      if (answers.length > 0 && !socket.destroyed) socket.write(`${JSON.stringify(answers)}\n`);
      return;
    }
    const reply = await answer(connection, message);
    if (reply !== NO_REPLY && !socket.destroyed) socket.write(`${JSON.stringify(reply)}\n`);
  }

  const onConnection = (socket: net.Socket) => {
    connectionCount++;
    const connection = connectionCount;
    for (const waiter of waiters.filter((w) => connectionCount >= w.count)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
    if (state.rejectConnections) {
      socket.destroy();
      return;
    }
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let partial = '';
    socket.setEncoding('utf8');
    socket.on('data', (text: string) => {
      partial += text;
      let newline: number;
      while ((newline = partial.indexOf('\n')) >= 0) {
        const line = partial.slice(0, newline);
        partial = partial.slice(newline + 1);
        if (line.trim()) void onLine(socket, connection, line);
      }
    });
  };

  const server: net.Server = options.tls ? tls.createServer({ key: options.tls.key, cert: options.tls.cert }, onConnection) : net.createServer(onConnection);
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.port = (server.address() as net.AddressInfo).port;
  state.url = `${options.tls ? 'ssl' : 'tcp'}://127.0.0.1:${state.port}`;
  return state;
}
