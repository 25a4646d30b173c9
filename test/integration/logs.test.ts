/** Logs: JSON lines, one per request, and never a password, token or Authorization header. */
import { describe, expect, it } from 'vitest';
import { basicAuth, bearer, createToken, request, startTestServer } from '../support/server.js';

describe('request logs', () => {
  it('hold one JSON line per request with method, path and status, and no secret', async () => {
    const password = 'log-test-admin-password';
    const server = await startTestServer({ env: { SERVICE_ADMIN_PASSWORD: password, SERVICE_JWT_KEY: 'jwt-key-that-must-never-be-logged-000000' } });
    try {
      await server.running.runtime.services.users.addUser('erin', 'erin-secret-password', { admin: false });
      const token = await createToken(server, 'admin', password, 'logged');
      await request(`${server.api}/service`, { headers: { authorization: bearer(token.jwt_token) } });
      await request(`${server.api}/token`, { headers: { authorization: basicAuth('erin', 'wrong-erin-password') } });
      await request(`${server.api}/token`, { method: 'POST', headers: { authorization: basicAuth('erin', 'erin-secret-password'), 'content-type': 'application/json' }, body: '{"jwt_token_description": "broken-json-secret' });
      await request(`${server.api}/liveness`, { headers: { authorization: `Bearer ${token.jwt_token}x` } });
      await request(`${server.api}/token/${token.jwt_token_id}`, { method: 'DELETE', headers: { authorization: basicAuth('admin', password) } });
      await server.stop();

      const lines = server.logs.map((line) => JSON.parse(line));
      const requests = lines.filter((l) => l.msg === 'request');
      expect(requests.map((l) => [l.method, l.path, l.status])).toEqual([
        ['POST', '/api/v1alpha/token', 201],
        ['GET', '/api/v1alpha/service', 200],
        ['GET', '/api/v1alpha/token', 401],
        ['POST', '/api/v1alpha/token', 400],
        ['GET', '/api/v1alpha/liveness', 401],
        ['DELETE', `/api/v1alpha/token/${token.jwt_token_id}`, 200],
      ]);
      // Each line names its request, so that an error logged for it can be matched.
      expect(new Set(requests.map((l) => l.reqId)).size).toBe(requests.length);
      const all = server.logs.join('');
      const basic = (u: string, p: string) => basicAuth(u, p).slice('Basic '.length);
      for (const secret of [
        password, 'erin-secret-password', 'wrong-erin-password', token.jwt_token, token.jwt_token.split('.')[2]!,
        basic('admin', password), basic('erin', 'erin-secret-password'), 'jwt-key-that-must-never-be-logged', 'broken-json-secret',
      ]) {
        expect(all).not.toContain(secret);
      }
      expect(all.toLowerCase()).not.toContain('authorization');
    } finally {
      await server.dispose();
    }
  });
});
