/**
 * The one error handler: ServiceErrors map to statuses by kind; framework errors (bad JSON,
 * body too large, validation) to their 4xx; anything else is a 500 that says nothing internal.
 * Also the not-found handler, which answers 405 with `Allow` for a known path and another method
 * (and 404 where a route of the request's method found nothing, as the static files' do).
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { UNSUPPORTED_CHARSET } from './body-parsing.js';
import { ServiceError, type FieldError, type ServiceErrorKind } from '../services/errors.js';
import type { RouteTable } from './route-table.js';
import type { ValidationIssue } from './validation.js';

export const STATUS_OF_KIND: Record<ServiceErrorKind, number> = {
  invalid_input: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  unprocessable: 422,
  rate_limited: 429,
  unavailable: 503,
};

export interface ErrorBody {
  message: string;
  code: string;
  errors?: FieldError[];
  permission?: string;
}

function send(reply: FastifyReply, status: number, body: ErrorBody): FastifyReply {
  return reply.status(status).type('application/json; charset=utf-8').send(body);
}

function sendServiceError(reply: FastifyReply, error: ServiceError): FastifyReply {
  const status = STATUS_OF_KIND[error.kind];
  const { scheme, retryAfterSeconds, errors, permission } = error.details;
  if (status === 401) reply.header('WWW-Authenticate', scheme === 'Basic' ? 'Basic realm="api"' : 'Bearer');
  if (status === 429 && retryAfterSeconds !== undefined) reply.header('Retry-After', String(retryAfterSeconds));
  return send(reply, status, { message: error.message, code: error.code, ...(errors ? { errors } : {}), ...(permission ? { permission } : {}) });
}

function validationErrors(issues: readonly ValidationIssue[], context: string | undefined): FieldError[] {
  // Paths are JSON pointers into the body; for path/query parameters the part is prefixed.
  const prefix = context === 'body' || context === undefined ? '' : `/${context}`;
  return issues.map((i) => ({ path: `${prefix}${i.instancePath}`, message: i.message }));
}

/**
 * Errors the router raises before any route runs (`frameworkErrors` option): a malformed URL is a
 * 400; a path parameter over the length limit cannot name anything that exists, so it is a 404.
 */
export function frameworkErrorHandler(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') return send(reply, 404, { message: 'Not found', code: 'not_found' });
  return send(reply, 400, { message: 'Bad request', code: 'bad_request' });
}

/** A body limit as people read it: `1 MiB`, `32 MiB`. */
const mebibytes = (bytes: number): string => `${Number((bytes / (1024 * 1024)).toFixed(2))} MiB`;

export function installErrorHandling(app: FastifyInstance, routes: RouteTable): void {
  app.setErrorHandler((error: FastifyError & { validation?: ValidationIssue[]; validationContext?: string }, request, reply) => {
    if (error instanceof ServiceError) return sendServiceError(reply, error);
    if (error.validation) {
      const errors = validationErrors(error.validation, error.validationContext);
      const first = errors[0];
      const message = first ? `Invalid request: ${first.path || '(body)'} ${first.message}` : 'Invalid request';
      return send(reply, 400, { message, code: 'invalid_request', errors });
    }
    switch (error.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return send(reply, 413, { message: `Request body too large (limit ${mebibytes(request.routeOptions.bodyLimit)})`, code: 'payload_too_large' });
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return send(reply, 415, { message: 'Request body must be JSON (Content-Type: application/json)', code: 'unsupported_media_type' });
      case UNSUPPORTED_CHARSET:
        return send(reply, 415, { message: 'Request body must be JSON in UTF-8 (charset=utf-8, or no charset)', code: 'unsupported_media_type' });
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
        return send(reply, 400, { message: 'Request body is not valid JSON', code: 'invalid_json' });
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return send(reply, 400, { message: 'Request body is empty; JSON expected', code: 'invalid_json' });
    }
    const status = error.statusCode ?? 500;
    if (status === 400 && error.name === 'SyntaxError') {
      return send(reply, 400, { message: 'Request body is not valid JSON', code: 'invalid_json' });
    }
    if (status >= 400 && status < 500) {
      // Other client errors of the framework (bad URL, bad content length, ...): say what, not how.
      return send(reply, status, { message: 'Bad request', code: 'bad_request' });
    }
    request.log.error({ reqId: request.id, err: error }, 'unhandled error');
    return send(reply, 500, { message: 'Internal server error', code: 'internal_error' });
  });

  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const allowed = routes.methodsFor(request.url);
    // A route of this method that found nothing (a missing static file) is a 404 like any other.
    if (allowed.length > 0 && !allowed.includes(request.method)) {
      reply.header('Allow', allowed.join(', '));
      return send(reply, 405, { message: 'Method not allowed', code: 'method_not_allowed' });
    }
    return send(reply, 404, { message: 'Not found', code: 'not_found' });
  });
}
