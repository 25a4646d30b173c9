/**
 * Hostile input against the real server (fast-check): every operation of the OpenAPI document,
 * plus the probes and docs, with fuzzed method, path parameters, query, headers, authentication
 * and body. Properties: no 5xx (except a 503 the API declares), every error is the JSON error
 * shape with nothing internal in it, and a refused request changes nothing in the store.
 *
 * Runs on SQLite and PostgreSQL. FUZZ_RUNS (default 400 per store) and FUZZ_SEED replay or lengthen the run: `scripts/fuzz-long.sh`.
 */
import { createHash } from 'node:crypto';
import BetterSqlite3 from 'better-sqlite3';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_ADMIN_PASSWORD, basicAuth, bearer, createToken, request, startTestServer, type TestServer } from '../support/server.js';
import { TEST_DATABASE_URL } from '../support/stores.js';
import { contentType, headerValue, jsonText, pathSegment, queryString, sendRaw, type RawRequest, type RawResponse } from './fuzz.support.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 400);
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
const USER = 'fuzzuser';
const USER_PASSWORD = 'fuzz user password';

/** Text that must never reach a client: stack frames, file paths, database and driver errors. */
const INTERNAL_DETAIL = /node_modules|\/src\/|\.ts:\d|\bat [\w.<>]+ \(|SQLITE_|sqlite3|relation "|syntax error at|duplicate key value|violates|kysely|TypeError|ReferenceError|RangeError|Maximum call stack/i;

interface Operation {
  method: string;
  /** OpenAPI path with `{name}` parameters. */
  path: string;
  bodyKeys: string[];
}

let server: TestServer;
let port: number;
let operations: Operation[];
let adminToken: string;
let userToken: string;
let knownTokenId: string;
let digestReader: BetterSqlite3.Database | undefined;
let digestClient: pg.Client | undefined;

/** Everything in the store except the failed-login counters, which refused logins exist to fill. */
async function storeDigest(): Promise<string> {
  const hash = createHash('sha256');
  if (digestReader) {
    const tables = digestReader
      .prepare<[], { name: string }>("select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and name <> 'auth_failures' order by name")
      .all();
    for (const { name } of tables) {
      hash.update(name);
      for (const row of digestReader.prepare(`select * from "${name}" order by rowid`).all()) hash.update(JSON.stringify(row));
    }
  } else if (digestClient) {
    const tables = await digestClient.query<{ name: string }>(
      "select table_name as name from information_schema.tables where table_schema = current_schema() and table_name <> 'auth_failures' order by 1",
    );
    for (const { name } of tables.rows) {
      const rows = await digestClient.query<{ rows: string | null }>(`select string_agg(t::text, '|' order by t::text) as rows from "${name}" t`);
      hash.update(`${name}:${rows.rows[0]?.rows ?? ''}`);
    }
  }
  return hash.digest('hex');
}

async function integrityOk(): Promise<boolean> {
  if (digestReader) return digestReader.pragma('integrity_check', { simple: true }) === 'ok';
  await digestClient?.query('select count(*) from tokens');
  return true;
}

/** FUZZ_DATABASE=sqlite|postgres runs one store only (default both). */
const KINDS = (['sqlite', 'postgres'] as const).filter((k) => (process.env.FUZZ_DATABASE ?? k) === k);

async function startFuzzTarget(kind: 'sqlite' | 'postgres'): Promise<void> {
  server = await startTestServer({ env: { SERVICE_RATE_LIMIT: '1000000', SERVICE_NETWORK: 'regtest' }, database: kind });
  port = Number(new URL(server.url).port);
  await server.running.runtime.services.users.addUser(USER, USER_PASSWORD, { admin: false });
  const admin = await createToken(server, 'admin', TEST_ADMIN_PASSWORD, 'fuzz admin');
  adminToken = admin.jwt_token;
  // Fuzzed requests may delete this one; the admin token above stays (its id is never generated).
  knownTokenId = (await createToken(server, 'admin', TEST_ADMIN_PASSWORD, 'fuzz target')).jwt_token_id;
  userToken = (await createToken(server, USER, USER_PASSWORD, 'fuzz user')).jwt_token;
  const spec = await request(`${server.url}/docs/openapi.json`);
  operations = [];
  for (const [path, methods] of Object.entries(spec.body.paths as Record<string, Record<string, any>>)) {
    for (const [method, operation] of Object.entries(methods)) {
      const schema = operation.requestBody?.content?.['application/json']?.schema;
      operations.push({ method: method.toUpperCase(), path, bodyKeys: Object.keys(schema?.properties ?? {}) });
    }
  }
  for (const path of ['/healthz/live', '/healthz/ready', '/docs/openapi.json', '/docs/api/', '/', '/api', '/api/v1alpha']) operations.push({ method: 'GET', path, bodyKeys: [] });
  if (server.postgresSchema) {
    digestClient = new pg.Client({ connectionString: TEST_DATABASE_URL, options: `-c search_path=${server.postgresSchema}` });
    await digestClient.connect();
  } else if (server.config.database.kind === 'sqlite') {
    digestReader = new BetterSqlite3(server.config.database.path, { readonly: true, fileMustExist: true });
  }
}

async function stopFuzzTarget(): Promise<void> {
  digestReader?.close();
  await digestClient?.end();
  digestReader = undefined;
  digestClient = undefined;
  await server?.dispose();
}

const authorization = (): fc.Arbitrary<string | undefined> =>
  fc.oneof(
    fc.constant(undefined),
    fc.constant(basicAuth('admin', TEST_ADMIN_PASSWORD)),
    fc.constant(basicAuth(USER, USER_PASSWORD)),
    fc.constant(bearer(adminToken)),
    fc.constant(bearer(userToken)),
    fc.string({ maxLength: 30 }).map((p) => basicAuth('admin', p)),
    fc.constantFrom(
      'Basic',
      'Basic ',
      'Basic ====',
      'Basic YWRtaW4=',
      `Basic ${Buffer.from(`admin:${TEST_ADMIN_PASSWORD}`).toString('base64').slice(0, -2)}`,
      'Bearer',
      'Bearer a.b.c',
      `Bearer ${adminToken.slice(0, -3)}xyz`,
      `Bearer ${adminToken.split('.').slice(0, 2).join('.')}.`,
      'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJhZG1pbiJ9.',
      `bearer  ${adminToken}  `,
      'Digest username="admin"',
    ),
    headerValue,
  );

function requestArbitrary(): fc.Arbitrary<RawRequest> {
  return fc
    .record({
      operation: fc.constantFrom(...operations),
      otherMethod: fc.option(fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'TRACE', 'FOO'), { freq: 5 }),
      params: fc.array(fc.oneof({ weight: 4, arbitrary: pathSegment }, { weight: 1, arbitrary: fc.constant(knownTokenId) }), { minLength: 4, maxLength: 4 }),
      query: queryString,
      auth: authorization(),
      type: contentType,
      body: fc.option(fc.constant(null), { freq: 4 }),
      extraHeaders: fc.array(fc.tuple(fc.constantFrom('X-Forwarded-For', 'Origin', 'Accept', 'Accept-Encoding', 'Cookie', 'X-Http-Method-Override', 'Authorization', 'Content-Type', 'X-Fuzz'), headerValue), { maxLength: 3 }),
    })
    .chain((r) =>
      jsonText(r.operation.bodyKeys).map((text): RawRequest => {
        let index = 0;
        const target = r.operation.path.replace(/\{[^}]+\}/g, () => r.params[index++] ?? 'x') + r.query;
        const headers: [string, string][] = [];
        if (r.auth !== undefined) headers.push(['Authorization', r.auth]);
        if (r.type !== undefined) headers.push(['Content-Type', r.type]);
        headers.push(...r.extraHeaders);
        const method = r.otherMethod ?? r.operation.method;
        const withBody = r.body === null || r.operation.bodyKeys.length > 0;
        return { method, target, headers, body: withBody && method !== 'GET' && method !== 'HEAD' ? Buffer.from(text, 'utf8') : undefined };
      }),
    );
}

