/**
 * The web interface at `/`: server-rendered pages over the same services as the API, a session
 * cookie kept in the store, a form token on every state-changing request, and the service's own
 * stylesheet and script under a strict Content-Security-Policy. Registered only while `web_active`.
 */
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import type { Services } from '../services/index.js';
import { ServiceError } from '../services/errors.js';
import { STATUS_OF_KIND } from '../api/errors.js';
import { loadAssets, type WebAssets } from './assets.js';
import { FAVICON_SVG } from './favicon.js';
import type { WebDeps } from './context.js';
import { html } from './html.js';
import { page } from './layout.js';
import { checkFormToken, checkSameOrigin, clearSessionCookies, sessionCookieOf } from './session.js';
import { registerAuthPages } from './pages/auth.js';
import { registerWalletListPages } from './pages/wallets.js';
import { registerWalletPages } from './pages/wallet.js';
import { registerWalletFilePages } from './pages/wallet-files.js';
import { registerSendPages } from './pages/send.js';
import { registerPsbtPages } from './pages/psbt.js';
import { registerAdminPages } from './pages/admin.js';

/** Pages load scripts, styles and images from this service only; nothing may frame them. */
export const WEB_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; media-src 'self' blob:; connect-src 'self'; " +
  "form-action 'self'; base-uri 'none'; frame-ancestors 'none'";


/** Paths a visitor without a session may open. */
const PUBLIC_PATHS = new Set(['/sign-in']);

export async function registerWebInterface(app: FastifyInstance, options: { services: Services; config: Config; assets?: WebAssets }): Promise<void> {
  let assets: WebAssets;
  try {
    assets = options.assets ?? loadAssets();
  } catch (error) {
    // A source checkout that was never built: the API still serves; the interface says what is missing.
    const message = (error as Error).message;
    app.log.error({ err: error }, 'web interface not available');
    for (const path of ['/', '/sign-in']) {
      app.get(path, async (_request, reply) => reply.status(503).type('text/plain; charset=utf-8').send(`${message}\n`));
    }
    return;
  }
  const deps: WebDeps = { services: options.services, config: options.config, assets };
  const currentAssetUrls = new Set(Object.values(assets.urls));
  await app.register(async (scope) => {
    // Pages are not part of the API description.
    scope.addHook('onRoute', (route) => {
      route.schema = { ...route.schema, hide: true };
    });
    await scope.register(cookie);
    await scope.register(formbody, { bodyLimit: 2 * 1024 * 1024 });
    await scope.register(fastifyStatic, { root: deps.assets.folder, prefix: '/assets/', decorateReply: false, index: false, cacheControl: false });
    scope.decorateRequest('webSession', undefined);

    scope.addHook('onSend', async (request, reply, payload) => {
      reply.header('Content-Security-Policy', WEB_CSP);
      // With no-referrer, browsers send `Origin: null` on form posts; same-origin keeps the origin checkable and leaks nothing to other sites.
      reply.header('Referrer-Policy', 'same-origin');
      // Only the current version of an asset may be kept for good. An error, an asset without its version,
      // or another version (an instance of another release behind the same load balancer answered) stays
      // no-store, so a browser never keeps the wrong file under a version's URL.
      if (currentAssetUrls.has(request.url) && reply.statusCode < 400) reply.header('Cache-Control', 'public, max-age=31536000, immutable');
      return payload;
    });

    scope.addHook('preHandler', async (request, reply) => {
      if (request.url.startsWith('/assets/') || request.url === '/favicon.ico') return;
      const path = request.url.split('?')[0]!;
      if (request.method === 'POST') checkSameOrigin(request);
      const sessionId = sessionCookieOf(request);
      if (sessionId === 'ambiguous') clearSessionCookies(request, reply);
      request.webSession = sessionId === 'ambiguous' ? undefined : await deps.services.webSessions.resolve(sessionId);
      if (!request.webSession) {
        if (PUBLIC_PATHS.has(path)) return;
        if (path.endsWith('/live')) throw new ServiceError('unauthenticated', 'unauthenticated', 'Sign in again');
        return reply.redirect(`/sign-in?next=${encodeURIComponent(request.method === 'GET' ? request.url : '/')}`, 303);
      }
      if (request.method === 'POST' && !PUBLIC_PATHS.has(path)) checkFormToken(request, request.webSession);
    });

    scope.setErrorHandler((error: Error, request: FastifyRequest, reply: FastifyReply) => {
      if (!(error instanceof ServiceError)) {
        const status = (error as { statusCode?: number }).statusCode ?? 500;
        if (status >= 500) request.log.error({ reqId: request.id, err: error }, 'unhandled error');
        return renderError(reply, deps, request, status >= 400 && status < 500 ? status : 500, status >= 400 && status < 500 ? 'The request could not be read.' : 'Something went wrong on the server.');
      }
      const status = STATUS_OF_KIND[error.kind];
      if (request.url.split('?')[0]!.endsWith('/live')) return reply.status(status).type('application/json; charset=utf-8').send({ message: error.message, code: error.code });
      return renderError(reply, deps, request, status, error.message);
    });

    scope.get('/favicon.ico', async (_request, reply) => reply.type('image/svg+xml').header('Cache-Control', 'public, max-age=86400').send(FAVICON_SVG));
    registerAuthPages(scope, deps);
    registerWalletListPages(scope, deps);
    registerWalletPages(scope, deps);
    registerWalletFilePages(scope, deps);
    registerSendPages(scope, deps);
    registerPsbtPages(scope, deps);
    registerAdminPages(scope, deps);
  });
}

function renderError(reply: FastifyReply, deps: WebDeps, request: FastifyRequest, status: number, message: string): FastifyReply {
  const body = html`<h1>${status === 404 ? 'Not found' : status === 403 ? 'Refused' : 'Could not do that'}</h1>
<p class="error-text">${message}</p>
<p><a href="/">Back to the wallets</a></p>`;
  return reply.status(status).type('text/html; charset=utf-8').send(page({ title: 'Error', session: request.webSession, assets: deps.assets, body }).text);
}
