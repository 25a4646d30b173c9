/**
 * Response headers a security scanner expects, on every answer (errors and 404s included):
 * no MIME sniffing, no framing, no referrer, no caching of API answers (they carry tokens and
 * wallet data). The documentation page gets a Content-Security-Policy it works under; JSON
 * answers get the strictest one, since they are never rendered as a page.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** JSON answers load nothing and may not be framed. */
export const API_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/**
 * The Swagger UI page loads its scripts, styles and images from this server only; the UI sets
 * inline styles and shows data: images (icons), and it fetches /docs/openapi.json ('self').
 */
export const DOCS_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; " +
  "connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'";

const DOCS_PAGE_PREFIX = '/docs/api';

/** The headers of an answer, named as Fastify writes them. */
const headersWith = (policy: string): Readonly<Record<string, string>> =>
  Object.freeze({
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'content-security-policy': policy,
    // Set before any handler runs: the docs page's static files replace it with their own caching.
    'cache-control': 'no-store',
  });
/** The headers of a JSON answer. */
export const API_HEADERS = headersWith(API_CSP);
// Listed once: Fastify's reply.headers() would list an object's keys again on every request.
const API_HEADER_LIST = Object.entries(API_HEADERS);
const DOCS_HEADER_LIST = Object.entries(headersWith(DOCS_CSP));

/** Sets the headers on one answer; `url` picks the docs page policy. */
function applySecurityHeaders(reply: FastifyReply, url: string): void {
  const isDocsPage = url === DOCS_PAGE_PREFIX || url.startsWith(`${DOCS_PAGE_PREFIX}/`) || url.startsWith(`${DOCS_PAGE_PREFIX}?`);
  for (const [name, value] of isDocsPage ? DOCS_HEADER_LIST : API_HEADER_LIST) reply.header(name, value);
}

/**
 * Install before every other onRequest hook. Headers set when the request arrives stay on the
 * answer whatever it turns out to be (errors keep them); a handler or a later hook may still
 * replace one (the web pages' policy, the docs files' caching). No onSend hook: without one,
 * Fastify skips that stage for every answer.
 */
export function installSecurityHeaders(app: FastifyInstance): void {
  // Callback style: it runs on every request, and an async hook costs a promise each.
  app.addHook('onRequest', (request, reply, done) => {
    applySecurityHeaders(reply, request.url);
    done();
  });
}

/** Errors of the router (bad URL) come before the onRequest hooks: wrap their handler to add the headers. */
export function withSecurityHeaders<R>(handler: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => R) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): R => {
    applySecurityHeaders(reply, request.url);
    return handler(error, request, reply);
  };
}

/** The headers above, for answers written straight to the socket. */
const RAW_HEADERS = API_HEADER_LIST
  .map(([name, value]) => `${name}: ${value}\r\n`)
  .join('');

/** What the log says of a request refused before Fastify saw it. */
export interface Refusal {
  status: number;
  code: string;
  /** The peer's address; behind a proxy, the proxy's (these requests are refused before `X-Forwarded-For` is read). */
  ip: string | undefined;
  method?: string;
  path?: string;
}

/**
 * Answers requests Node's HTTP parser refuses before Fastify sees them (unknown method, bad
 * header bytes, headers too large, timeouts) in the common error shape and with the headers above,
 * and logs each (the request line of the routes never sees them).
 */
export function answerClientErrors(log: (refusal: Refusal) => void) {
  return (error: Error & { code?: string }, socket: Duplex & { remoteAddress?: string }): void => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const ip = socket.remoteAddress; // gone once the socket is destroyed
    const [status, reason, body] =
      error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', { message: 'Request timeout', code: 'request_timeout' }]
        : error.code === 'HPE_HEADER_OVERFLOW'
          ? [431, 'Request Header Fields Too Large', { message: 'Request headers too large', code: 'headers_too_large' }]
          : [400, 'Bad Request', { message: 'Bad request', code: 'bad_request' }];
    const text = JSON.stringify(body);
    if (socket.writable) {
      socket.write(
        `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\n` +
          `${RAW_HEADERS}Connection: close\r\n\r\n${text}`,
      );
    }
    socket.destroy();
    log({ status, code: body.code, ip });
  };
}

/**
 * Node answers an `Expect` other than `100-continue` itself, with a 417 and no body, unless the
 * server listens for `checkExpectation`: this listener gives that answer the common error shape.
 */
export function answerFailedExpectations(log: (refusal: Refusal) => void) {
  return (request: IncomingMessage, response: ServerResponse): void => {
    const body = { message: 'Expectation failed: only Expect: 100-continue is supported', code: 'expectation_failed' };
    const text = JSON.stringify(body);
    response.writeHead(417, { ...API_HEADERS, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
    response.end(text);
    log({ status: 417, code: body.code, ip: request.socket.remoteAddress, method: request.method, path: request.url?.split('?')[0] });
  };
}