function checkAnswer(req: RawRequest, res: RawResponse): void {
  const where = `${req.method} ${req.target.slice(0, 120)} -> ${res.status} ${res.body.slice(0, 200)}`;
  // 503 is the declared answer of readiness (no chain backend in this test) and of chain-backed routes.
  const declaredUnavailable =
    res.status === 503 &&
    (/"code":"(?!internal_error)[a-z_]+"/.test(res.body) ||
      (/^\/(healthz\/ready|api\/v1alpha\/read[iy]ness)\b/.test(req.target) && (req.method === 'HEAD' || res.body === '{"status":"unavailable"}')));
  expect(res.status < 500 || declaredUnavailable, where).toBe(true);
  expect(res.body, where).not.toMatch(INTERNAL_DETAIL);
  // Node's HTTP parser refuses some requests itself (400/431 without a body) before Fastify runs.
  if (res.body === '' || req.method === 'HEAD') return;
  expect(res.headers.get('x-content-type-options'), where).toBe('nosniff');
  // Probes answer {"status": ...} by design; everything else uses the error shape.
  if (res.status >= 400 && !req.target.startsWith('/healthz/')) {
    expect(res.headers.get('content-type'), where).toMatch(/^application\/json/);
    const body = JSON.parse(res.body) as { message?: unknown; code?: unknown };
    expect(typeof body.message, where).toBe('string');
    expect(body.code, where).toMatch(/^[a-z_]+$/);
  }
}

