/**
 * Refuses U+0000 in any text a request hands to the services. PostgreSQL cannot store or compare
 * it in `text` ("invalid byte sequence for encoding UTF8: 0x00"), so without this guard a NUL in a
 * description, a path parameter or a user name would be a 500 on PostgreSQL and a stored value on
 * SQLite. No field of the API has a use for it.
 *
 * Its first hook also refuses an HTTP/1.1 request without a Host header (RFC 9112 requires a 400),
 * which Node would otherwise answer itself with no body, and the target `*` but for OPTIONS.
 */
import type { FastifyInstance, preValidationHookHandler } from 'fastify';
import { ServiceError, invalidField, unauthenticated } from '../services/errors.js';
import { prependRouteHook } from './route-hooks.js';

const NUL = '\u0000';
const MAX_DEPTH = 64;

/** JSON pointer of the first string (key or value) holding NUL, or undefined. */
export function findNul(value: unknown, depth = 0): string | undefined {
  if (typeof value === 'string') return value.includes(NUL) ? '' : undefined;
  // Deeper values are refused by the schemas anyway; the walk stays bounded.
  if (typeof value !== 'object' || value === null || depth > MAX_DEPTH) return undefined;
  // It runs on every request: the pointer is built only for what is found.
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const path = () => `/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
    if (key.includes(NUL)) return path();
    const found = findNul((value as Record<string, unknown>)[key], depth + 1);
    if (found !== undefined) return path() + found;
  }
  return undefined;
}

function basicUserName(header: string | undefined): string | undefined {
  if (typeof header !== 'string' || !/^basic /i.test(header)) return undefined;
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  return decoded.slice(0, Math.max(0, decoded.indexOf(':')));
}

/**
 * Install before the routes. Hooks in callback style: they run on every request, and an async hook
 * costs a promise each.
 */
export function installTextGuard(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => {
    if (request.headers.host === undefined && request.raw.httpVersion === '1.1') {
      return done(new ServiceError('invalid_input', 'bad_request', 'Bad request: HTTP/1.1 requires a Host header'));
    }
    // `*` names the server as a whole, for OPTIONS only (RFC 9112); the router would take `GET *` for `GET /`.
    if (request.raw.url === '*' && request.method !== 'OPTIONS') {
      return done(new ServiceError('invalid_input', 'bad_request', 'Bad request: the request target * is only for OPTIONS'));
    }
    // A path parameter with NUL names nothing that exists.
    if (findNul(request.params) !== undefined) return done(new ServiceError('not_found', 'not_found', 'Not found'));
    const inQuery = findNul(request.query);
    if (inQuery !== undefined) return done(invalidField(`/query${inQuery}`, 'must not contain the character U+0000'));
    if (basicUserName(request.headers.authorization)?.includes(NUL)) return done(unauthenticated('Basic'));
    done();
  });
  const guardBody: preValidationHookHandler = (request, _reply, done) => {
    const inBody = findNul(request.body);
    done(inBody === undefined ? undefined : invalidField(inBody, 'must not contain the character U+0000'));
  };
  // Fastify reads no body for GET, HEAD and TRACE: routes of those methods skip this stage.
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.every((method) => BODYLESS_METHODS.has(method))) return;
    route.preValidation = prependRouteHook(route.preValidation, guardBody);
  });
}

const BODYLESS_METHODS = new Set(['GET', 'HEAD', 'TRACE']);
