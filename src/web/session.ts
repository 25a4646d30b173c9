/**
 * The session cookie and the cross-site request forgery defence. A state-changing request (any POST)
 * must come from a page of this service (the browser's Origin / Sec-Fetch-Site say so when present)
 * and, once signed in, carry the session's form token in `_csrf`. The cookie is HttpOnly, SameSite=Lax
 * and Secure when the request came over TLS.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ServiceError } from '../services/errors.js';
import { WEB_SESSION_LIFE_MS, sameFormToken, type WebSession } from '../services/web-sessions.js';

export const SESSION_COOKIE = 'wcs_session';

declare module 'fastify' {
  interface FastifyRequest {
    webSession: WebSession | undefined;
  }
}

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, sessionId: string): void {
  reply.setCookie(SESSION_COOKIE, sessionId, {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: request.protocol === 'https',
    maxAge: Math.floor(WEB_SESSION_LIFE_MS / 1000),
  });
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply, path = '/'): void {
  reply.clearCookie(SESSION_COOKIE, { path, httpOnly: true, sameSite: 'lax', secure: request.protocol === 'https' });
}

/**
 * The session id the request's cookies carry: undefined without one, and `ambiguous` with more than one.
 * Cookies are not kept apart by port: a page on another port of the same host can set its own
 * `wcs_session` for a narrower path, which browsers then send first on those paths, so that one user's
 * pages would run in another's session. A request that carries two is trusted with neither.
 */
export function sessionCookieOf(request: FastifyRequest): string | undefined | 'ambiguous' {
  const header = request.headers.cookie;
  if (header === undefined) return undefined;
  let count = 0;
  for (const pair of header.split(';')) {
    const name = pair.slice(0, pair.includes('=') ? pair.indexOf('=') : pair.length).trim();
    if (name === SESSION_COOKIE) count++;
  }
  if (count > 1) return 'ambiguous';
  return count === 1 ? request.cookies[SESSION_COOKIE] : undefined;
}

/** Deepest path prefixes a cookie may have been set for; deeper pages are not paths of the interface. */
const MAX_COOKIE_PATH_DEPTH = 8;

/**
 * Clears the session cookie for every path a cookie sent with this request may have been set for (a
 * cookie is only cleared by a Set-Cookie of its own path): `/` and each prefix of the request's path.
 */
export function clearSessionCookies(request: FastifyRequest, reply: FastifyReply): void {
  const segments = request.url.split('?')[0]!.split('/').filter(Boolean).slice(0, MAX_COOKIE_PATH_DEPTH);
  const paths = new Set(['/']);
  let prefix = '';
  for (const segment of segments) {
    prefix += `/${segment}`;
    paths.add(prefix).add(`${prefix}/`);
  }
  for (const path of paths) clearSessionCookie(request, reply, path);
}

function crossSite(): ServiceError {
  return new ServiceError('forbidden', 'cross_site_request', 'This form was not sent from a page of this service; reload the page and try again');
}

/** Refuses a POST that a browser says came from another site, or without the session's form token. */
export function checkSameOrigin(request: FastifyRequest): void {
  const fetchSite = request.headers['sec-fetch-site'];
  if (typeof fetchSite === 'string' && fetchSite !== 'same-origin' && fetchSite !== 'none') throw crossSite();
  const origin = request.headers.origin;
  if (typeof origin === 'string' && origin !== `${request.protocol}://${request.host}`) throw crossSite();
}

export function checkFormToken(request: FastifyRequest, session: WebSession): void {
  const body = request.body as Record<string, unknown> | undefined;
  if (!sameFormToken(session.csrfToken, body?._csrf)) throw crossSite();
}
