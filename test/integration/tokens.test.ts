/** The four token endpoints over real HTTP, with the texts and codes of the contract. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClock } from '../support/clock.js';
import { TEST_ADMIN_PASSWORD, basicAuth, bearer, createToken, request, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
const clock = new TestClock();
const admin = () => basicAuth('admin', TEST_ADMIN_PASSWORD);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

beforeAll(async () => {
  server = await startTestServer({ env: { SERVICE_RATE_LIMIT: '1000' }, now: clock.now });
  await server.running.runtime.services.users.addUser('bob', 'bob-password-1', { admin: false });
});
afterAll(() => server.dispose());

describe('POST /v1alpha/token', () => {
  it('creates a token: 201, message, UUID id, the JWT once, description and life in seconds', async () => {
    const response = await request(`${server.api}/token`, {
      method: 'POST',
      headers: { authorization: admin() },
      json: { jwt_token_description: 'laptop', jwt_token_life: '30 days' },
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(Object.keys(response.body)).toEqual(['message', 'jwt_token_id', 'jwt_token', 'jwt_token_description', 'jwt_token_life']);
    expect(response.body).toMatchObject({ message: 'Token generated', jwt_token_description: 'laptop', jwt_token_life: 2_592_000 });
    expect(response.body.jwt_token_id).toMatch(UUID);
    const [header, payload] = (response.body.jwt_token as string).split('.').slice(0, 2).map((p) => JSON.parse(Buffer.from(p, 'base64url').toString()));
    expect(header.alg).toBe('HS256');
    expect(payload).toEqual({ sub: 'admin', jti: response.body.jwt_token_id, iat: Math.floor(clock.now() / 1000), exp: Math.floor(clock.now() / 1000) + 2_592_000 });
  });

  it('stores only a hash of the token', async () => {
    const created = await createToken(server, 'admin', TEST_ADMIN_PASSWORD, 'hash-check');
    const stored = await server.running.runtime.store.tokens.findForUser('admin', created.jwt_token_id);
    expect(stored?.tokenHash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(stored)).not.toContain(created.jwt_token);
  });

  it('trims the description and ignores unknown fields', async () => {
    const response = await request(`${server.api}/token`, {
      method: 'POST',
      headers: { authorization: admin() },
      json: { jwt_token_description: '  padded  ', jwt_token_life: '1 hours', surplus: [1, 2] },
    });
    expect(response.status).toBe(201);
    expect(response.body.jwt_token_description).toBe('padded');
    expect(response.body).not.toHaveProperty('surplus');
  });

  it('takes jwt_token_life given as a JSON number as seconds', async () => {
    const response = await request(`${server.api}/token`, {
      method: 'POST',
      headers: { authorization: admin() },
      json: { jwt_token_description: 'numeric life', jwt_token_life: 3600 },
    });
    expect(response.status, response.text).toBe(201);
    expect(response.body.jwt_token_life).toBe(3600);
    const read = await request(`${server.api}/token/${response.body.jwt_token_id}`, { headers: { authorization: admin() } });
    expect(read.body).toMatchObject({ jwt_token_life: 3600, expiry_status: 'Valid' });
    expect(read.body.jwt_token_life_remaining).toBeGreaterThan(3590);
  });

  it.each([
    [{ jwt_token_description: 'x' }, '/jwt_token_life'],
    [{ jwt_token_life: '1 days' }, '/jwt_token_description'],
    [{ jwt_token_description: 'x', jwt_token_life: 0 }, '/jwt_token_life'],
    [{ jwt_token_description: 'x', jwt_token_life: -3600 }, '/jwt_token_life'],
    [{ jwt_token_description: 'x', jwt_token_life: 1.5 }, '/jwt_token_life'],
    [{ jwt_token_description: 'x', jwt_token_life: 1e30 }, '/jwt_token_life'],
    [{ jwt_token_description: 'x', jwt_token_life: 366 * 86_400 }, '/jwt_token_life'],
    [{ jwt_token_description: 'x', jwt_token_life: true }, '/jwt_token_life'],
    [{ jwt_token_description: 7, jwt_token_life: '1 days' }, '/jwt_token_description'],
    [{ jwt_token_description: 'x', jwt_token_life: '1 fortnight' }, '/jwt_token_life'],
    [{ jwt_token_description: 'x', jwt_token_life: '0 days' }, '/jwt_token_life'],
    [{ jwt_token_description: 'x', jwt_token_life: '-2 hours' }, '/jwt_token_life'],
    [{ jwt_token_description: 'x', jwt_token_life: '366 days' }, '/jwt_token_life'],
    [{ jwt_token_description: '   ', jwt_token_life: '1 days' }, '/jwt_token_description'],
    [{ jwt_token_description: 'x'.repeat(257), jwt_token_life: '1 days' }, '/jwt_token_description'],
  ])('refuses %j with 400 naming %s', async (json, path) => {
    const response = await request(`${server.api}/token`, { method: 'POST', headers: { authorization: admin() }, json });
    expect(response.status).toBe(400);
    expect(response.body.code).toMatch(/^[a-z_]+$/);
    expect(typeof response.body.message).toBe('string');
    expect(response.body.errors).toEqual(expect.arrayContaining([{ path, message: expect.any(String) }]));
  });

  it('refuses a body that is not an object', async () => {
    for (const json of [[], 'text', 42, null]) {
      const response = await request(`${server.api}/token`, { method: 'POST', headers: { authorization: admin() }, json });
      expect(response.status, JSON.stringify(json)).toBe(400);
      expect(response.body.code).toBe('invalid_request');
    }
  });

  it('accepts 256 characters of description and the configured maximum life', async () => {
    const response = await request(`${server.api}/token`, {
      method: 'POST',
      headers: { authorization: admin() },
      json: { jwt_token_description: 'é'.repeat(256), jwt_token_life: '365 days' },
    });
    expect(response.status).toBe(201);
    expect(response.body.jwt_token_life).toBe(31_536_000);
  });

  it('refuses a duplicate description of the same user with 409, allows it for another user', async () => {
    await createToken(server, 'admin', TEST_ADMIN_PASSWORD, 'shared-name');
    const duplicate = await request(`${server.api}/token`, {
      method: 'POST',
      headers: { authorization: admin() },
      json: { jwt_token_description: ' shared-name ', jwt_token_life: '1 days' },
    });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body).toMatchObject({ code: 'duplicate_token_description', message: 'A token with this description already exists' });
    await createToken(server, 'bob', 'bob-password-1', 'shared-name');
  });
});

describe('GET /v1alpha/token and /v1alpha/token/{id}', () => {
  it('lists only the caller\'s tokens, keyed by id, with remaining life and without the token value', async () => {
    const fresh = await startTestServer({ now: clock.now });
    try {
      const empty = await request(`${fresh.api}/token`, { headers: { authorization: admin() } });
      expect(empty.status).toBe(200);
      expect(empty.body).toEqual({ message: 'Tokens exists', jwt_tokens: {} });
      const a = await createToken(fresh, 'admin', TEST_ADMIN_PASSWORD, 'a', '2 hours');
      const b = await createToken(fresh, 'admin', TEST_ADMIN_PASSWORD, 'b', '1 days');
      clock.advance(1_500);
      const list = await request(`${fresh.api}/token`, { headers: { authorization: admin() } });
      expect(list.body).toEqual({
        message: 'Tokens exists',
        jwt_tokens: {
          [a.jwt_token_id]: { jwt_token_description: 'a', jwt_token_life: 7_200, jwt_token_remaining_life: 7_198.5, expiry_status: 'Valid' },
          [b.jwt_token_id]: { jwt_token_description: 'b', jwt_token_life: 86_400, jwt_token_remaining_life: 86_398.5, expiry_status: 'Valid' },
        },
      });
      expect(list.text).not.toContain(a.jwt_token);
    } finally {
      await fresh.dispose();
    }
  });

  it('reads one token with jwt_token_life_remaining and expiry_status', async () => {
    const created = await createToken(server, 'admin', TEST_ADMIN_PASSWORD, 'single-read', '1 hours');
    clock.advance(250);
    const response = await request(`${server.api}/token/${created.jwt_token_id}`, { headers: { authorization: admin() } });
    expect(response.status).toBe(200);
    expect(Object.keys(response.body)).toEqual(['message', 'jwt_token_description', 'jwt_token_life', 'jwt_token_life_remaining', 'expiry_status']);
    expect(response.body).toMatchObject({ message: 'Token exists', jwt_token_description: 'single-read', jwt_token_life: 3_600, expiry_status: 'Valid' });
    expect(response.body.jwt_token_life_remaining).toBeGreaterThan(3_598);
    expect(response.body.jwt_token_life_remaining).toBeLessThan(3_600);
    expect(response.text).not.toContain(created.jwt_token);
  });

  it('keeps an expired token listed with remaining life 0 and status Expired', async () => {
    const created = await createToken(server, 'bob', 'bob-password-1', 'short-lived', '1 seconds');
    clock.advance(2_000);
    const one = await request(`${server.api}/token/${created.jwt_token_id}`, { headers: { authorization: basicAuth('bob', 'bob-password-1') } });
    expect(one.body).toMatchObject({ jwt_token_life: 1, jwt_token_life_remaining: 0, expiry_status: 'Expired' });
    const list = await request(`${server.api}/token`, { headers: { authorization: basicAuth('bob', 'bob-password-1') } });
    expect(list.body.jwt_tokens[created.jwt_token_id]).toMatchObject({ jwt_token_remaining_life: 0, expiry_status: 'Expired' });
  });

  it('answers 404 for another user\'s token id and for an unknown id', async () => {
    const bobs = await createToken(server, 'bob', 'bob-password-1', 'bobs-own');
    for (const id of [bobs.jwt_token_id, '00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const read = await request(`${server.api}/token/${id}`, { headers: { authorization: admin() } });
      expect(read.status).toBe(404);
      expect(read.body).toEqual({ message: 'Token not found', code: 'token_not_found' });
      const del = await request(`${server.api}/token/${id}`, { method: 'DELETE', headers: { authorization: admin() } });
      expect(del.status).toBe(404);
    }
    const list = await request(`${server.api}/token`, { headers: { authorization: admin() } });
    expect(Object.keys(list.body.jwt_tokens)).not.toContain(bobs.jwt_token_id);
    // Bob's token survived the admin's attempt.
    const stillThere = await request(`${server.api}/token/${bobs.jwt_token_id}`, { headers: { authorization: basicAuth('bob', 'bob-password-1') } });
    expect(stillThere.status).toBe(200);
  });
});

describe('DELETE /v1alpha/token/{id}', () => {
  it('deletes the token and the token is refused from then on', async () => {
    const created = await createToken(server, 'admin', TEST_ADMIN_PASSWORD, 'to-delete');
    const before = await request(`${server.api}/liveness`, { headers: { authorization: bearer(created.jwt_token) } });
    expect(before.status).toBe(200);
    const deleted = await request(`${server.api}/token/${created.jwt_token_id}`, { method: 'DELETE', headers: { authorization: admin() } });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ message: 'Token deleted' });
    const after = await request(`${server.api}/liveness`, { headers: { authorization: bearer(created.jwt_token) } });
    expect(after.status).toBe(401);
    const again = await request(`${server.api}/token/${created.jwt_token_id}`, { method: 'DELETE', headers: { authorization: admin() } });
    expect(again.status).toBe(404);
  });

  it('accepts trailing slashes on token paths', async () => {
    const created = await createToken(server, 'admin', TEST_ADMIN_PASSWORD, 'slashes');
    expect((await request(`${server.api}/token/`, { headers: { authorization: admin() } })).status).toBe(200);
    expect((await request(`${server.api}/token/${created.jwt_token_id}/`, { headers: { authorization: admin() } })).status).toBe(200);
    expect((await request(`${server.api}/token/${created.jwt_token_id}/`, { method: 'DELETE', headers: { authorization: admin() } })).body).toEqual({ message: 'Token deleted' });
  });
});
