/**
 * Response headers a security scanner expects, on every answer (errors and 404s included):
 * no MIME sniffing, no framing, no referrer, no caching of API answers (they carry tokens and
 * wallet data). The documentation page gets a Content-Security-Policy it works under; JSON
 * answers get the strictest one, since they are never rendered as a page.
 */
import type { FastifyInstance } from 'fastify';

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

export function installSecurityHeaders(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('X-Content-Type-Options', 'nosniff');
    reply.header('X-Frame-Options', 'DENY');
    reply.header('Referrer-Policy', 'no-referrer');
    reply.removeHeader('X-Powered-By');
    const isDocsPage = request.url === DOCS_PAGE_PREFIX || request.url.startsWith(`${DOCS_PAGE_PREFIX}/`) || request.url.startsWith(`${DOCS_PAGE_PREFIX}?`);
    reply.header('Content-Security-Policy', isDocsPage ? DOCS_CSP : API_CSP);
    // The docs page's static files may be cached; every other answer is per request.
    if (!isDocsPage || !reply.hasHeader('Cache-Control')) reply.header('Cache-Control', 'no-store');
    return payload;
  });
}
