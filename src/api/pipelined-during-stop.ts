/**
 * While the server closes, Fastify marks each request it routes `Connection: close`. A connection can
 * already hold a second request behind that one (pipelined): Node would close the connection after the
 * first answer, and the second, read and routed, would never be answered. So when a request arrives behind an
 * answer not yet sent that carries the mark, that answer keeps the connection, and the close moves to the
 * newest request: the last answer the connection gets says `Connection: close`.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

const isMarkedClose = (response: ServerResponse) => String(response.getHeader('connection') ?? '').toLowerCase() === 'close';

/** Listen after Fastify's own request listener: it has routed the request (and marked it) by then. */
export function answerRequestsPipelinedDuringStop(server: Server): void {
  const newestAnswer = new WeakMap<Socket, ServerResponse>();
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket;
    const before = newestAnswer.get(socket);
    newestAnswer.set(socket, response);
    // Only requests routed while closing carry the mark before their answer is written.
    if (before && !before.headersSent && before.shouldKeepAlive && isMarkedClose(before) && isMarkedClose(response)) {
      before.setHeader('Connection', 'keep-alive');
    }
  });
}
