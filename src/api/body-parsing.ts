/**
 * How request bodies are read. Bodies are JSON only: plain text is refused instead of reaching a
 * route as a string. A request that says `Content-Type: application/json` but sends nothing (as
 * many clients do on DELETE and on POSTs without parameters) is a request without a body, not
 * malformed JSON; a route that needs a body then answers 400 from its schema. Bodies are read as
 * UTF-8 (RFC 8259): a body declared in another charset is refused, not stored with its letters mangled.
 */
import type { FastifyInstance } from 'fastify';
import { errorResponses } from './schemas.js';

/** The error handler's code for a JSON body declared in a charset other than UTF-8 (415). */
export const UNSUPPORTED_CHARSET = 'WCS_UNSUPPORTED_CHARSET';

const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)/i;

function isUtf8(contentType: string | undefined): boolean {
  const charset = CHARSET.exec(contentType ?? '')?.[1]?.toLowerCase();
  return charset === undefined || charset === 'utf-8' || charset === 'utf8';
}

/**
 * Install before the routes (and before the OpenAPI generator): every route that takes a body may
 * answer 413 (too large) and 415 (not JSON, or not UTF-8), and says so in its responses.
 */
export function installBodyParsing(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const response = route.schema?.response as Record<string, unknown> | undefined;
    if (route.schema?.body === undefined || response === undefined) return;
    const missing = [413, 415].filter((status) => !(status in response));
    if (missing.length > 0) route.schema = { ...route.schema, response: { ...response, ...errorResponses(...missing) } };
  });
  app.removeContentTypeParser('text/plain');
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body.length === 0) {
      done(null, undefined);
      return;
    }
    if (!isUtf8(request.headers['content-type'])) {
      done(Object.assign(new Error('JSON body in another charset than UTF-8'), { code: UNSUPPORTED_CHARSET }), undefined);
      return;
    }
    parseJson(request, body.toString(), done);
  });
}
