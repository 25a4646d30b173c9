/** Every kind of bad credential is a 401 with WWW-Authenticate and the same body; past the failed-login limit, 429. */
import { createHmac, randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClock } from '../support/clock.js';
import { TEST_ADMIN_PASSWORD, basicAuth, bearer, createToken, request, startTestServer, type TestServer } from '../support/server.js';

const UNAUTHORIZED = { message: 'Missing or invalid credentials', code: 'unauthorized' };
const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
function forge(header: object, payload: object, key: Uint8Array | undefined, hmac = 'sha256'): string {
  const input = `${b64url(header)}.${b64url(payload)}`;
  return `${input}.${key ? createHmac(hmac, key).update(input).digest('base64url') : ''}`;
}

let server: TestServer;
const clock = new TestClock();
let adminToken: { jwt_token: string; jwt_token_id: string };
let signingKey: Buffer;

beforeAll(async () => {
  server = await startTestServer({ env: { SERVICE_RATE_LIMIT: '1000' }, now: clock.now });
  await server.running.runtime.services.users.addUser('bob', 'bob-password-1', { admin: false });
  adminToken = await createToken(server, 'admin', TEST_ADMIN_PASSWORD, 'main');
  const { readFileSync } = await import('node:fs');
  signingKey = Buffer.from(readFileSync(`${server.dataFolder}/jwt-signing-key`, 'utf8').trim(), 'hex');
});
afterAll(() => server.dispose());

