/** Service details, liveness, readiness (with pluggable checks) and the /healthz probes. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRpcTestServer, type RpcTestServer } from '../support/rpc-server.js';
import { TEST_ADMIN_PASSWORD, bearer, createToken, request, startTestServer, type TestServer } from '../support/server.js';

const SECRETS = {
  SERVICE_ADMIN_PASSWORD: 'admin-secret-password-1',
  SERVICE_JWT_KEY: 'operator-jwt-key-0123456789abcdefghijklmnop',
  SERVICE_BITCOIND_USER: 'rpcuser',
  SERVICE_BITCOIND_PASSWORD: 'rpc-secret-password',
  SERVICE_BITCOIND_COOKIE: '/var/lib/bitcoind/.cookie',
  SERVICE_DATABASE_URL: '', // SQLite in the data folder
};

let node: RpcTestServer;
let server: TestServer;
let adminToken: string;
let failStore = false;

beforeAll(async () => {
  // A real JSON-RPC node, so the chain check answers; the URL also carries credentials that must not show.
  node = await startRpcTestServer({ snapshot: 0, auth: { user: SECRETS.SERVICE_BITCOIND_USER, password: SECRETS.SERVICE_BITCOIND_PASSWORD } });
  server = await startTestServer({
    env: { ...SECRETS, SERVICE_BITCOIND_URL: node.url.replace('http://', 'http://rpcuser:url-secret@'), SERVICE_NETWORK: 'regtest', SERVICE_RATE_LIMIT: '7', SERVICE_PASSWORD_MIN_CHARS: '10', SERVICE_REGISTRATION_LINK_TIMEOUT: '3' },
    extend: (runtime) => {
      runtime.services.health.addCheck({ name: 'probe', check: async () => { if (failStore) throw new Error('down'); } });
    },
  });
  adminToken = (await createToken(server, 'admin', SECRETS.SERVICE_ADMIN_PASSWORD, 'details')).jwt_token;
});
afterAll(async () => {
  await server.dispose();
  await node.close();
});

describe('GET /v1alpha/service', () => {
  it('returns the details object with members in the decided order', async () => {
    const response = await request(`${server.api}/service`, { headers: { authorization: bearer(adminToken) } });
    expect(response.status).toBe(200);
    expect(Object.keys(response.body)).toEqual([
      'data_folder', 'config', 'version', 'network', 'chain', 'wallets_names', 'last_update', 'alias_name', 'name_alias', 'wallets_alias',
    ]);
    expect(response.body).toMatchObject({
      data_folder: server.dataFolder,
      version: '0.1.0',
      network: 'regtest',
      chain: { backend: 'bitcoind', tip_height: 120, tip_hash: expect.stringMatching(/^[0-9a-f]{64}$/) },
      wallets_names: [],
      alias_name: {},
      name_alias: {},
      wallets_alias: [],
    });
    expect(response.body.config.auth).toEqual({ method: 'usernamepassword', password_min_chars: 10, rate_limit: '7', registration_link_timeout: '3' });
    expect(Object.keys(response.body.config)[0]).toBe('auth');
  });

  it('formats last_update as MM/DD/YYYY, HH:MM:SS in UTC, at response time', async () => {
    const before = Date.now();
    const response = await request(`${server.api}/service`, { headers: { authorization: bearer(adminToken) } });
    const match = /^(\d{2})\/(\d{2})\/(\d{4}), (\d{2}):(\d{2}):(\d{2})$/.exec(response.body.last_update);
    expect(match).not.toBeNull();
    const [, mm, dd, yyyy, hh, mi, ss] = match!.map(Number);
    const shown = Date.UTC(yyyy!, mm! - 1, dd!, hh!, mi!, ss!);
    expect(shown).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
    expect(shown).toBeLessThanOrEqual(Date.now());
  });

  it('shows no secret in config: no password, key, RPC credential or cookie', async () => {
    const response = await request(`${server.api}/service`, { headers: { authorization: bearer(adminToken) } });
    for (const secret of ['admin-secret-password-1', 'operator-jwt-key', 'rpc-secret-password', 'url-secret', '.cookie']) {
      expect(response.text).not.toContain(secret);
    }
    expect(response.body.config).toMatchObject({ bitcoind_url: node.url.endsWith('/') ? node.url : `${node.url}/`, bitcoind_auth: 'userpass', database: 'sqlite' });
  });
});

describe('liveness and readiness', () => {
  it('liveness says alive', async () => {
    const response = await request(`${server.api}/liveness`, { headers: { authorization: bearer(adminToken) } });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ message: 'alive' });
  });

  it('readiness lists every check; the alias answers the same', async () => {
    for (const path of ['/readiness', '/readyness', '/readiness/']) {
      const response = await request(`${server.api}${path}`, { headers: { authorization: bearer(adminToken) } });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ message: 'ready', checks: { store: 'ok', chain: 'ok', wallets: 'ok', probe: 'ok' } });
    }
    expect(await request(`${server.url}/healthz/ready`)).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(await request(`${server.url}/healthz/live`)).toMatchObject({ status: 200, body: { status: 'ok' } });
  });

  it('readiness is 503 naming the failing check; /healthz/ready says only unavailable', async () => {
    failStore = true;
    try {
      const response = await request(`${server.api}/readiness`, { headers: { authorization: bearer(adminToken) } });
      expect(response.status).toBe(503);
      expect(response.body).toEqual({ message: 'not ready', code: 'not_ready', checks: { store: 'ok', chain: 'ok', wallets: 'ok', probe: 'failing' } });
      const healthz = await request(`${server.url}/healthz/ready`);
      expect(healthz.status).toBe(503);
      expect(healthz.body).toEqual({ status: 'unavailable' });
      expect((await request(`${server.url}/healthz/live`)).status).toBe(200);
    } finally {
      failStore = false;
    }
  });

  it('reports the store failing once it is closed', async () => {
    const other = await startTestServer({
      env: { SERVICE_NETWORK: 'regtest', SERVICE_BITCOIND_URL: node.url, SERVICE_BITCOIND_USER: SECRETS.SERVICE_BITCOIND_USER, SERVICE_BITCOIND_PASSWORD: SECRETS.SERVICE_BITCOIND_PASSWORD },
    });
    try {
      const token = (await createToken(other, 'admin', TEST_ADMIN_PASSWORD, 'x')).jwt_token;
      expect((await request(`${other.url}/healthz/ready`)).status).toBe(200);
      expect(token).toBeTruthy();
      await other.running.runtime.store.close();
      const response = await request(`${other.url}/healthz/ready`);
      expect(response.status).toBe(503);
    } finally {
      await other.dispose();
    }
  });
});

describe('documentation', () => {
  it('serves an OpenAPI 3.1 document with every route, error responses and both auth schemes', async () => {
    const response = await request(`${server.url}/docs/openapi.json`);
    expect(response.status).toBe(200);
    const doc = response.body;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.components.securitySchemes).toMatchObject({ basicAuth: { type: 'http', scheme: 'basic' }, bearerAuth: { type: 'http', scheme: 'bearer' } });
    const ops = (path: string) => doc.paths[path] ?? {};
    expect(Object.keys(ops('/api/v1alpha/token')).sort()).toEqual(['get', 'post']);
    expect(Object.keys(ops('/api/v1alpha/token/{jwt_token_id}')).sort()).toEqual(['delete', 'get']);
    for (const path of ['/api/v1alpha/service', '/api/v1alpha/liveness', '/api/v1alpha/readiness', '/api/v1alpha/readyness', '/healthz/live', '/healthz/ready']) {
      expect(ops(path).get, path).toBeDefined();
    }
    expect(ops('/api/v1alpha/token').post.security).toEqual([{ basicAuth: [] }]);
    expect(ops('/api/v1alpha/service').get.security).toEqual([{ bearerAuth: [] }]);
    expect(Object.keys(ops('/api/v1alpha/token').post.responses)).toEqual(expect.arrayContaining(['201', '400', '401', '409', '413', '429', '500']));
    expect(Object.keys(ops('/api/v1alpha/service').get.responses)).toEqual(expect.arrayContaining(['200', '401', '403', '500']));
    expect(ops('/api/v1alpha/token').post.requestBody.content['application/json'].schema.required).toEqual(['jwt_token_description', 'jwt_token_life']);
  });

  it('serves the browsable page and its assets from the package (no CDN)', async () => {
    const page = await request(`${server.url}/docs/api`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(page.text).not.toMatch(/https?:\/\/(cdn|unpkg|cdnjs|jsdelivr)/);
    const scripts = [...page.text.matchAll(/src="([^"]+\.js)"/g)].map((m) => m[1]!);
    expect(scripts.length).toBeGreaterThan(0);
    for (const script of scripts) {
      const asset = await fetch(new URL(script, `${server.url}/docs/api/`));
      expect(asset.status, script).toBe(200);
      expect((await asset.text()).length, script).toBeGreaterThan(100);
    }
  });
});
