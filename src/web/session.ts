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

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'lax', secure: request.protocol === 'https' });
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
