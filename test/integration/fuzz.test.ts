/**
 * Hostile input against the real server (fast-check): every operation of the OpenAPI document,
 * plus the probes and docs, with fuzzed method, path parameters, query, headers, authentication
 * and body. Properties: no 5xx (except a 503 the API declares), every error is the JSON error
 * shape with nothing internal in it, and a refused request changes nothing in the store.
 * The service follows the test node at snapshot 5 and holds real wallets with coins and a pending
 * PSBT, and paths and bodies often name them, so requests reach coin selection, descriptor parsing
 * and signature merging, not only the 404 of an unknown wallet.
 *
 * Runs on SQLite and PostgreSQL. FUZZ_RUNS (default 400 per store) and FUZZ_SEED replay or lengthen the run: `scripts/fuzz-long.sh`.
 */
import { createHash } from 'node:crypto';
import BetterSqlite3 from 'better-sqlite3';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DescriptorDeriver, parseDescriptor } from '../../src/core/descriptor/index.js';
import { NETWORKS } from '../../src/core/network.js';
import { loadFixture } from '../support/fixtures.js';
import { startRpcTestServer, type RpcTestServer } from '../support/rpc-server.js';
import { TEST_ADMIN_PASSWORD, basicAuth, bearer, createToken, request, startTestServer, type TestServer } from '../support/server.js';
import { TEST_DATABASE_URL } from '../support/stores.js';
import { contentType, headerValue, jsonText, pathSegment, plausibleBodies, queryString, sendRaw, type FuzzWorld, type RawRequest, type RawResponse } from './fuzz.support.js';
import { WALLET_IDS, nodeEnv, timeline, wallets } from './wallet-helpers.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 400);
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
const USER = 'fuzzuser';
const USER_PASSWORD = 'fuzz user password';
/** Owns the spendable wallet; its token is never fuzzed, so that wallet is never deleted or rescanned. */
const OWNER = 'fuzzowner';
const OWNER_PASSWORD = 'fuzz owner password';
/** Owned by OWNER, shared with USER (spend) and admin (read). */
const SPENDABLE = 'w_wpkh';
/** Owned by USER: the fuzz may rename, share, rescan or delete it (then it is imported again). */
const OWNED = 'w_tr';
const SNAPSHOT = 5;
/** Stand for the pending PSBT's txid (and its upper-case form) in a generated path, replaced when sent: the fuzz may delete that PSBT. */
const PENDING_PSBT = 'PENDING-PSBT-TXID';
const PENDING_PSBT_UPPER = 'PENDING-PSBT-TXID-IN-UPPER-CASE';

