/**
 * The API description: the OpenAPI 3.1 document at /docs/openapi.json (generated from the route
 * schemas) and the browsable page at /docs/api, titled and headed with the service's name.
 */
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

export const SERVICE_TITLE = 'Wallet coordination service';
export const API_TITLE = `${SERVICE_TITLE} REST API`;

/** The header of the docs page: the service's name, drawn as text (no external font or image). */
const LOGO_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="360" height="40" viewBox="0 0 360 40">
<text x="0" y="27" font-family="sans-serif" font-size="22" font-weight="bold" fill="#ffffff">${SERVICE_TITLE}</text>
</svg>`;

const ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32" viewBox="0 0 32 32">
<rect width="32" height="32" rx="6" fill="#f7931a"/><text x="16" y="22" text-anchor="middle" font-family="sans-serif" font-size="14" font-weight="bold" fill="#ffffff">wcs</text>
</svg>`;

/** Registers the OpenAPI generator; call before the routes. */
export async function installOpenApi(app: FastifyInstance, version: string): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: API_TITLE,
        version,
        description:
          'All paths below /api; the version segment is v1alpha. While the service starts, before its routes are ready, every ' +
          'path answers 503 `{"message": "The service is starting; try again shortly", "code": "starting"}` with `Retry-After` ' +
          '(`/healthz/live` answers 200 and `/healthz/ready` 503 meanwhile).',
        license: { name: 'MIT', identifier: 'MIT' },
      },
      servers: [{ url: '/', description: 'This service: paths are relative to the address it answers on.' }],
      components: {
        securitySchemes: {
          basicAuth: { type: 'http', scheme: 'basic', description: 'User name and password; token endpoints only.' },
          bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'A jwt_token from POST /api/v1alpha/token.' },
        },
      },
    },
  });
}

/** Serves the document and the page; call after the routes. */
export async function installDocsPage(app: FastifyInstance): Promise<void> {
  await app.register(fastifySwaggerUi, {
    routePrefix: '/docs/api',
    logo: { type: 'image/svg+xml', content: Buffer.from(LOGO_SVG), href: '/docs/api', target: '_self' },
    theme: {
      title: `${API_TITLE} documentation`,
      favicon: [{ filename: 'favicon.svg', rel: 'icon', sizes: 'any', type: 'image/svg+xml', content: Buffer.from(ICON_SVG) }],
    },
  });
  app.get('/docs/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
