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

/** How long a stream waits for events before it looks at its token again, and when it sends a comment line so proxies keep the connection. */
const IDLE_MS = 5_000;
const KEEPALIVE_MS = 15_000;
/** What a client refused for too many streams is told to wait: a stream ends only when its client closes it. */
const STREAMS_RETRY_AFTER_SECONDS = 5;

export const eventRoutes: RouteModule = {
  name: 'events',
  register(app, { services, config }) {
    // Open streams end when the server closes (they would otherwise hold the close forever), and none
    // opens once it closes: a request still arriving on a kept connection is told to go elsewhere.
    const closers = new Set<() => void>();
    let closing = false;
    // Open streams per user name, in this process: a bound of their own (they hold no request slot).
    const openStreams = new Map<string, number>();
    const maxStreams = config.limits.userEventStreams;
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
            '(the event as JSON, as webhooks get it). Without `Last-Event-ID` the stream starts with the next event. Needs `wallets:read`. ' +
            'A user may hold `user_event_streams` streams open at once on each instance (default 8); one more answers 429 `too_many_requests` until one is closed.',
          headers: Type.Object({ 'last-event-id': Type.Optional(Type.String({ maxLength: 32 })) }),
          response: {
            200: { description: 'The stream; it stays open.', content: { 'text/event-stream': { schema: Type.String() } } },
            ...errorResponses(400, 401, 403, 429, 500, 503),
          },
        },
      },
      async (request, reply) => {
        if (closing) throw new ServiceError('unavailable', 'shutting_down', 'The service is shutting down; connect again');
        const principal = principalOf(request);
        const lastEventId = request.headers['last-event-id'];
        const cursor = await services.events.start(principal, typeof lastEventId === 'string' ? lastEventId : undefined);
        const user = principal.userName;
        const open = openStreams.get(user) ?? 0;
        if (open >= maxStreams) {
          throw new ServiceError('rate_limited', 'too_many_requests', `A user may hold at most ${maxStreams} event streams open at once; close one first`, {
            retryAfterSeconds: STREAMS_RETRY_AFTER_SECONDS,
          });
        }
        openStreams.set(user, open + 1);
        const subscription = services.events.subscribe(principal, cursor);
        reply.hijack();
        const raw = reply.raw;
        // The reply is written by hand from here: the headers the hooks set (the security headers among them) go out too.
        raw.writeHead(200, { ...(reply.getHeaders() as Record<string, string>), 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive', 'x-accel-buffering': 'no' });
        raw.write(': stream open\n\n');
        let lastWrite = Date.now();
        const close = () => subscription.close();
        closers.add(close);
        // The server may have begun to close while the stream started.
        if (closing) close();
        request.raw.on('close', close);
        try {
          for (;;) {
            const events = await subscription.next(IDLE_MS);
            if (subscription.isClosed) break;
            for (const event of events) raw.write(`id: ${event.seq}\nevent: ${event.type}\ndata: ${eventBodyText(event)}\n\n`);
            if (events.length > 0) lastWrite = Date.now();
            else if (Date.now() - lastWrite >= KEEPALIVE_MS) {
              raw.write(': keep-alive\n\n');
              lastWrite = Date.now();
            }
          }
        } catch (error) {
          // The token deleted or expired, or the store failing: the stream ends; the client reconnects.
          request.log.warn({ reqId: request.id, reason: error instanceof Error ? error.message : String(error) }, 'event stream ended');
        } finally {
          subscription.close();
          closers.delete(close);
          const left = (openStreams.get(user) ?? 1) - 1;
          if (left > 0) openStreams.set(user, left);
          else openStreams.delete(user);
          raw.end();
        }
      },
    );
  },
};
