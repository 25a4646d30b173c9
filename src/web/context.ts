/** What every page module receives, and the small helpers they share to answer. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import type { Services } from '../services/index.js';
import { ServiceError } from '../services/errors.js';
import type { WebSession } from '../services/web-sessions.js';
import type { WebAssets } from './assets.js';
import type { Html } from './html.js';
import { page, type PageShell } from './layout.js';

export interface WebDeps {
  services: Services;
  config: Config;
  assets: WebAssets;
}

/** The session of a request past the session hook (every non-public page). */
export function sessionOf(request: FastifyRequest): WebSession {
  const session = request.webSession;
  if (!session) throw new ServiceError('unauthenticated', 'unauthenticated', 'Sign in first');
  return session;
}

export function respond(
  reply: FastifyReply,
  deps: WebDeps,
  request: FastifyRequest,
  content: { title: string; body: Html } & Pick<PageShell, 'live' | 'flash'>,
  status = 200,
): FastifyReply {
  const markup = page({ ...content, session: request.webSession, assets: deps.assets });
  return reply.status(status).type('text/html; charset=utf-8').send(markup.text);
}

/** A form field as text ('' when absent or not text). */
export function field(body: unknown, name: string): string {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
}

/** Every value of a repeated form field (`name=a&name=b`). */
export function fieldList(body: unknown, name: string): string[] {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return typeof value === 'string' ? [value] : [];
}

/** A wallet path segment, safe in a URL. */
export const walletUrl = (alias: string, rest = '') => `/wallets/${encodeURIComponent(alias)}${rest}`;
