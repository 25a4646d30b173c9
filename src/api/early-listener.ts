/**
 * The port of `wcs serve` answers from the first moments of the start: loading the server's modules,
 * opening the store and building the services take seconds on a loaded machine or with many wallets,
 * and a liveness probe failing all that time would get the process killed. Until the service is built
 * this listener answers liveness 200, readiness 503 and everything else 503 `starting`; then Fastify
 * takes over the same listening server (`serverFactory`), so no connection is ever refused in between.
 *
 * Light on purpose: node:http and the config only, no Fastify, no services.
 */
import { lookup } from 'node:dns/promises';
import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type Server as NetServer } from 'node:net';
import { ConfigError, type Config } from '../config.js';
import { API_HEADERS, answerClientErrors, answerFailedExpectations } from './security-headers.js';

/** Fastify's default, set on the servers it creates itself (`keepAliveTimeout` in fastify.js). */
const KEEP_ALIVE_TIMEOUT_MS = 72_000;
/** What a client is told to wait before asking again while the service starts. */
const RETRY_AFTER_SECONDS = '1';

/** The Node HTTP server settings of the service, whoever creates the server. */
export function httpServerOptions(config: Config): ServerOptions {
  return {
    // Node's own answer to an HTTP/1.1 request without Host has no body; the text guard gives it the common shape.
    requireHostHeader: false,
    // A request (headers and body) that takes longer to arrive is answered 408 and its connection closed.
    requestTimeout: config.limits.requestTimeoutMs,
    headersTimeout: Math.min(60_000, config.limits.requestTimeoutMs),
    // How often Node looks for requests past their time: a fraction of it, so the cut is timely.
    connectionsCheckingInterval: Math.min(30_000, Math.max(250, Math.floor(config.limits.requestTimeoutMs / 4))),
  };
}

/** Listening failures caused by the host or port setting, reported like every other bad setting. */
export function listenError(error: unknown, config: Config): unknown {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  const host = `SERVICE_HOST (--host, "host" in config.json)`;
  const port = `SERVICE_PORT (--port, "port" in config.json)`;
  switch (code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
      return new ConfigError(`Invalid setting ${host}: "${config.host}" does not resolve to an address`);
    case 'EADDRNOTAVAIL':
      return new ConfigError(`Invalid setting ${host}: "${config.host}" is not an address of this machine`);
    case 'EAFNOSUPPORT':
      return new ConfigError(`Invalid setting ${host}: "${config.host}" is of an address family this machine does not support`);
    case 'EADDRINUSE':
      return new ConfigError(`Invalid setting ${port}: port ${config.port} on ${config.host} is already in use`);
    case 'EACCES':
      return new ConfigError(`Invalid setting ${port}: port ${config.port} on ${config.host} needs privileges this process lacks`);
    default:
      return error;
  }
}

type RequestHandler = (request: IncomingMessage, response: ServerResponse) => void;

export interface EarlyListener {
  /** The listening server; Fastify gets it through `serverFactory`. */
  readonly server: Server;
  /**
   * Fastify's `serverFactory`: keeps Fastify's handler and answers on until Fastify's `listen()`,
   * which runs once every route is ready: only then do its requests go to Fastify.
   */
  serverFactory(fastifyHandler: RequestHandler): Server;
  /** Closes the port (the start failed or was stopped before Fastify took over). */
  close(): Promise<void>;
}

const hasBody = (request: IncomingMessage) =>
  request.headers['transfer-encoding'] !== undefined || (request.headers['content-length'] !== undefined && request.headers['content-length'] !== '0');

/** The answers while the service starts; bodies are never read, so a request with one also closes its connection. */
function answerWhileStarting(request: IncomingMessage, response: ServerResponse): void {
  const path = (request.url ?? '').split('?')[0];
  const read = request.method === 'GET' || request.method === 'HEAD';
  const [status, body] =
    read && path === '/healthz/live'
      ? [200, { status: 'ok' }]
      : read && path === '/healthz/ready'
        ? [503, { status: 'unavailable' }]
        : [503, { message: 'The service is starting; try again shortly', code: 'starting' }];
  const text = JSON.stringify(body);
  response.writeHead(status, {
    ...API_HEADERS,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...(status === 503 ? { 'retry-after': RETRY_AFTER_SECONDS } : {}),
    ...(hasBody(request) ? { connection: 'close' } : {}),
  });
  response.end(request.method === 'HEAD' ? undefined : text);
}

/** Binds a server the way net.Server.listen does, with the error mapped to the setting at fault. */
function bind(server: Server | NetServer, host: string, port: number, config: Config): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (error: Error) => reject(listenError(error, config));
    server.once('error', failed);
    server.listen({ host, port }, () => {
      server.removeListener('error', failed);
      resolve();
    });
  });
}

/**
 * `localhost` names 127.0.0.1 and ::1 both; Fastify binds each when it creates the server itself. Here the
 * other addresses get a plain TCP listener that hands each connection to the one HTTP server, so every
 * setting and handler of that server applies to them. Failures are ignored, as Fastify does.
 */
async function bindOtherLocalhostAddresses(server: Server, config: Config): Promise<NetServer[]> {
  const address = server.address();
  if (config.host !== 'localhost' || typeof address !== 'object' || address === null) return [];
  const addresses = await lookup('localhost', { all: true }).catch(() => []);
  const others: NetServer[] = [];
  for (const other of addresses.filter((a) => a.address !== address.address)) {
    const extra = createNetServer((socket) => server.emit('connection', socket));
    try {
      await bind(extra, other.address, address.port, config);
      others.push(extra);
    } catch {
      // The main address answers; a second one that cannot be bound is not a reason to stop.
    }
  }
  return others;
}

/** Creates the service's HTTP server and listens on host:port at once, answering as above until Fastify takes over. */
export async function openEarlyListener(config: Config): Promise<EarlyListener> {
  const server = createServer(httpServerOptions(config), answerWhileStarting);
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  // Until Fastify takes over: a client that sends Expect: 100-continue is answered before sending its body.
  server.on('checkContinue', answerWhileStarting);
  const refusedExpectation = answerFailedExpectations(() => {});
  const clientError = answerClientErrors(() => {});
  server.on('checkExpectation', refusedExpectation);
  server.on('clientError', clientError);
  await bind(server, config.host, config.port, config);
  const others = await bindOtherLocalhostAddresses(server, config);
  // Fastify's close() closes this server; the extra listeners stop accepting with it.
  const closeServer = server.close.bind(server);
  server.close = (callback?: (error?: Error) => void) => {
    for (const other of others) other.close();
    return closeServer(callback);
  };
  return {
    server,
    serverFactory(fastifyHandler) {
      // Fastify and buildServer add their own (with logging) right after this call, in the same tick.
      server.removeListener('checkExpectation', refusedExpectation);
      server.removeListener('clientError', clientError);
      // Fastify's listen() on a server that listens already would fail: it is told the server listens, and
      // its requests start going to Fastify, which marks itself listening and closes the server when it closes.
      server.listen = (() => {
        server.removeListener('request', answerWhileStarting);
        server.removeListener('checkContinue', answerWhileStarting);
        // First: listeners added by buildServer (pipelined-during-stop.ts) run after Fastify has routed.
        server.prependListener('request', fastifyHandler);
        process.nextTick(() => server.emit('listening'));
        return server;
      }) as Server['listen'];
      return server;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