/** GET with BasicAuth from a chosen loopback source address (127.0.0.0/8 all reach the server). */
function requestFrom(localAddress: string, url: string, authorization: string): Promise<{ status: number }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { localAddress, headers: { authorization } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function expectBasic401(authorization: string | undefined) {
  const response = await request(`${server.api}/token`, authorization === undefined ? {} : { headers: { authorization } });
  expect(response.status).toBe(401);
  expect(response.headers.get('www-authenticate')).toBe('Basic realm="api"');
  expect(response.body).toEqual(UNAUTHORIZED);
}

async function expectBearer401(authorization: string | undefined, path = '/service') {
  const response = await request(`${server.api}${path}`, authorization === undefined ? {} : { headers: { authorization } });
  expect(response.status).toBe(401);
  expect(response.headers.get('www-authenticate')).toBe('Bearer');
  expect(response.body).toEqual(UNAUTHORIZED);
}

describe('BasicAuth on the token endpoints', () => {
  it('accepts the right password', async () => {
    expect((await request(`${server.api}/token`, { headers: { authorization: basicAuth('admin', TEST_ADMIN_PASSWORD) } })).status).toBe(200);
  });

  it.each([
    ['missing header', undefined],
    ['wrong scheme (Bearer)', () => bearer(adminToken.jwt_token)],
    ['wrong scheme (Digest)', () => 'Digest username="admin"'],
    ['wrong password', () => basicAuth('admin', 'wrong-password')],
    ['unknown user', () => basicAuth('nobody', TEST_ADMIN_PASSWORD)],
    ['empty user name', () => basicAuth('', TEST_ADMIN_PASSWORD)],
    ['no colon', () => `Basic ${Buffer.from('admin').toString('base64')}`],
    ['not base64', () => 'Basic !!!'],
    ['scheme only', () => 'Basic'],
  ])('%s: 401', async (_name, header) => {
    await expectBasic401(typeof header === 'function' ? header() : header);
  });

  it('refuses on every token endpoint and method before reading the body', async () => {
    const wrong = basicAuth('admin', 'nope-nope');
    for (const [method, path] of [['POST', '/token'], ['GET', '/token'], ['GET', `/token/${adminToken.jwt_token_id}`], ['DELETE', `/token/${adminToken.jwt_token_id}`]] as const) {
      const response = await request(`${server.api}${path}`, { method, headers: { authorization: wrong, 'content-type': 'application/json' }, ...(method === 'POST' ? { body: '{broken' } : {}) });
      expect(response.status, `${method} ${path}`).toBe(401);
    }
    expect((await request(`${server.api}/token/${adminToken.jwt_token_id}`, { headers: { authorization: basicAuth('admin', TEST_ADMIN_PASSWORD) } })).status).toBe(200);
  });
});

describe('Bearer tokens on every other /api path', () => {
  it('accepts a valid token on service, liveness, readiness and its alias', async () => {
    for (const path of ['/service', '/liveness']) {
      expect((await request(`${server.api}${path}`, { headers: { authorization: bearer(adminToken.jwt_token) } })).status, path).toBe(200);
    }
    // No Bitcoin node is configured here, so readiness answers 503 naming the chain: past authentication.
    for (const path of ['/readiness', '/readyness']) {
      const response = await request(`${server.api}${path}`, { headers: { authorization: bearer(adminToken.jwt_token) } });
      expect(response.body, path).toMatchObject({ message: 'not ready', checks: { store: 'ok', chain: 'failing' } });
    }
  });

  it.each([
    ['missing header', () => undefined],
    ['wrong scheme (Basic)', () => basicAuth('admin', TEST_ADMIN_PASSWORD)],
    ['malformed token', () => 'Bearer not.a.jwt!'],
    ['garbage', () => 'Bearer abc'],
    ['empty', () => 'Bearer '],
    ['alg none', () => bearer(forge({ alg: 'none', typ: 'JWT' }, { sub: 'admin', jti: adminToken.jwt_token_id, iat: Math.floor(clock.now() / 1000), exp: Math.floor(clock.now() / 1000) + 3600 }, undefined))],
    ['signed with HS512', () => bearer(forge({ alg: 'HS512', typ: 'JWT' }, { sub: 'admin', jti: adminToken.jwt_token_id, iat: Math.floor(clock.now() / 1000), exp: Math.floor(clock.now() / 1000) + 3600 }, signingKey, 'sha512'))],
    ['signed with another key', () => bearer(forge({ alg: 'HS256', typ: 'JWT' }, { sub: 'admin', jti: adminToken.jwt_token_id, iat: Math.floor(clock.now() / 1000), exp: Math.floor(clock.now() / 1000) + 3600 }, randomBytes(32)))],
    ['tampered payload', () => {
      const [h, p, s] = adminToken.jwt_token.split('.');
      const payload = JSON.parse(Buffer.from(p ?? '', 'base64url').toString());
      return bearer(`${h}.${b64url({ ...payload, exp: payload.exp + 1 })}.${s}`);
    }],
    ['well signed, but for an id that does not exist', () => bearer(forge({ alg: 'HS256', typ: 'JWT' }, { sub: 'admin', jti: '00000000-0000-4000-8000-000000000000', iat: Math.floor(clock.now() / 1000), exp: Math.floor(clock.now() / 1000) + 3600 }, signingKey))],
    ['well signed, another user\'s token id', () => bearer(forge({ alg: 'HS256', typ: 'JWT' }, { sub: 'bob', jti: adminToken.jwt_token_id, iat: Math.floor(clock.now() / 1000), exp: Math.floor(clock.now() / 1000) + 3600 }, signingKey))],
    ['well signed with the right id and user, but not the issued token', () => bearer(forge({ alg: 'HS256', typ: 'JWT' }, { sub: 'admin', jti: adminToken.jwt_token_id, iat: Math.floor(clock.now() / 1000) - 1, exp: Math.floor(clock.now() / 1000) + 3600 }, signingKey))],
  ])('%s: 401', async (_name, header) => {
    await expectBearer401(header());
    await expectBearer401(header(), '/liveness');
  });

  it('refuses a token once its life (1 seconds) is over', async () => {
    const short = await createToken(server, 'admin', TEST_ADMIN_PASSWORD, 'one-second', '1 seconds');
    expect((await request(`${server.api}/liveness`, { headers: { authorization: bearer(short.jwt_token) } })).status).toBe(200);
    clock.advance(1_000);
    await expectBearer401(bearer(short.jwt_token), '/liveness');
  });

  it('refuses a deleted token at once, also one used (and so remembered) just before', async () => {
    const token = await createToken(server, 'admin', TEST_ADMIN_PASSWORD, 'deleted-soon');
    expect((await request(`${server.api}/service`, { headers: { authorization: bearer(token.jwt_token) } })).status).toBe(200);
    await request(`${server.api}/token/${token.jwt_token_id}`, { method: 'DELETE', headers: { authorization: basicAuth('admin', TEST_ADMIN_PASSWORD) } });
    await expectBearer401(bearer(token.jwt_token));
  });

  it('revokes every token of a user whose password changes, and of a deleted user', async () => {
    const users = server.running.runtime.services.users;
    await users.addUser('carol', 'carol-password', { admin: false });
    const t1 = await createToken(server, 'carol', 'carol-password', 'one');
    const t2 = await createToken(server, 'carol', 'carol-password', 'two');
    expect((await request(`${server.api}/liveness`, { headers: { authorization: bearer(t1.jwt_token) } })).status).toBe(200);
    expect(await users.changePassword('carol', 'carol-password-2')).toEqual({ revokedTokens: 2 });
    await expectBearer401(bearer(t1.jwt_token), '/liveness');
    await expectBearer401(bearer(t2.jwt_token), '/liveness');
    await expectBasic401(basicAuth('carol', 'carol-password'));
    const t3 = await createToken(server, 'carol', 'carol-password-2', 'three');
    expect((await request(`${server.api}/liveness`, { headers: { authorization: bearer(t3.jwt_token) } })).status).toBe(200);
    await users.deleteUser('carol');
    await expectBearer401(bearer(t3.jwt_token), '/liveness');
  });

  it('follows a change of the admin flag at once for a token in use', async () => {
    const users = server.running.runtime.services.users;
    await users.addUser('dave', 'dave-password-1', { admin: true });
    const token = await createToken(server, 'dave', 'dave-password-1', 'flag-follows');
    const service = () => request(`${server.api}/service`, { headers: { authorization: bearer(token.jwt_token) } });
    expect((await service()).status).toBe(200);
    await users.setAdmin('dave', false);
    expect((await service()).status).toBe(403);
    await users.setAdmin('dave', true);
    expect((await service()).status).toBe(200);
  });

  it('gives 403 forbidden on the admin-only service details to an ordinary user', async () => {
    const bobs = await createToken(server, 'bob', 'bob-password-1', 'bob-service');
    const response = await request(`${server.api}/service`, { headers: { authorization: bearer(bobs.jwt_token) } });
    expect(response.status).toBe(403);
    expect(response.body).toMatchObject({ code: 'forbidden' });
    expect((await request(`${server.api}/liveness`, { headers: { authorization: bearer(bobs.jwt_token) } })).status).toBe(200);
  });
});

describe('rate limit of failed BasicAuth attempts', () => {
  it('gives 429 with Retry-After after rate_limit failures of a user name from one address, for the right password too, until the minute passes', async () => {
    const limitClock = new TestClock();
    const limited = await startTestServer({ env: { SERVICE_RATE_LIMIT: '3' }, now: limitClock.now });
    try {
      const wrong = { headers: { authorization: basicAuth('admin', 'wrong-password') } };
      for (let i = 0; i < 3; i++) expect((await request(`${limited.api}/token`, wrong)).status).toBe(401);
      const blocked = await request(`${limited.api}/token`, { headers: { authorization: basicAuth('admin', TEST_ADMIN_PASSWORD) } });
      expect(blocked.status).toBe(429);
      expect(blocked.body).toEqual({ message: 'Too many failed login attempts; retry later', code: 'rate_limited' });
      expect(blocked.headers.get('retry-after')).toBe('60');
      limitClock.advance(45_000);
      const later = await request(`${limited.api}/token`, wrong);
      expect(later.status).toBe(429);
      expect(later.headers.get('retry-after')).toBe('15');
      limitClock.advance(15_000);
      expect((await request(`${limited.api}/token`, { headers: { authorization: basicAuth('admin', TEST_ADMIN_PASSWORD) } })).status).toBe(200);
    } finally {
      await limited.dispose();
    }
  });

  it('counts every user name an address tries, up to five times rate_limit', async () => {
    const limited = await startTestServer({ env: { SERVICE_RATE_LIMIT: '2' } });
    try {
      for (let i = 0; i < 10; i++) {
        expect((await request(`${limited.api}/token`, { headers: { authorization: basicAuth(`ghost${i}`, 'x-password') } })).status).toBe(401);
      }
      const eleventh = await request(`${limited.api}/token`, { headers: { authorization: basicAuth('ghost10', 'x-password') } });
      expect(eleventh.status).toBe(429);
      expect(Number(eleventh.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await limited.dispose();
    }
  });

  it.each(['sqlite', 'postgres'] as const)('%s: checks at most rate_limit of 40 wrong passwords sent at the same moment; the others are 429', async (database) => {
    const limited = await startTestServer({ env: { SERVICE_RATE_LIMIT: '10' }, database });
    try {
      const wrong = { headers: { authorization: basicAuth('admin', 'wrong-password') } };
      const statuses = await Promise.all(Array.from({ length: 40 }, () => request(`${limited.api}/token`, wrong).then((r) => r.status)));
      const checked = statuses.filter((s) => s === 401).length;
      expect(statuses.filter((s) => s !== 401 && s !== 429)).toEqual([]);
      expect(checked).toBeLessThanOrEqual(10);
      expect(statuses.filter((s) => s === 429).length).toBe(40 - checked);
      // Refused attempts do not count; one at a time, the rest of the limit is checked, then 429.
      let more = 0;
      while ((await request(`${limited.api}/token`, wrong)).status === 401) more++;
      expect(checked + more).toBe(10);
    } finally {
      await limited.dispose();
    }
  });

  it.each(['sqlite', 'postgres'] as const)('%s: lets 20 right-password token creations sent at the same moment all succeed (rate_limit 3): they wait their turn', async (database) => {
    const limited = await startTestServer({ env: { SERVICE_RATE_LIMIT: '3' }, database });
    try {
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          request(`${limited.api}/token`, { method: 'POST', headers: { authorization: basicAuth('admin', TEST_ADMIN_PASSWORD) }, json: { jwt_token_description: `parallel ${i}`, jwt_token_life: '1 hours' } }),
        ),
      );
      expect(answers.map((a) => a.status)).toEqual(Array(20).fill(201));
      // None of them counted: the limit is whole for the wrong passwords that follow.
      const wrong = { headers: { authorization: basicAuth('admin', 'wrong-password') } };
      for (let i = 0; i < 3; i++) expect((await request(`${limited.api}/token`, wrong)).status).toBe(401);
      expect((await request(`${limited.api}/token`, wrong)).status).toBe(429);
    } finally {
      await limited.dispose();
    }
  });

  it('refuses right and wrong passwords alike while the failures are at the limit, and checks at most the limit of a mixed burst', async () => {
    const limited = await startTestServer({ env: { SERVICE_RATE_LIMIT: '4' } });
    try {
      const right = { headers: { authorization: basicAuth('admin', TEST_ADMIN_PASSWORD) } };
      const wrong = { headers: { authorization: basicAuth('admin', 'wrong-password') } };
      const statuses = await Promise.all(Array.from({ length: 30 }, (_, i) => request(`${limited.api}/token`, i % 3 === 0 ? right : wrong).then((r) => r.status)));
      expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(4);
      expect(statuses.filter((s) => s !== 200 && s !== 401 && s !== 429)).toEqual([]);
    } finally {
      await limited.dispose();
    }
  });

  it('locks out the address that fails, not the user: the right password from another address still works', async () => {
    const limited = await startTestServer({ env: { SERVICE_RATE_LIMIT: '3' } });
    try {
      const wrong = basicAuth('admin', 'wrong-password');
      for (let i = 0; i < 3; i++) expect((await requestFrom('127.0.0.2', `${limited.api}/token`, wrong)).status).toBe(401);
      expect((await requestFrom('127.0.0.2', `${limited.api}/token`, wrong)).status).toBe(429);
      expect((await requestFrom('127.0.0.2', `${limited.api}/token`, basicAuth('admin', TEST_ADMIN_PASSWORD))).status).toBe(429);
      // The real admin, from another address, is not locked out, and neither are its own next failures counted against 127.0.0.2.
      expect((await requestFrom('127.0.0.1', `${limited.api}/token`, basicAuth('admin', TEST_ADMIN_PASSWORD))).status).toBe(200);
      expect((await requestFrom('127.0.0.1', `${limited.api}/token`, wrong)).status).toBe(401);
      expect((await requestFrom('127.0.0.1', `${limited.api}/token`, basicAuth('admin', TEST_ADMIN_PASSWORD))).status).toBe(200);
      // Successful logins do not use up the limit.
      for (let i = 0; i < 5; i++) expect((await requestFrom('127.0.0.1', `${limited.api}/token`, basicAuth('admin', TEST_ADMIN_PASSWORD))).status).toBe(200);
    } finally {
      await limited.dispose();
    }
  });

  it('keeps the counters in the store, so a restarted (or second) instance sees them', async () => {
    const first = await startTestServer({ env: { SERVICE_RATE_LIMIT: '2' } });
    for (let i = 0; i < 2; i++) await request(`${first.api}/token`, { headers: { authorization: basicAuth('admin', 'wrong-password') } });
    await first.stop();
    const second = await startTestServer({ dataFolder: first.dataFolder, env: { SERVICE_RATE_LIMIT: '2' } });
    try {
      expect((await request(`${second.api}/token`, { headers: { authorization: basicAuth('admin', TEST_ADMIN_PASSWORD) } })).status).toBe(429);
    } finally {
      await second.dispose();
      await first.dispose();
    }
  });
});
