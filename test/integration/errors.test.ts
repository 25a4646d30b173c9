/** Error statuses and bodies: activation, 404, 405, 400, 413, 417, 431, 500; trailing slashes. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteModule } from '../../src/api/routes/index.js';
import { rawConnection } from '../support/raw-http.js';
import { TEST_ADMIN_PASSWORD, basicAuth, bearer, createToken, request, startTestServer, type TestServer } from '../support/server.js';

const NOT_FOUND = { message: 'Not found', code: 'not_found' };

/** A route whose handler fails like a bug would, with internals in the error. */
const failingRoute: RouteModule = {
  name: 'failing',
  register(app) {
    app.get('/explode', { config: { auth: 'bearer' } }, async () => {
      throw new Error('SQLITE_ERROR: no such table: secrets at /srv/wcs/src/store/x.ts:12');
    });
  },
};

let server: TestServer;
let token: string;
beforeAll(async () => {
  server = await startTestServer({ env: { SERVICE_RATE_LIMIT: '1000' }, routeModules: [failingRoute] });
  token = (await createToken(server, 'admin', TEST_ADMIN_PASSWORD, 'errors')).jwt_token;
});
afterAll(() => server.dispose());

describe('API activation', () => {
  it.each([[undefined], ['False'], ['no'], ['0']])('SERVICE_API_ACTIVE=%s: every /api path and the docs are 404 like an unknown path', async (value) => {
    const off = await startTestServer({ env: value === undefined ? {} : { SERVICE_API_ACTIVE: value }, configure: (c) => (value === undefined ? { ...c, apiActive: false } : c) });
    try {
      const admin = basicAuth('admin', TEST_ADMIN_PASSWORD);
      for (const [method, path] of [['GET', '/api/v1alpha/token'], ['POST', '/api/v1alpha/token'], ['GET', '/api/v1alpha/service'], ['GET', '/api/v1alpha/liveness'], ['GET', '/api/v1alpha/readiness'], ['DELETE', '/api/v1alpha/token/x'], ['GET', '/api/nothing'], ['GET', '/docs/openapi.json'], ['GET', '/docs/api']] as const) {
        const response = await request(`${off.url}${path}`, { method, headers: { authorization: admin } });
        expect(response.status, `${method} ${path}`).toBe(404);
        expect(response.body).toEqual(NOT_FOUND);
        expect(response.headers.get('www-authenticate')).toBeNull();
      }
      // The orchestrator probes stay available.
      expect((await request(`${off.url}/healthz/live`)).status).toBe(200);
    } finally {
      await off.dispose();
    }
  });

  it.each([['true'], ['1'], ['yes'], ['True']])('SERVICE_API_ACTIVE=%s serves the API', async (value) => {
    const on = await startTestServer({ env: { SERVICE_API_ACTIVE: value } });
    try {
      expect((await request(`${on.api}/token`, { headers: { authorization: basicAuth('admin', TEST_ADMIN_PASSWORD) } })).status).toBe(200);
    } finally {
      await on.dispose();
    }
  });
});

