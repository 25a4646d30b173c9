/** Logs: JSON lines, one per request, and never a password, token or Authorization header. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startCliServer } from '../support/cli.js';
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
      await request(`${server.api}/no-such-path?secret=query`);
      await request(`${server.url}/healthz/live`, { method: 'POST' });
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
        ['GET', '/api/v1alpha/no-such-path', 404],
        ['POST', '/healthz/live', 405],
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

  it('reach stdout of a served process each once and in order: a quiet server\'s line soon, the last ones at exit', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'wcs-logs-'));
    const server = await startCliServer({ SERVICE_DATA_FOLDER: folder, SERVICE_PORT: '0', SERVICE_LOG_LEVEL: 'info' });
    const requestLines = () =>
      server
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { msg: string; path?: string; status?: number; method?: string; reqId?: string })
        .filter((line) => line.msg === 'request');
    try {
      // One request on a quiet server: its line shows without waiting for more lines or for the exit.
      await request(`${server.url}/healthz/live?probe=1`);
      for (let waited = 0; requestLines().length === 0 && waited < 5_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
      expect(requestLines()).toEqual([expect.objectContaining({ method: 'GET', path: '/healthz/live', status: 200 })]);

      // Many lines (several 4 KB blocks), then the stop at once: none is lost, none doubled, none reordered.
      const count = 400;
      for (let i = 0; i < count; i++) expect((await request(`${server.url}/nothing/${i}`)).status).toBe(404);
      server.child.kill('SIGTERM');
      expect(await server.exited).toBe(0);
      const lines = requestLines();
      expect(lines.map((line) => line.path)).toEqual(['/healthz/live', ...Array.from({ length: count }, (_, i) => `/nothing/${i}`)]);
      expect(new Set(lines.map((line) => line.reqId)).size).toBe(count + 1);
      const messages = server.output().split('\n').filter((line) => line.startsWith('{')).map((line) => (JSON.parse(line) as { msg: string }).msg);
      expect(messages.at(-1)).toBe('service stopped');
    } finally {
      server.child.kill('SIGKILL');
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