describe.each(KINDS)('hostile input (%s)', (kind) => {
  beforeAll(() => startFuzzTarget(kind));
  afterAll(() => stopFuzzTarget());

  it(`finds no 5xx, no leak and no change from a refused request in ${RUNS} requests`, async () => {
    expect(operations.length).toBeGreaterThanOrEqual(9);
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(requestArbitrary(), async (req) => {
        const before = await storeDigest();
        const res = await sendRaw(port, req);
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        checkAnswer(req, res);
        if (res.status >= 400) expect(await storeDigest(), `${req.method} ${req.target.slice(0, 120)} changed the store and answered ${res.status}`).toBe(before);
      }),
      { numRuns: RUNS, ...(SEED !== undefined ? { seed: SEED } : {}), endOnFailure: true },
    );
    // The run reached the handlers, not only the authentication hooks.
    expect([...statuses.keys()].filter((s) => s < 300).length).toBeGreaterThan(0);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(0);
    // Still serving, the store intact.
    expect((await request(`${server.api}/service`, { headers: { authorization: bearer(adminToken) } })).status).toBe(200);
    expect((await request(`${server.api}/token`, { headers: { authorization: basicAuth('admin', TEST_ADMIN_PASSWORD) } })).status).toBe(200);
    expect(await integrityOk()).toBe(true);
  });

  it('refuses the classic hostile bodies of token creation with 400 and creates nothing', async () => {
    const bodies = [
      '{"jwt_token_description":"a","jwt_token_life":"1 days","__proto__":{"isAdmin":true}}',
      '{"jwt_token_description":"a","jwt_token_life":"1 days","constructor":{"prototype":{"isAdmin":true}}}',
      '{"jwt_token_description":"dup","jwt_token_description":{"a":1},"jwt_token_life":"1 days"}',
      `{"jwt_token_description":${'['.repeat(100_000)}${']'.repeat(100_000)},"jwt_token_life":"1 days"}`,
      '{"jwt_token_description":"big","jwt_token_life":"1e308 seconds"}',
      '{"jwt_token_description":"big","jwt_token_life":1e308}',
      '{"jwt_token_description":"big","jwt_token_life":"123456789012345678901234567890"}',
      '{"jwt_token_description":"","jwt_token_life":"1 days"}',
      '{"jwt_token_description":"\\u0000","jwt_token_life":"1 days"}',
    ];
    for (const body of bodies) {
      const before = await storeDigest();
      const res = await sendRaw(port, { method: 'POST', target: '/api/v1alpha/token', headers: [['Authorization', basicAuth('admin', TEST_ADMIN_PASSWORD)], ['Content-Type', 'application/json']], body: Buffer.from(body) });
      expect(res.status, `${body.slice(0, 80)} -> ${res.body}`).toBe(400);
      checkAnswer({ method: 'POST', target: '/api/v1alpha/token', headers: [], body: undefined }, res);
      expect(await storeDigest()).toBe(before);
    }
  });

  it('refuses NUL (which PostgreSQL text cannot hold) in a path parameter, the query and the user name', async () => {
    const admin: [string, string] = ['Authorization', basicAuth('admin', TEST_ADMIN_PASSWORD)];
    const cases: [RawRequest, number][] = [
      [{ method: 'GET', target: '/api/v1alpha/token/%00', headers: [admin], body: undefined }, 404],
      [{ method: 'DELETE', target: `/api/v1alpha/token/${knownTokenId}%00`, headers: [admin], body: undefined }, 404],
      [{ method: 'GET', target: '/api/v1alpha/token?x=%00', headers: [admin], body: undefined }, 400],
      [{ method: 'GET', target: '/api/v1alpha/token', headers: [['Authorization', basicAuth('ad\u0000min', TEST_ADMIN_PASSWORD)]], body: undefined }, 401],
      [{ method: 'POST', target: '/api/v1alpha/token', headers: [admin, ['Content-Type', 'application/json']], body: Buffer.from('{"jwt_token_description":"ok","jwt_token_life":"1 days","x\\u0000":1}') }, 400],
    ];
    for (const [req, status] of cases) {
      const before = await storeDigest();
      const res = await sendRaw(port, req);
      expect(res.status, `${req.target} ${res.body}`).toBe(status);
      checkAnswer(req, res);
      expect(await storeDigest()).toBe(before);
    }
  });

  it('does not serve files outside the docs through path traversal', async () => {
    for (const target of ['/docs/api/static/../../../package.json', '/docs/api/static/..%2f..%2f..%2fpackage.json', '/docs/api/static/%2e%2e/%2e%2e/%2e%2e/package.json', '/docs/api/static/....//....//package.json']) {
      const res = await sendRaw(port, { method: 'GET', target, headers: [], body: undefined });
      expect(res.body, target).not.toContain('"wallet-coordination-service"');
      expect(res.status, target).toBeLessThan(500);
    }
  });
});
