/** CORS for the configured origins only (off when none is configured). */
import type { FastifyInstance } from 'fastify';

export function installCors(app: FastifyInstance, origins: readonly string[]): void {
  if (origins.length === 0) return;
  const allowed = new Set(origins.map((o) => o.toLowerCase()));
  app.addHook('onRequest', async (request, reply) => {
    const origin = request.headers.origin;
    if (typeof origin !== 'string' || !allowed.has(origin.toLowerCase())) return;
    reply.header('Access-Control-Allow-Origin', origin);
    reply.header('Vary', 'Origin');
    if (request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined) {
      reply
        .header('Access-Control-Allow-Methods', 'GET, POST, PUT, PATCH, DELETE')
        .header('Access-Control-Allow-Headers', 'Authorization, Content-Type')
        .header('Access-Control-Max-Age', '600')
        .status(204)
        .send();
    }
  });
}
