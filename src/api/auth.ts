/**
 * Authentication hooks. Every route under /api declares `config: { auth: 'basic' | 'bearer' }`;
 * the matching hook runs on request (before the body is read), and a route that declares
 * nothing fails the start, so no /api route can be open by mistake.
 */
import type { FastifyInstance, FastifyRequest, onRequestHookHandler, RouteOptions } from 'fastify';
import { unauthenticated } from '../services/errors.js';
import type { Services } from '../services/index.js';
import type { Principal } from '../services/principal.js';
import { prependRouteHook } from './route-hooks.js';

export type AuthScheme = 'basic' | 'bearer';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthScheme;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

const TOKEN_SYNTAX = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** The value after `<scheme> ` in the Authorization header, if it uses that scheme. */
function credentials(request: FastifyRequest, scheme: string): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const space = header.indexOf(' ');
  if (space < 0 || header.slice(0, space).toLowerCase() !== scheme) return undefined;
  return header.slice(space + 1).trim();
}

export function basicAuthHook(services: Services): onRequestHookHandler {
  return async (request) => {
    const encoded = credentials(request, 'basic');
    if (encoded === undefined || !/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) throw unauthenticated('Basic');
    const decoded = Buffer.from(encoded, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 1) throw unauthenticated('Basic');
    request.principal = await services.authentication.authenticateBasic(decoded.slice(0, colon), decoded.slice(colon + 1), request.ip);
  };
}

export function bearerAuthHook(services: Services): onRequestHookHandler {
  return async (request) => {
    const token = credentials(request, 'bearer');
    if (token === undefined || token.length > 4096 || !TOKEN_SYNTAX.test(token)) throw unauthenticated('Bearer');
    request.principal = await services.authentication.authenticateBearer(token);
  };
}

export const SECURITY_OF: Record<AuthScheme, Record<string, string[]>[]> = {
  basic: [{ basicAuth: [] }],
  bearer: [{ bearerAuth: [] }],
};

/**
 * Adds the declared authentication to every route registered under `prefix` (and its OpenAPI
 * `security`). Install before the routes and before the OpenAPI generator.
 */
export function enforceAuthentication(app: FastifyInstance, prefix: string, services: Services): void {
  const hooks: Record<AuthScheme, onRequestHookHandler> = { basic: basicAuthHook(services), bearer: bearerAuthHook(services) };
  app.decorateRequest('principal', null);
  app.addHook('onRoute', (route: RouteOptions) => {
    if (!route.url.startsWith(prefix)) return;
    const scheme = route.config?.auth;
    if (scheme !== 'basic' && scheme !== 'bearer') {
      throw new Error(`Route ${String(route.method)} ${route.url} must declare config.auth ('basic' or 'bearer')`);
    }
    route.onRequest = prependRouteHook(route.onRequest, hooks[scheme]);
    route.schema = { ...route.schema, security: SECURITY_OF[scheme] };
  });
}

/** The authenticated caller of a route behind `enforceAuthentication`. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw unauthenticated('Bearer'); // unreachable behind the hook
  return request.principal;
}
