/**
 * Builds the HTTP server: error mapping, probes, and, only while the API is active, the /api
 * routes (each behind its declared authentication) and the documentation under /docs.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Services } from '../services/index.js';
import { enforceAuthentication } from './auth.js';
import { installBodyParsing } from './body-parsing.js';
import { installCors } from './cors.js';
import { installDocsPage, installOpenApi } from './docs.js';
import { httpServerOptions, type EarlyListener } from './early-listener.js';
import { frameworkErrorHandler, installErrorHandling } from './errors.js';
import { createRequestLog } from './logging.js';
import { answerRequestsPipelinedDuringStop } from './pipelined-during-stop.js';
import { RouteTable } from './route-table.js';
import { answerClientErrors, answerFailedExpectations, installSecurityHeaders, withSecurityHeaders, type Refusal } from './security-headers.js';
import { installTextGuard } from './text-guard.js';
import { UserRequestGate } from './user-request-gate.js';
import { UserRequestLimiter, installUserRateLimit } from './user-rate-limit.js';
import { API_ROUTE_MODULES, type RouteModule } from './routes/index.js';
import { registerHealthz } from './routes/probes.js';
import { typeboxValidatorCompiler } from './validation.js';
import { registerWebInterface } from '../web/index.js';

export const API_PREFIX = '/api/v1alpha';
export const BODY_LIMIT_BYTES = 1024 * 1024;

export interface ServerOptions {
  config: Config;
  services: Services;
  logger: Logger;
  version: string;
  /** Route modules beyond the built-in ones (e.g. wallets), registered under /api/v1alpha. */
  routeModules?: readonly RouteModule[];
  /** The server already listening on the port (early-listener.ts): Fastify takes it over instead of creating one. */
  earlyListener?: EarlyListener;
}

const pathOf = (url: string) => {
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
};

export async function buildServer(options: ServerOptions): Promise<FastifyInstance> {
  const { config, services } = options;
  const logRefusal = (refusal: Refusal) => options.logger.info(refusal, 'request refused');
  const app = Fastify({
    // pino's own Logger type and Fastify's logger type differ only in generics.
    loggerInstance: options.logger as unknown as FastifyBaseLogger,
    // Fastify's two lines per request are replaced by the one line of the onResponse hook.
    logController: new LogController({ disableRequestLogging: true }),
    // No child logger per request: creating one (with its redacted bindings) cost more than the
    // request line; the few lines logged for a request carry its id themselves.
    childLoggerFactory: (logger) => logger,
    bodyLimit: BODY_LIMIT_BYTES,
    // Only the configured proxies' X-Forwarded-* headers count; any other client could forge them.
    trustProxy: config.trustProxy.length > 0 ? config.trustProxy : false,
    routerOptions: { ignoreTrailingSlash: true },
    // While the server closes, a request on a connection it already had is answered as any other (with
    // `Connection: close`), before the store closes. Fastify's own 503 would bypass the error handler: another
    // body shape, no security headers, and an error for a request this instance can still serve.
    return503OnClosing: false,
    // A request (headers and body) that takes longer to arrive is answered 408 and its connection closed.
    requestTimeout: config.limits.requestTimeoutMs,
    http: httpServerOptions(config),
    // The server that listens already while the service starts (`wcs serve`) carries the same settings.
    ...(options.earlyListener ? { serverFactory: options.earlyListener.serverFactory } : {}),
    frameworkErrors: withSecurityHeaders(frameworkErrorHandler),
    clientErrorHandler: answerClientErrors(logRefusal),
  });
  app.server.on('checkExpectation', answerFailedExpectations(logRefusal));
  answerRequestsPipelinedDuringStop(app.server);
  app.setValidatorCompiler(typeboxValidatorCompiler);
  installBodyParsing(app);
  const routes = new RouteTable();
  routes.attach(app);
  installErrorHandling(app, routes);
  installSecurityHeaders(app);
  installCors(app, config.corsOrigins);
  installTextGuard(app);
  const logRequest = createRequestLog(options.logger);
  // Callback style: it runs on every request, and an async hook costs a promise each.
  app.addHook('onResponse', (request, reply, done) => {
    logRequest({ reqId: request.id, method: request.method, path: pathOf(request.url), status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10, ip: request.ip });
    done();
  });

  if (config.apiActive) {
    enforceAuthentication(app, '/api/', services);
    const { userRequestsInFlight, userRequestQueue, userRequestQueueTimeoutMs, userRequestRate, userRequestBurst } = config.limits;
    installUserRateLimit(
      app,
      new UserRequestGate({ inFlight: userRequestsInFlight, queue: userRequestQueue, maxWaitMs: userRequestQueueTimeoutMs }),
      new UserRequestLimiter(userRequestRate, userRequestBurst),
    );
    await installOpenApi(app, options.version);
    const context = { services, config };
    const modules = [...API_ROUTE_MODULES, ...(options.routeModules ?? [])];
    await app.register(
      async (scope) => {
        for (const module of modules) await module.register(scope, context);
      },
      { prefix: API_PREFIX },
    );
    await installDocsPage(app);
  }
  registerHealthz(app, services);
  if (config.webActive) await registerWebInterface(app, { services, config });
  return app;
}
