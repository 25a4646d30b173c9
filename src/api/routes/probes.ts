/** Liveness and readiness under /api (Bearer, with details) and /healthz (no auth, status only). */
import { principalOf } from '../auth.js';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services/index.js';
import { errorResponses, StringEnum, success } from '../schemas.js';
import type { RouteModule } from './types.js';

const Checks = Type.Record(Type.String(), StringEnum(['ok', 'failing']), {
  description: 'Each readiness check by name (`store`, and `chain` once a chain backend is configured).',
});
const Ready = Type.Object({ message: Type.Literal('ready'), checks: Checks });
const NotReady = Type.Object({
  message: Type.Literal('not ready'),
  code: Type.Literal('not_ready'),
  checks: Checks,
  reasons: Type.Optional(
    Type.Record(Type.String(), Type.String(), {
      description: 'Why a failing check fails, where that says nothing internal (the `chain` check: e.g. the node follows another network than the service).',
    }),
  ),
});

export const probeRoutes: RouteModule = {
  name: 'probes',
  register(app, { services }) {
    const tags = ['health'];
    app.get(
      '/liveness',
      {
        config: { auth: 'bearer' },
        schema: { tags, summary: 'Liveness', operationId: 'getLiveness', response: { 200: success('The process serves requests.', Type.Object({ message: Type.Literal('alive') })), ...errorResponses(401, 500) } },
      },
      async () => ({ message: 'alive' as const }),
    );
    const readiness = async (request: import('fastify').FastifyRequest, reply: import('fastify').FastifyReply) => {
      const result = await services.health.readinessFor(principalOf(request));
      if (result.ready) return reply.send({ message: 'ready', checks: result.checks });
      const reasons = Object.keys(result.reasons).length > 0 ? { reasons: result.reasons } : {};
      return reply.status(503).send({ message: 'not ready', code: 'not_ready', checks: result.checks, ...reasons });
    };
    const readinessSchema = { tags, summary: 'Readiness', operationId: 'getReadiness', response: { 200: success('Ready: the store and the chain backend answer.', Ready), 503: success('Not ready: the failing check is named.', NotReady), ...errorResponses(401, 403, 500) } };
    app.get('/readiness', { config: { auth: 'bearer' }, schema: readinessSchema }, readiness);
    app.get('/readyness', { config: { auth: 'bearer' }, schema: { ...readinessSchema, summary: 'Readiness (alias)', operationId: 'getReadynessAlias' } }, readiness);
  },
};

const Status = Type.Object({ status: Type.Literal('ok') });
const Unavailable = Type.Object({ status: Type.Literal('unavailable') });

/** Orchestrator probes outside /api: no authentication, no details. Always served. */
export function registerHealthz(app: FastifyInstance, services: Services): void {
  const tags = ['health'];
  app.get('/healthz/live', { schema: { tags, summary: 'Process is up (no auth)', operationId: 'healthzLive', security: [], response: { 200: success('The process serves requests.', Status), ...errorResponses(400) } } }, async () => ({ status: 'ok' as const }));
  app.get(
    '/healthz/ready',
    { schema: { tags, summary: 'Dependencies answer (no auth)', operationId: 'healthzReady', security: [], response: { 200: success('Ready.', Status), 503: success('A dependency does not answer.', Unavailable), ...errorResponses(400) } } },
    async (_request, reply) => {
      const result = await services.health.readiness();
      return result.ready ? reply.send({ status: 'ok' }) : reply.status(503).send({ status: 'unavailable' });
    },
  );
}
