/**
 * How request bodies are read. Bodies are JSON only: plain text is refused instead of reaching a
 * route as a string. A request that says `Content-Type: application/json` but sends nothing (as
 * many clients do on DELETE and on POSTs without parameters) is a request without a body, not
 * malformed JSON; a route that needs a body then answers 400 from its schema.
 */
import type { FastifyInstance } from 'fastify';

export function installBodyParsing(app: FastifyInstance): void {
  app.removeContentTypeParser('text/plain');
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body.length === 0) {
      done(null, undefined);
      return;
    }
    parseJson(request, body.toString(), done);
  });
}
