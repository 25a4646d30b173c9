/** Response headers a security scanner checks, on success, error, 404, probe and docs answers. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_CSP, DOCS_CSP } from '../../src/api/security-headers.js';
import { TEST_ADMIN_PASSWORD, basicAuth, bearer, createToken, request, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.dispose());

function expectCommonHeaders(headers: Headers): void {
  expect(headers.get('x-content-type-options')).toBe('nosniff');
  expect(headers.get('x-frame-options')).toBe('DENY');
  expect(headers.get('referrer-policy')).toBe('no-referrer');
  expect(headers.get('x-powered-by')).toBeNull();
  expect(headers.get('server')).toBeNull();
  expect(headers.get('access-control-allow-origin')).toBeNull();
}

describe('security headers', () => {
  it('are on API answers of every kind, with no-store and the strict policy', async () => {
    const token = await createToken(server, 'admin', TEST_ADMIN_PASSWORD, 'headers');
    const answers = [
      await request(`${server.api}/token`, { headers: { authorization: basicAuth('admin', TEST_ADMIN_PASSWORD), origin: 'https://evil.example' } }),
      await request(`${server.api}/service`, { headers: { authorization: bearer(token.jwt_token) } }),
      await request(`${server.api}/service`, { headers: { authorization: 'Bearer nope' } }),
      await request(`${server.api}/no-such-thing`),
      await request(`${server.api}/token`, { method: 'PUT', headers: { authorization: basicAuth('admin', TEST_ADMIN_PASSWORD) } }),
      await request(`${server.api}/token`, { method: 'POST', headers: { authorization: basicAuth('admin', TEST_ADMIN_PASSWORD), 'content-type': 'application/json' }, body: '{' }),
      await request(`${server.url}/healthz/live`),
      await request(`${server.url}/docs/openapi.json`),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 401, 404, 405, 400, 200, 200]);
    for (const answer of answers) {
      expectCommonHeaders(answer.headers);
      expect(answer.headers.get('cache-control')).toBe('no-store');
      expect(answer.headers.get('content-security-policy')).toBe(API_CSP);
      expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    }
  });

  it('give the docs page a policy it works under: every script and style it loads is same-origin', async () => {
    const page = await request(`${server.url}/docs/api/`);
    expect(page.status).toBe(200);
    expectCommonHeaders(page.headers);
    expect(page.headers.get('content-security-policy')).toBe(DOCS_CSP);
    // script-src 'self' without 'unsafe-inline': the page may hold no inline script.
    expect(page.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/i);
    const sources = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? '');
    expect(sources.length).toBeGreaterThan(2);
    for (const source of sources) {
      expect(source).not.toMatch(/^(https?:)?\/\//);
      const asset = await fetch(new URL(source, `${server.url}/docs/api/`));
      expect(asset.status, source).toBe(200);
      await asset.arrayBuffer();
      expect(asset.headers.get('x-content-type-options')).toBe('nosniff');
      expect(asset.headers.get('content-security-policy')).toBe(DOCS_CSP);
    }
    // The initializer fetches the OpenAPI document from this origin (connect-src 'self').
    const initializer = await (await fetch(`${server.url}/docs/api/static/swagger-initializer.js`)).text();
    const specUrl = /\burl: resolveUrl\('([^']+)'\)/.exec(initializer)?.[1];
    expect(specUrl).toMatch(/^\.?\/?[a-z]/);
    const spec = await request(new URL(specUrl ?? '', `${server.url}/docs/api/`).href);
    expect(spec.status).toBe(200);
    expect(spec.body.openapi).toBe('3.1.0');
  });
});