/** Text that must never reach a client: stack frames, file paths, database and driver errors. */
const INTERNAL_DETAIL = /node_modules|\/src\/|\.ts:\d|\bat [\w.<>]+ \(|SQLITE_|sqlite3|relation "|syntax error at|duplicate key value|violates|kysely|TypeError|ReferenceError|RangeError|Maximum call stack/i;

interface Operation {
  method: string;
  /** OpenAPI path with `{name}` parameters. */
  path: string;
  bodyKeys: string[];
}

let node: RpcTestServer;
let server: TestServer;
let port: number;
let operations: Operation[];
let adminToken: string;
let userToken: string;
let ownerToken: string;
let knownTokenId: string;
let world: FuzzWorld;
let pendingPsbt: string;
let digestReader: BetterSqlite3.Database | undefined;
let digestClient: pg.Client | undefined;

/** Everything in the store except the login attempts, which refused logins exist to fill. */
async function storeDigest(): Promise<string> {
  const hash = createHash('sha256');
  if (digestReader) {
    const tables = digestReader
      .prepare<[], { name: string }>("select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and name not in ('login_attempts', 'login_attempt_sequence') order by name")
      .all();
    for (const { name } of tables) {
      hash.update(name);
      for (const row of digestReader.prepare(`select * from "${name}" order by rowid`).all()) hash.update(JSON.stringify(row));
    }
  } else if (digestClient) {
    const tables = await digestClient.query<{ name: string }>(
      "select table_name as name from information_schema.tables where table_schema = current_schema() and table_name not in ('login_attempts', 'login_attempt_sequence') order by 1",
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

const fixtureAddress = (wallet: string, index: number) => new DescriptorDeriver(parseDescriptor(wallets[wallet]!.recv_descriptor, NETWORKS.regtest)).derive(index).address;
const as = (token: string) => ({ authorization: bearer(token) });

async function importWallet(alias: string, token: string, sharedWith: { user: string; access: string }[]): Promise<void> {
  const w = wallets[alias]!;
  const made = await request(`${server.api}/wallets`, {
    method: 'POST',
    headers: as(token),
    json: { name: `Fuzz ${alias}`, alias, recv_descriptor: w.recv_descriptor, change_descriptor: w.change_descriptor, birthday: 0, shared_with: sharedWith },
  });
  expect(made.status, made.text).toBe(201);
}

/** A pending PSBT of the spendable wallet, made by its owner from one coin chosen here. */
async function makePendingPsbt(): Promise<string> {
  const coin = world.coins[0]!;
  const made = await request(`${server.api}/wallets/${SPENDABLE}/psbt`, {
    method: 'POST',
    headers: as(ownerToken),
    json: { recipients: [{ address: world.addresses[0], amount: '0.001' }], fee_rate: '2', inputs: [coin] },
  });
  expect(made.status, made.text).toBe(201);
  return made.body.result.tx.txid as string;
}

/**
 * Puts back what an accepted fuzzed write may have taken away, so later requests still find wallets
 * with coins: the owned wallet, the sync at the tip (after a rescan), the coins (unfrozen, PSBTs made
 * by the fuzz deleted), and one pending PSBT.
 */
async function restoreWorld(): Promise<void> {
  if ((await request(`${server.api}/wallets/${OWNED}`, { headers: as(userToken) })).status === 404) await importWallet(OWNED, userToken, []);
  await server.running.runtime.services.sync.runOnce();
  let pendingKept = false;
  for (const [alias, token] of [[SPENDABLE, ownerToken], [OWNED, userToken]] as const) {
    const list = await request(`${server.api}/wallets/${alias}/psbt`, { headers: as(token) });
    for (const txid of Object.keys(list.body.result ?? {})) {
      if (txid === pendingPsbt) pendingKept = true;
      else await request(`${server.api}/wallets/${alias}/psbt/${txid}`, { method: 'DELETE', headers: as(token) });
    }
  }
  const coins = await request(`${server.api}/wallets/${SPENDABLE}/utxo`, { headers: as(ownerToken) });
  for (const { txid, vout, frozen } of coins.body.utxo as { txid: string; vout: number; frozen: boolean }[]) {
    if (frozen) await request(`${server.api}/wallets/${SPENDABLE}/utxo`, { method: 'PATCH', headers: as(ownerToken), json: { txid, vout, frozen: false } });
  }
  if (!pendingKept) pendingPsbt = await makePendingPsbt();
}

async function startFuzzTarget(kind: 'sqlite' | 'postgres'): Promise<void> {
  node = await startRpcTestServer({ snapshot: SNAPSHOT });
  server = await startTestServer({ env: { ...nodeEnv(node), SERVICE_RATE_LIMIT: '1000000' }, database: kind });
  port = Number(new URL(server.url).port);
  await server.running.runtime.services.users.addUser(USER, USER_PASSWORD, { admin: false });
  await server.running.runtime.services.users.addUser(OWNER, OWNER_PASSWORD, { admin: false });
  const admin = await createToken(server, 'admin', TEST_ADMIN_PASSWORD, 'fuzz admin');
  adminToken = admin.jwt_token;
  // Fuzzed requests may delete this one; the admin token above stays (its id is never generated).
  knownTokenId = (await createToken(server, 'admin', TEST_ADMIN_PASSWORD, 'fuzz target')).jwt_token_id;
  userToken = (await createToken(server, USER, USER_PASSWORD, 'fuzz user')).jwt_token;
  ownerToken = (await createToken(server, OWNER, OWNER_PASSWORD, 'fuzz owner')).jwt_token;
  await importWallet(SPENDABLE, ownerToken, [{ user: USER, access: 'spend' }, { user: 'admin', access: 'read' }]);
  await importWallet(OWNED, userToken, []);
  expect((await server.running.runtime.services.sync.runOnce()).ran).toBe(true);
  const ownAddress = fixtureAddress('w_wsh2of3', 61);
  const psbts = loadFixture('psbts') as Record<string, { stages: { psbt: string }[] }>;
  world = {
    addresses: [
      fixtureAddress('w_tr', 61),
      fixtureAddress('w_shwpkh', 61),
      fixtureAddress('w_pkh', 61),
      ownAddress,
      ownAddress.toUpperCase(),
      fixtureAddress(SPENDABLE, 3),
    ],
    foreignAddresses: ['bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx', '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2'],
    coins: timeline.snapshots[SNAPSHOT].expected[SPENDABLE].unspent.map((u: { txid: string; vout: number }) => ({ txid: u.txid, vout: u.vout })),
    descriptors: WALLET_IDS.map((id) => ({ recv: wallets[id]!.recv_descriptor, change: wallets[id]!.change_descriptor })),
    psbts: [],
    users: [USER, OWNER, 'admin', 'nobody'],
  };
  pendingPsbt = await makePendingPsbt();
  const pending = await request(`${server.api}/wallets/${SPENDABLE}/psbt/${pendingPsbt}?format=base64`, { headers: as(ownerToken) });
  world.psbts = [pending.text.trim(), ...[SPENDABLE, OWNED].flatMap((id) => psbts[id]!.stages.map((stage) => stage.psbt))];
  const spec = await request(`${server.url}/docs/openapi.json`);
  operations = [];
  for (const [path, methods] of Object.entries(spec.body.paths as Record<string, Record<string, any>>)) {
    for (const [method, operation] of Object.entries(methods)) {
      // A stream answers for as long as its client listens (its refusals: event-stream.test.ts).
      if (operation.responses?.['200']?.content?.['text/event-stream']) continue;
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
  await node?.close();
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

/**
 * `everything`: any operation with any method, parameters, headers and body. `use cases`: the wallet,
 * PSBT and token operations with their own method, mostly as the user with wallets, with JSON bodies
 * close to valid and paths naming real wallets and PSBTs, so that the fuzz gets past authentication,
 * routing and schemas into the use cases.
 */
type Focus = 'everything' | 'use cases';

function requestArbitrary(focus: Focus): fc.Arbitrary<RawRequest> {
  const deep = focus === 'use cases';
  const bodies = plausibleBodies(world);
  // Path parameters by name: mostly what exists (in either focus, also a value meant for another parameter).
  const known = { wallet_alias: [SPENDABLE, OWNED, SPENDABLE.toUpperCase()], txid: [PENDING_PSBT, PENDING_PSBT_UPPER], jwt_token_id: [knownTokenId] };
  const everyKnown = fc.constantFrom(...Object.values(known).flat());
  const param = (name: keyof typeof known) =>
    deep ? fc.oneof({ weight: 1, arbitrary: pathSegment }, { weight: 1, arbitrary: everyKnown }, { weight: 6, arbitrary: fc.constantFrom(...known[name]) }) : fc.oneof({ weight: 3, arbitrary: pathSegment }, { weight: 4, arbitrary: everyKnown });
  const operationWeight = (o: Operation, focused: boolean): number => {
    const key = `${o.method} ${o.path}`;
    if (!focused || !bodies.has(key)) return 1;
    return key === 'POST /api/v1alpha/wallets/{wallet_alias}/psbt' ? 12 : 3;
  };
  const targets = deep ? operations.filter((o) => bodies.has(`${o.method} ${o.path}`) || o.path.includes('{wallet_alias}')) : operations;
  return fc
    .record({
      // The use cases that write, more often: they have the most to get wrong. PSBT creation (coin
      // selection, the money path) most often of all, so that the run always reaches it whatever the seed.
      operation: fc.oneof(...targets.map((o) => ({ weight: operationWeight(o, deep), arbitrary: fc.constant(o) }))),
      otherMethod: deep ? fc.constant(null) : fc.option(fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'TRACE', 'FOO'), { freq: 5 }),
      params: fc.record({ wallet_alias: param('wallet_alias'), txid: param('txid'), jwt_token_id: param('jwt_token_id') }),
      query: queryString,
      auth: deep ? fc.oneof({ weight: 10, arbitrary: fc.constant(bearer(userToken)) }, { weight: 1, arbitrary: fc.constant(basicAuth(USER, USER_PASSWORD)) }, { weight: 1, arbitrary: authorization() }) : authorization(),
      type: deep ? fc.oneof({ weight: 8, arbitrary: fc.constant('application/json') }, { weight: 1, arbitrary: contentType }) : contentType,
      body: fc.option(fc.constant(null), { freq: 4 }),
      extraHeaders: fc.array(fc.tuple(fc.constantFrom('X-Forwarded-For', 'Origin', 'Accept', 'Accept-Encoding', 'Cookie', 'X-Http-Method-Override', ...(deep ? [] : ['Authorization', 'Content-Type']), 'X-Fuzz'), headerValue), { maxLength: deep ? 1 : 3 }),
    })
    .chain((r) => {
      const plausible = bodies.get(`${r.operation.method} ${r.operation.path}`);
      const generic = jsonText(r.operation.bodyKeys);
      const body = plausible ? fc.oneof({ weight: deep ? 6 : 2, arbitrary: plausible }, { weight: 1, arbitrary: generic }) : generic;
      return body.map((text): RawRequest => {
        const target = r.operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => r.params[name as keyof typeof known] ?? 'x') + r.query;
        const headers: [string, string][] = [];
        if (r.auth !== undefined) headers.push(['Authorization', r.auth]);
        if (r.type !== undefined) headers.push(['Content-Type', r.type]);
        headers.push(...r.extraHeaders);
        const method = r.otherMethod ?? r.operation.method;
        const withBody = r.body === null || r.operation.bodyKeys.length > 0;
        return { method, target, headers, body: withBody && method !== 'GET' && method !== 'HEAD' ? Buffer.from(text, 'utf8') : undefined };
      });
    });
}

/**
 * Sends `RUNS` generated requests, one at a time, checking each answer and that a refused request left
 * the store as it was. Returns how often each `METHOD OpenAPI-path status code` was answered.
 */
async function fuzz(focus: Focus): Promise<Map<string, number>> {
  const answers = new Map<string, number>();
  await fc.assert(
    fc.asyncProperty(requestArbitrary(focus), async (req) => {
      const sent = { ...req, target: req.target.replaceAll(PENDING_PSBT_UPPER, pendingPsbt.toUpperCase()).replaceAll(PENDING_PSBT, pendingPsbt) };
      const before = await storeDigest();
      const res = await sendRaw(port, sent);
      checkAnswer(sent, res);
      const code = /"code":"([a-z_]+)"/.exec(res.body)?.[1] ?? '';
      const key = `${sent.method} ${operationOf(sent.target)} ${res.status} ${code}`.trim();
      answers.set(key, (answers.get(key) ?? 0) + 1);
      if (res.status >= 400) expect(await storeDigest(), `${sent.method} ${sent.target.slice(0, 120)} changed the store and answered ${res.status}`).toBe(before);
      else if (sent.method !== 'GET' && sent.method !== 'HEAD') await restoreWorld();
    }),
    { numRuns: RUNS, ...(SEED !== undefined ? { seed: SEED } : {}), endOnFailure: true },
  );
  // Still serving, the store intact.
  expect((await request(`${server.api}/service`, { headers: { authorization: bearer(adminToken) } })).status).toBe(200);
  expect((await request(`${server.api}/token`, { headers: { authorization: basicAuth('admin', TEST_ADMIN_PASSWORD) } })).status).toBe(200);
  expect(await integrityOk()).toBe(true);
  return answers;
}

/** The OpenAPI path a sent target matches, its parameters put back as `{}`; the target itself when none. */
function operationOf(target: string): string {
  const path = target.replace(/\?.*$/, '');
  const match = operations.find((o) => new RegExp(`^${o.path.replace(/\{[^}]+\}/g, '[^/]+')}/?$`).test(path));
  return match?.path ?? path.slice(0, 60);
}

const count = (answers: Map<string, number>, pattern: RegExp): number => [...answers].filter(([key]) => pattern.test(key)).reduce((sum, [, n]) => sum + n, 0);

function checkAnswer(req: RawRequest, res: RawResponse): void {
  const where = `${req.method} ${req.target.slice(0, 120)} -> ${res.status} ${res.body.slice(0, 200)}`;
  // 503 is a declared answer of readiness and of the routes that need the chain backend.
  const declaredUnavailable =
    res.status === 503 &&
    (/"code":"(?!internal_error)[a-z_]+"/.test(res.body) ||
      (/^\/(healthz\/ready|api\/v1alpha\/read[iy]ness)\b/.test(req.target) && (req.method === 'HEAD' || res.body === '{"status":"unavailable"}')));
  expect(res.status < 500 || declaredUnavailable, where).toBe(true);
  expect(res.body, where).not.toMatch(INTERNAL_DETAIL);
  // Every answer but a HEAD's has a body, those Node gives before Fastify runs included.
  if (req.method === 'HEAD') return;
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
    const answers = await fuzz('everything');
    // The run reached the handlers, not only the authentication hooks.
    expect(count(answers, / [23]\d\d\b/)).toBeGreaterThan(0);
    expect(count(answers, / 400\b/)).toBeGreaterThan(0);
  });

  it(`finds the same in ${RUNS} requests aimed at the wallet, PSBT and token use cases`, async () => {
    const answers = await fuzz('use cases');
    // Coin selection and the PSBT checks ran: creations were accepted or refused by the use case itself.
    expect(count(answers, /^POST \/api\/v1alpha\/wallets\/\{wallet_alias\}\/psbt (201|422)/)).toBeGreaterThan(0);
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