describe('unknown paths and methods', () => {
  it('answers 404 for unknown paths, inside and outside /api', async () => {
    // `/` is the web interface (test/integration/web/).
    // The docs' static files: a route of this method that finds nothing is a 404 too, not a 405.
    for (const path of ['/api/v1alpha/nothing', '/api/v2/token', '/nothing', '/api', '/docs/api/static/nothing.js']) {
      const response = await request(`${server.url}${path}`, { headers: { authorization: bearer(token) } });
      expect(response.status, path).toBe(404);
      expect(response.body).toEqual(NOT_FOUND);
    }
  });

  it('answers 404 for an over-long id and 400 for a malformed URL, in the same error shape', async () => {
    const long = await request(`${server.api}/token/${'a'.repeat(150)}`, { headers: { authorization: basicAuth('admin', TEST_ADMIN_PASSWORD) } });
    expect(long.status).toBe(404);
    expect(long.body).toEqual(NOT_FOUND);
    const bad = await request(`${server.api}/token/%E0%A4%A`, { headers: { authorization: basicAuth('admin', TEST_ADMIN_PASSWORD) } });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ message: 'Bad request', code: 'bad_request' });
  });

  it('answers 405 with Allow for a known path and another method', async () => {
    const cases = [
      ['PUT', '/api/v1alpha/token', 'GET, HEAD, POST'],
      ['PATCH', '/api/v1alpha/token/abc', 'DELETE, GET, HEAD'],
      ['POST', '/api/v1alpha/service', 'GET, HEAD'],
      ['DELETE', '/api/v1alpha/liveness/', 'GET, HEAD'],
      ['POST', '/healthz/ready', 'GET, HEAD'],
    ] as const;
    for (const [method, path, allow] of cases) {
      const response = await request(`${server.url}${path}`, { method });
      expect(response.status, `${method} ${path}`).toBe(405);
      expect(response.headers.get('allow')).toBe(allow);
      expect(response.body).toEqual({ message: 'Method not allowed', code: 'method_not_allowed' });
    }
  });
});

