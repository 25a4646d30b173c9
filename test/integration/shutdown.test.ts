/**
 * A graceful stop behind a load balancer: requests that reach the service on connections it already
 * had are answered as always, each with `Connection: close`, and what they write is kept.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { rawConnection } from '../support/raw-http.js';
import { TEST_ADMIN_PASSWORD, basicAuth, bearer, createToken, request, startTestServer, type TestServer } from '../support/server.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A token creation, as its head and its body (to send the body in parts). */
const tokenRequest = (description: string, body = JSON.stringify({ jwt_token_description: description, jwt_token_life: '1 hours' })) => ({
  head: `POST /api/v1alpha/token HTTP/1.1\r\nHost: x\r\nAuthorization: ${basicAuth('admin', TEST_ADMIN_PASSWORD)}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
  body,
});

/**
 * Resolves once the server has read the head of its next request: 'closing' if the stop had begun by
 * then (Fastify marks such a request `Connection: close` before anything else sees it), 'open' if not.
 */
const requestReceived = (server: TestServer) =>
  new Promise<'open' | 'closing'>((resolve) =>
    server.running.server.server.once('request', (_request: IncomingMessage, response: ServerResponse) =>
      resolve(String(response.getHeader('connection')) === 'close' ? 'closing' : 'open'),
    ),
  );

const servers: TestServer[] = [];
// In reverse: the first server owns the data folder the restarted one reuses.
afterEach(async () => {
  for (const server of servers.splice(0).reverse()) await server.dispose();
});

// Both ways the server comes to listen: created by Fastify, and taken over from the early listener (`wcs serve`).
describe.each([
  ['', false],
  [' (server taken over from the early listener)', true],
])('requests during a graceful stop%s', (_, earlyListener) => {
  it('answers a request pipelined behind an in-flight one as usual, with Connection: close, and keeps what it wrote', async () => {
    const server = await startTestServer({ earlyListener });
    servers.push(server);
    const { port } = new URL(server.url);
    const inFlight = tokenRequest('in flight');
    const pipelined = tokenRequest('during the stop');
    const connection = rawConnection(Number(port));
    const received = requestReceived(server);
    connection.send(inFlight.head + inFlight.body.slice(0, 10));
    // The first request is in flight (its head read, half its body here): the stop waits for it.
    expect(await received).toBe('open');
    const stopped = server.stop();
    // Fastify marks itself closing before it closes the listening socket.
    while (server.running.server.server.listening) await pause(10);
    connection.send(inFlight.body.slice(10) + pipelined.head + pipelined.body);
    const [answers] = await Promise.all([connection.answers, stopped]);

    const [first, second, ...more] = answers;
    expect(first?.status, JSON.stringify(answers)).toBe(201);
    expect(second?.status, JSON.stringify(answers)).toBe(201);
    expect(second?.headers.connection).toBe('close');
    expect(second?.headers['x-content-type-options']).toBe('nosniff');
    expect(more).toEqual([]);
    // Stopped: nothing listens any more.
    await expect(fetch(`${server.url}/healthz/live`)).rejects.toThrow();

    // Both tokens were stored before the store closed.
    const restarted = await startTestServer({ dataFolder: server.dataFolder });
    servers.push(restarted);
    for (const answer of [first, second]) {
      const { jwt_token: token } = JSON.parse(answer?.body ?? '{}') as { jwt_token: string };
      expect((await request(`${restarted.api}/liveness`, { headers: { authorization: bearer(token) } })).status).toBe(200);
    }
  });

  it('answers both pipelined requests when the stop begins before the first one is read, only the last with Connection: close', async () => {
    const server = await startTestServer({ earlyListener });
    servers.push(server);
    const rawServer = server.running.server.server;
    const accepted = new Promise((resolve) => rawServer.once('connection', resolve));
    const connection = rawConnection(Number(new URL(server.url).port));
    await accepted;
    const first = tokenRequest('read while stopping');
    const pipelined = tokenRequest('behind it');
    const received = requestReceived(server);
    connection.send(first.head + first.body.slice(0, 10));
    // Begun in the same turn as the write: the server reads the first head only once it is closing.
    const stopped = server.stop();
    // Had the stop closed the connection before reading it, no request would come: say so rather than wait.
    expect(await Promise.race([received, connection.answers.then(() => 'connection closed unread')])).toBe('closing');
    while (rawServer.listening) await pause(10);
    connection.send(first.body.slice(10) + pipelined.head + pipelined.body);
    const [answers] = await Promise.all([connection.answers, stopped]);

    const [firstAnswer, secondAnswer, ...more] = answers;
    expect(firstAnswer?.status, JSON.stringify(answers)).toBe(201);
    expect(firstAnswer?.headers.connection).toBe('keep-alive');
    expect(secondAnswer?.status, JSON.stringify(answers)).toBe(201);
    expect(secondAnswer?.headers.connection).toBe('close');
    expect(more).toEqual([]);
    const restarted = await startTestServer({ dataFolder: server.dataFolder });
    servers.push(restarted);
    for (const answer of [firstAnswer, secondAnswer]) {
      const { jwt_token: token } = JSON.parse(answer?.body ?? '{}') as { jwt_token: string };
      expect((await request(`${restarted.api}/liveness`, { headers: { authorization: bearer(token) } })).status).toBe(200);
    }
  });

  it('ends open event streams and opens none while it closes, so the stop never waits on a stream', async () => {
    const server = await startTestServer({ earlyListener });
    servers.push(server);
    const { jwt_token: token } = await createToken(server, 'admin', TEST_ADMIN_PASSWORD, 'events');
    const stream = await fetch(`${server.api}/events`, { headers: { authorization: bearer(token) } });
    expect(stream.status).toBe(200);
    // The server ends the open stream; a cut connection would be 'broken'.
    const streamEnded = stream.text().then(() => 'ended', () => 'broken');

    const inFlight = tokenRequest('in flight');
    const connection = rawConnection(Number(new URL(server.url).port));
    const received = requestReceived(server);
    connection.send(inFlight.head + inFlight.body.slice(0, 10));
    expect(await received).toBe('open');
    const stopped = server.stop();
    while (server.running.server.server.listening) await pause(10);
    connection.send(`${inFlight.body.slice(10)}GET /api/v1alpha/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n\r\n`);
    const [answers] = await Promise.all([connection.answers, stopped]);

    expect(await streamEnded).toBe('ended');
    const [first, refused, ...more] = answers;
    expect(first?.status, JSON.stringify(answers)).toBe(201);
    expect(refused?.status, JSON.stringify(answers)).toBe(503);
    expect(refused?.headers.connection).toBe('close');
    expect(JSON.parse(refused?.body ?? '')).toEqual({ message: 'The service is shutting down; connect again', code: 'shutting_down' });
    expect(more).toEqual([]);
  });
});
