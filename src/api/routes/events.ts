/**
 * The live stream (`GET /events`): server-sent events of the caller's wallets, each with `id:` its seq, so a
 * client that reconnects with `Last-Event-ID` gets every event it missed, in order.
 */
import { Type } from '@sinclair/typebox';
import { ServiceError } from '../../services/errors.js';
import { eventBodyText } from '../../services/events/types.js';
import { principalOf } from '../auth.js';
import { errorResponses } from '../schemas.js';
import type { RouteModule } from './types.js';

/** How often the stream looks for new events, and sends a comment line so proxies keep the connection. */
const POLL_MS = 500;
const KEEPALIVE_MS = 15_000;

export const eventRoutes: RouteModule = {
  name: 'events',
  register(app, { services }) {
    // Open streams end when the server closes (they would otherwise hold the close forever), and none
    // opens once it closes: a request still arriving on a kept connection is told to go elsewhere.
    const closers = new Set<() => void>();
    let closing = false;
    app.addHook('preClose', async () => {
      closing = true;
      for (const close of closers) close();
    });
    app.get(
      '/events',
      {
        // It stays open: it holds none of its user's request slots (streams have their own bound).
        config: { auth: 'bearer', longLived: true },
        schema: {
          tags: ['events'],
          summary: 'Live stream of your wallets\' events (server-sent events)',
          operationId: 'streamEvents',
          description:
            'A `text/event-stream`: each message has `id:` (send it back as `Last-Event-ID` to resume after it), `event:` (the type) and `data:` ' +
            '(the event as JSON, as webhooks get it). Without `Last-Event-ID` the stream starts with the next event. Needs `wallets:read`.',
          headers: Type.Object({ 'last-event-id': Type.Optional(Type.String({ maxLength: 32 })) }),
          response: {
            200: { description: 'The stream; it stays open.', content: { 'text/event-stream': { schema: Type.String() } } },
            ...errorResponses(400, 401, 403, 500, 503),
          },
        },
      },
      async (request, reply) => {
        if (closing) throw new ServiceError('unavailable', 'shutting_down', 'The service is shutting down; connect again');
        const principal = principalOf(request);
        const lastEventId = request.headers['last-event-id'];
        let cursor = await services.events.start(principal, typeof lastEventId === 'string' ? lastEventId : undefined);
        reply.hijack();
        const raw = reply.raw;
        // The reply is written by hand from here: the headers the hooks set (the security headers among them) go out too.
        raw.writeHead(200, { ...(reply.getHeaders() as Record<string, string>), 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive', 'x-accel-buffering': 'no' });
        raw.write(': stream open\n\n');
        let open = true;
        let lastWrite = Date.now();
        const close = () => {
          open = false;
        };
        closers.add(close);
        // The server may have begun to close while the stream started.
        if (closing) close();
        request.raw.on('close', close);
        while (open) {
          try {
            const page = await services.events.next(principal, cursor);
            for (const event of page.events) {
              raw.write(`id: ${event.seq}\nevent: ${event.type}\ndata: ${eventBodyText(event)}\n\n`);
              lastWrite = Date.now();
            }
            cursor = page.cursor;
            if (page.events.length > 0) continue;
          } catch (error) {
            // The token deleted or expired, or the store failing: the stream ends; the client reconnects.
            request.log.warn({ reqId: request.id, reason: error instanceof Error ? error.message : String(error) }, 'event stream ended');
            break;
          }
          if (Date.now() - lastWrite >= KEEPALIVE_MS) {
            raw.write(': keep-alive\n\n');
            lastWrite = Date.now();
          }
          await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        }
        closers.delete(close);
        raw.end();
      },
    );
  },
};
