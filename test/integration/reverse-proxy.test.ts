/**
 * Behind a reverse proxy that ends TLS (`trust_proxy`): the proxy's X-Forwarded-For names the client
 * (failed-login limits, the log line) and X-Forwarded-Proto the scheme (the web interface's origin check,
 * the Secure cookie). The same headers from anyone else change nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_ADMIN_PASSWORD, basicAuth, request, startTestServer, type TestServer } from '../support/server.js';
import { ensureWebAssets, WebClient } from '../support/web-client.js';

let behindProxy: TestServer;
let direct: TestServer;
let proxyElsewhere: TestServer;

beforeAll(async () => {
  ensureWebAssets();
  // Loopback is where this test's requests come from, as they would from a proxy on the same host.
  behindProxy = await startTestServer({ env: { SERVICE_TRUST_PROXY: '127.0.0.1', SERVICE_RATE_LIMIT: '2' } });
  direct = await startTestServer({ env: { SERVICE_RATE_LIMIT: '2' } });
  proxyElsewhere = await startTestServer({ env: { SERVICE_TRUST_PROXY: '10.0.0.0/8', SERVICE_RATE_LIMIT: '2' } });
});
afterAll(async () => {
  for (const server of [behindProxy, direct, proxyElsewhere]) await server?.dispose();
});

/** A browser on https://… whose requests a TLS-ending proxy forwards with its headers. */
const browserThroughProxy = (server: TestServer, client: string) =>
  new WebClient(server.url, { headers: { 'x-forwarded-proto': 'https', 'x-forwarded-for': client }, origin: `https://${new URL(server.url).host}` });

/** A token request as a client behind the proxy sends it. */
const tokenRequest = (server: TestServer, client: string, password: string) =>
  request(`${server.api}/token`, {
    method: 'POST',
    headers: { authorization: basicAuth('admin', password), 'x-forwarded-for': client },
    json: { jwt_token_description: `from ${client} ${Math.random()}`, jwt_token_life: '1 hours' },
  });

describe('the web interface behind a proxy that ends TLS', () => {
  it('signs in from an https page and marks the session cookie Secure when the proxy is trusted', async () => {
    const browser = browserThroughProxy(behindProxy, '203.0.113.7');
    const signedIn = await browser.signIn('admin', TEST_ADMIN_PASSWORD);
    expect(signedIn.status, signedIn.text).toBe(303);
    const cookie = signedIn.headers.getSetCookie().find((line) => line.startsWith('wcs_session='));
    expect(cookie).toMatch(/;\s*Secure/i);
    expect((await browser.get('/')).status).toBe(200);
  });

  it('refuses the same form post as from another origin when no proxy is trusted, or another one is', async () => {
    for (const server of [direct, proxyElsewhere]) {
      const browser = browserThroughProxy(server, '203.0.113.7');
      const refused = await browser.signIn('admin', TEST_ADMIN_PASSWORD);
      expect(refused.status).toBe(403);
      expect(refused.text).toContain('This form was not sent from a page of this service');
      expect(browser.cookie).toBeUndefined();
    }
  });
});

describe('failed logins behind a proxy', () => {
  it('count per client when the proxy is trusted: one client\'s failures do not lock another out', async () => {
    for (let attempt = 1; attempt <= 2; attempt++) expect((await tokenRequest(behindProxy, '203.0.113.7', 'wrong password')).status).toBe(401);
    expect((await tokenRequest(behindProxy, '203.0.113.7', 'wrong password')).status).toBe(429);
    expect((await tokenRequest(behindProxy, '203.0.113.8', TEST_ADMIN_PASSWORD)).status).toBe(201);
    // The log line names the client, not the proxy.
    expect(behindProxy.logs.some((line) => line.includes('"path":"/api/v1alpha/token"') && line.includes('"ip":"203.0.113.8"'))).toBe(true);
  });

  it('count for every client together when the header comes from an untrusted peer, which cannot name itself', async () => {
    for (const server of [direct, proxyElsewhere]) {
      for (let attempt = 1; attempt <= 2; attempt++) expect((await tokenRequest(server, '203.0.113.7', 'wrong password')).status).toBe(401);
      const other = await tokenRequest(server, '203.0.113.8', TEST_ADMIN_PASSWORD);
      expect(other.status).toBe(429);
      expect(server.logs.some((line) => line.includes('203.0.113.'))).toBe(false);
    }
  });
});
