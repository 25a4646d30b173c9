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

describe('integers in query strings', () => {
  it.each(['1e3', '0x10', '1.0', '+5', ' 7', '', '1_000', '0b1', 'Infinity'])('from=%j is 400 naming the parameter', async (value) => {
    const response = await request(`${server.api}/wallets/edges/addresses?from=${encodeURIComponent(value)}&count=2`, { headers: { authorization: bearer(token) } });
    expect(response.status, response.text).toBe(400);
    expect(response.body.code).toBe('invalid_request');
    expect(response.body.errors).toEqual([{ path: '/querystring/from', message: expect.any(String) }]);
    expect(response.body.message).toContain('from');
  });

  it('plain digits work, on every integer query parameter', async () => {
    const page = await request(`${server.api}/wallets/edges/addresses?from=10&count=2`, { headers: { authorization: bearer(token) } });
    expect(page.status, page.text).toBe(200);
    expect(page.body.addresses.map((a: { index: number }) => a.index)).toEqual([10, 11]);
    expect((await request(`${server.api}/wallets/edges?limit=0x1`, { headers: { authorization: bearer(token) } })).body.errors).toEqual([
      { path: '/querystring/limit', message: expect.any(String) },
    ]);
    expect((await request(`${server.api}/service/full_txlist?offset=1e1`, { headers: { authorization: bearer(token) } })).status).toBe(400);
    expect((await request(`${server.api}/service/full_txlist?offset=10&limit=5`, { headers: { authorization: bearer(token) } })).status).toBe(200);
  });
});

describe('what errors reveal', () => {
  it('chain_unavailable names neither the address nor the port of the node', async () => {
    const down = await startTestServer({
      env: { SERVICE_NETWORK: 'regtest', SERVICE_BITCOIND_URL: 'http://127.0.0.1:9', SERVICE_BITCOIND_USER: 'rpc', SERVICE_BITCOIND_PASSWORD: 'rpc-secret', SERVICE_SYNC_INTERVAL: '0' },
    });
    try {
      const t = (await createToken(down, 'admin', TEST_ADMIN_PASSWORD, 'down')).jwt_token;
      const response = await request(`${down.api}/wallets`, {
        method: 'POST',
        headers: { authorization: bearer(t) },
        json: { name: 'At tip', recv_descriptor: wallets.w_wpkh!.recv_descriptor, change_descriptor: wallets.w_wpkh!.change_descriptor },
      });
      expect(response.status, response.text).toBe(503);
      expect(response.body.code).toBe('chain_unavailable');
      expect(response.text).not.toMatch(/127\.0\.0\.1|:9\b|rpc-secret/);
    } finally {
      await down.dispose();
    }
  });

  it('a start refused for a bad bitcoind_url does not echo its password', async () => {
    await expect(startTestServer({ env: { SERVICE_BITCOIND_URL: 'http://rpcuser:hunter2-secret@127.0.0.1:8332 extra' } })).rejects.toThrow(
      /^Invalid setting SERVICE_BITCOIND_URL .*\[redacted\]@127\.0\.0\.1:8332/,
    );
    await expect(startTestServer({ env: { SERVICE_BITCOIND_URL: 'ftp://rpcuser:hunter2-secret@node' } })).rejects.not.toThrow(/hunter2/);
  });
});
