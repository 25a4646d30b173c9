/**
 * Requests as other clients send them: empty JSON bodies, bodies without a content type,
 * token lifetimes as JSON numbers, and integers in query strings.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wallets } from './wallet-helpers.js';
import { TEST_ADMIN_PASSWORD, basicAuth, bearer, createToken, request, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let token: string;
const admin = () => basicAuth('admin', TEST_ADMIN_PASSWORD);
const json = { 'content-type': 'application/json' };

beforeAll(async () => {
  server = await startTestServer({ env: { SERVICE_NETWORK: 'regtest', SERVICE_RATE_LIMIT: '1000' } });
  token = (await createToken(server, 'admin', TEST_ADMIN_PASSWORD, 'edges')).jwt_token;
  const created = await request(`${server.api}/wallets`, {
    method: 'POST',
    headers: { authorization: bearer(token) },
    json: { name: 'Edges', alias: 'edges', recv_descriptor: wallets.w_wpkh!.recv_descriptor, change_descriptor: wallets.w_wpkh!.change_descriptor, birthday: 0 },
  });
  expect(created.status, created.text).toBe(201);
});
afterAll(() => server.dispose());

describe('Content-Type: application/json with an empty body', () => {
  it('is a request without a body on DELETE and on bodiless POSTs', async () => {
    const created = await createToken(server, 'admin', TEST_ADMIN_PASSWORD, 'empty-body delete');
    const deleted = await request(`${server.api}/token/${created.jwt_token_id}`, { method: 'DELETE', headers: { authorization: admin(), ...json }, body: '' });
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body).toEqual({ message: 'Token deleted' });
    const next = await request(`${server.api}/wallets/edges/addresses/next`, { method: 'POST', headers: { authorization: bearer(token), ...json }, body: '' });
    expect(next.status, next.text).toBe(200);
    const rescan = await request(`${server.api}/wallets/edges/rescan`, { method: 'POST', headers: { authorization: bearer(token), ...json }, body: '' });
    expect(rescan.status, rescan.text).toBe(202);
  });

  it('still answers 400 on a route whose body is required', async () => {
    const empty = await request(`${server.api}/token`, { method: 'POST', headers: { authorization: admin(), ...json }, body: '' });
    expect(empty.status).toBe(400);
    expect(empty.body.code).toBe('invalid_request');
  });
});
