/** CORS: off by default; with configured origins, only those get the headers and a preflight answer. */
import { describe, expect, it } from 'vitest';
import { TEST_ADMIN_PASSWORD, basicAuth, request, startTestServer } from '../support/server.js';

describe('CORS', () => {
  it('sends no CORS header by default', async () => {
    const server = await startTestServer();
    try {
      const response = await request(`${server.api}/token`, { headers: { origin: 'https://app.example', authorization: basicAuth('admin', TEST_ADMIN_PASSWORD) } });
      expect(response.status).toBe(200);
      expect(response.headers.get('access-control-allow-origin')).toBeNull();
    } finally {
      await server.dispose();
    }
  });

  it('allows only the configured origins and answers their preflight', async () => {
    const server = await startTestServer({ env: { SERVICE_CORS_ORIGINS: 'https://app.example' } });
    try {
      const allowed = await request(`${server.api}/token`, { headers: { origin: 'https://app.example', authorization: basicAuth('admin', TEST_ADMIN_PASSWORD) } });
      expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example');
      const other = await request(`${server.api}/token`, { headers: { origin: 'https://evil.example', authorization: basicAuth('admin', TEST_ADMIN_PASSWORD) } });
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
      const preflight = await request(`${server.api}/token`, { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' } });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-headers')).toBe('Authorization, Content-Type');
      const foreignPreflight = await request(`${server.api}/token`, { method: 'OPTIONS', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
      expect(foreignPreflight.status).toBe(405);
    } finally {
      await server.dispose();
    }
  });
});