// Both ways the server comes to listen: created by Fastify, and taken over from the early listener (`wcs serve`).
describe.each([
  ['', false],
  [' (server taken over from the early listener)', true],
])('requests Node answers before the routes%s', (_, earlyListener) => {
  let target: TestServer;
  let targetToken: string;
  beforeAll(async () => {
    if (earlyListener) {
      target = await startTestServer({ env: { SERVICE_RATE_LIMIT: '1000' }, earlyListener });
      targetToken = (await createToken(target, 'admin', TEST_ADMIN_PASSWORD, 'errors')).jwt_token;
    } else {
      target = server;
      targetToken = token;
    }
  });
  afterAll(async () => {
    if (earlyListener) await target.dispose();
  });

  const SHAPE_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'x-content-type-options': 'nosniff', 'cache-control': 'no-store' };
  const port = () => Number(new URL(target.url).port);
  const refusals = () => target.logs.map((line) => JSON.parse(line) as { msg?: string }).filter((line) => line.msg === 'request refused');
  const exchange = async (text: string) => {
    const connection = rawConnection(port());
    connection.send(text);
    return connection.answers;
  };

  it('answers an HTTP/1.1 request without Host 400 in the common error shape, and creates nothing', async () => {
    const body = JSON.stringify({ jwt_token_description: 'no host', jwt_token_life: '1 hours' });
    const [answer, ...more] = await exchange(
      `POST /api/v1alpha/token HTTP/1.1\r\nAuthorization: ${basicAuth('admin', TEST_ADMIN_PASSWORD)}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    expect(answer?.status).toBe(400);
    expect(answer?.headers).toMatchObject(SHAPE_HEADERS);
    expect(JSON.parse(answer?.body ?? '')).toEqual({ message: 'Bad request: HTTP/1.1 requires a Host header', code: 'bad_request' });
    expect(more).toEqual([]);
    const tokens = await request(`${target.api}/token`, { headers: { authorization: basicAuth('admin', TEST_ADMIN_PASSWORD) } });
    expect(JSON.stringify(tokens.body)).not.toContain('no host');
    // HTTP/1.0 has no Host requirement.
    const [old] = await exchange('GET /healthz/live HTTP/1.0\r\n\r\n');
    expect(old).toMatchObject({ status: 200, body: '{"status":"ok"}' });
  });

  it('refuses the target * but for OPTIONS, which finds no route: never the page at /', async () => {
    for (const method of ['GET', 'HEAD', 'POST']) {
      const [answer] = await exchange(`${method} * HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
      expect(answer?.status, method).toBe(400);
      expect(answer?.headers.location, method).toBeUndefined();
    }
    const [options] = await exchange('OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(options?.status).toBe(404);
    expect(JSON.parse(options?.body ?? '')).toEqual({ message: 'Not found', code: 'not_found' });
  });

  it('answers an Expect other than 100-continue 417 in the common error shape; 100-continue goes on to the route', async () => {
    const [refused, ...more] = await exchange('GET /api/v1alpha/liveness HTTP/1.1\r\nHost: x\r\nExpect: something-else\r\nConnection: close\r\n\r\n');
    expect(refused?.status).toBe(417);
    expect(refused?.headers).toMatchObject(SHAPE_HEADERS);
    expect(JSON.parse(refused?.body ?? '')).toEqual({ message: 'Expectation failed: only Expect: 100-continue is supported', code: 'expectation_failed' });
    expect(more).toEqual([]);
    expect(refusals()).toContainEqual(expect.objectContaining({ status: 417, code: 'expectation_failed', method: 'GET', path: '/api/v1alpha/liveness', ip: '127.0.0.1' }));
    const connection = rawConnection(port());
    connection.send('GET /api/v1alpha/liveness HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nConnection: close\r\n');
    connection.send(`Authorization: Bearer ${targetToken}\r\n\r\n`);
    const [goOn, alive] = await connection.answers;
    expect(goOn?.status).toBe(100);
    expect(alive).toMatchObject({ status: 200, body: '{"message":"alive"}' });
  });

  it('answers what the HTTP parser refuses in the common error shape: bad header bytes 400, headers over the limit 431', async () => {
    const [bad] = await exchange('GET /healthz/live HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0001b\r\n\r\n');
    expect(bad?.status).toBe(400);
    expect(bad?.headers).toMatchObject(SHAPE_HEADERS);
    expect(JSON.parse(bad?.body ?? '')).toEqual({ message: 'Bad request', code: 'bad_request' });
    const [large] = await exchange(`GET /healthz/live HTTP/1.1\r\nHost: x\r\nX-Large: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(large?.status).toBe(431);
    expect(large?.headers).toMatchObject(SHAPE_HEADERS);
    expect(JSON.parse(large?.body ?? '')).toEqual({ message: 'Request headers too large', code: 'headers_too_large' });
    // The request line of the routes never sees them: each has a line of its own.
    expect(refusals()).toContainEqual(expect.objectContaining({ status: 400, code: 'bad_request', ip: '127.0.0.1' }));
    expect(refusals()).toContainEqual(expect.objectContaining({ status: 431, code: 'headers_too_large', ip: '127.0.0.1' }));
  });
});

describe('request bodies', () => {
  const admin = () => basicAuth('admin', TEST_ADMIN_PASSWORD);

  it('answers 400 invalid_json for malformed JSON', async () => {
    for (const body of ['{', '{"jwt_token_description": }', 'nul', '{"a":1}}']) {
      const response = await request(`${server.api}/token`, { method: 'POST', headers: { authorization: admin(), 'content-type': 'application/json' }, body });
      expect(response.status, body).toBe(400);
      expect(response.body).toEqual({ message: 'Request body is not valid JSON', code: 'invalid_json' });
    }
  });

  it('treats an empty body sent as application/json as no body: a route that needs one answers 400 from its schema', async () => {
    const empty = await request(`${server.api}/token`, { method: 'POST', headers: { authorization: admin(), 'content-type': 'application/json' }, body: '' });
    expect(empty.status).toBe(400);
    expect(empty.body.code).toBe('invalid_request');
    const none = await request(`${server.api}/token`, { method: 'POST', headers: { authorization: admin() } });
    expect(none.status).toBe(400);
    expect(none.body.code).toBe('invalid_request');
  });

  it('answers 415 in the common error shape for a body without a JSON content type', async () => {
    const shape = { message: 'Request body must be JSON (Content-Type: application/json)', code: 'unsupported_media_type' };
    const text = await request(`${server.api}/token`, { method: 'POST', headers: { authorization: admin(), 'content-type': 'text/plain' }, body: 'jwt_token_life=1d' });
    expect(text.status).toBe(415);
    expect(text.body).toEqual(shape);
    const body = JSON.stringify({ jwt_token_description: 'no type', jwt_token_life: '1 days' });
    const untyped = await request(`${server.api}/token`, { method: 'POST', headers: { authorization: admin() }, body: new TextEncoder().encode(body) });
    expect(untyped.status).toBe(415);
    expect(untyped.body).toEqual(shape);
    expect((await request(`${server.api}/token`, { method: 'GET', headers: { authorization: admin() } })).body.jwt_tokens).not.toHaveProperty('no type');
  });

  it('refuses a JSON body declared in another charset than UTF-8 (415) instead of storing mangled letters', async () => {
    const described = (description: string) => JSON.stringify({ jwt_token_description: description, jwt_token_life: '1 days' });
    // "Café" in ISO-8859-1: the é is one byte, 0xE9, which is no UTF-8.
    const latin1 = Buffer.from(described('Caf\u00e9 latin1'), 'latin1');
    const refused = await request(`${server.api}/token`, { method: 'POST', headers: { authorization: admin(), 'content-type': 'application/json; charset=ISO-8859-1' }, body: latin1 });
    expect(refused.status).toBe(415);
    expect(refused.body).toEqual({ message: 'Request body must be JSON in UTF-8 (charset=utf-8, or no charset)', code: 'unsupported_media_type' });
    const listed = JSON.stringify((await request(`${server.api}/token`, { headers: { authorization: admin() } })).body);
    expect(listed).not.toContain('latin1');
    // UTF-8, declared in any spelling, or not declared.
    for (const [index, type] of ['application/json; charset=utf-8', 'application/json;charset="UTF-8"', 'application/json; charset=utf8', 'application/json'].entries()) {
      const created = await request(`${server.api}/token`, { method: 'POST', headers: { authorization: admin(), 'content-type': type }, body: Buffer.from(described(`Caf\u00e9 ${index}`), 'utf8') });
      expect(created.status, type).toBe(201);
      expect(created.body.jwt_token_description).toBe(`Caf\u00e9 ${index}`);
    }
  });

  it('answers 413 for a body over 1 MiB, and accepts one just under', async () => {
    const big = JSON.stringify({ jwt_token_description: 'x', jwt_token_life: '1 days', pad: 'a'.repeat(1024 * 1024) });
    const response = await request(`${server.api}/token`, { method: 'POST', headers: { authorization: admin(), 'content-type': 'application/json' }, body: big });
    expect(response.status).toBe(413);
    expect(response.body).toEqual({ message: 'Request body too large (limit 1 MiB)', code: 'payload_too_large' });
    const fits = JSON.stringify({ jwt_token_description: 'fits', jwt_token_life: '1 days', pad: 'a'.repeat(1024 * 1024 - 200) });
    expect(Buffer.byteLength(fits)).toBeLessThanOrEqual(1024 * 1024);
    expect((await request(`${server.api}/token`, { method: 'POST', headers: { authorization: admin(), 'content-type': 'application/json' }, body: fits })).status).toBe(201);
  });

  it('gives validation errors as {message, code, errors: [{path, message}]}', async () => {
    const response = await request(`${server.api}/token`, { method: 'POST', headers: { authorization: admin() }, json: { jwt_token_description: 'x', jwt_token_life: 'soon' } });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      message: 'jwt_token_life must be a duration such as "30 days", "12 hours" or a number of seconds',
      code: 'invalid_request',
      errors: [{ path: '/jwt_token_life', message: 'must be a duration such as "30 days", "12 hours" or a number of seconds' }],
    });
  });
});

describe('internal errors', () => {
  it('answer 500 with a body that says nothing internal, and the log keeps the detail', async () => {
    const response = await request(`${server.api}/explode`, { headers: { authorization: bearer(token) } });
    expect(response.status).toBe(500);
    expect(response.body).toEqual({ message: 'Internal server error', code: 'internal_error' });
    expect(response.text).not.toMatch(/SQLITE|secrets|\/srv|stack/);
    expect(server.logs.some((line) => line.includes('no such table: secrets'))).toBe(true);
  });
});
