/**
 * Tokens with narrower rights: every endpoint against every permission, tokens limited to one wallet, and
 * tokens without the new fields behaving exactly as before. A real server on the JSON-RPC test node.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PERMISSIONS, type Permission } from '../../src/services/permissions.js';
import { basicAuth, bearer, request } from '../support/server.js';
import { importFixtureWallets, startWalletWorld, wallets, type WalletWorld } from './wallet-helpers.js';

const TXID = 'ab'.repeat(32);
const GONE = 'w_gone';

interface Endpoint {
  method: string;
  path: string;
  needs: Permission | null;
  json?: unknown;
}

/** Every route under /api/v1alpha that takes a Bearer token. Writes aim at a wallet that does not exist. */
function endpoints(hookUrl: string): Endpoint[] {
  return [
    { method: 'POST', path: '/wallets', needs: 'wallets:manage', json: { name: 'Matrix', alias: 'w_matrix', recv_descriptor: wallets.w_pkh!.recv_descriptor, change_descriptor: wallets.w_pkh!.change_descriptor, birthday: 0 } },
    { method: 'GET', path: '/wallets', needs: 'wallets:read' },
    { method: 'GET', path: '/wallets/w_wpkh', needs: 'wallets:read' },
    { method: 'PATCH', path: `/wallets/${GONE}`, needs: 'wallets:manage', json: { description: 'x' } },
    { method: 'DELETE', path: `/wallets/${GONE}`, needs: 'wallets:manage' },
    { method: 'POST', path: `/wallets/${GONE}/rescan`, needs: 'wallets:manage', json: {} },
    { method: 'GET', path: '/wallets/w_wpkh/addresses', needs: 'wallets:read' },
    { method: 'POST', path: '/wallets/w_wpkh/addresses/next', needs: 'wallets:read' },
    { method: 'GET', path: '/wallets/w_wpkh/utxo', needs: 'wallets:read' },
    { method: 'PATCH', path: `/wallets/${GONE}/utxo`, needs: 'psbt:create', json: { txid: TXID, vout: 0, frozen: true } },
    { method: 'GET', path: '/service/full_txlist', needs: 'wallets:read' },
    { method: 'GET', path: '/wallets/w_wpkh/psbt', needs: 'wallets:read' },
    { method: 'POST', path: `/wallets/${GONE}/psbt`, needs: 'psbt:create', json: { recipients: [{ address: 'bcrt1qxyz', amount: '0.01' }], fee_rate: 2 } },
    { method: 'GET', path: `/wallets/w_wpkh/psbt/${TXID}`, needs: 'wallets:read' },
    { method: 'PUT', path: `/wallets/${GONE}/psbt/${TXID}`, needs: 'psbt:sign', json: { psbt: 'cHNidP8=' } },
    { method: 'DELETE', path: `/wallets/${GONE}/psbt/${TXID}`, needs: 'psbt:create' },
    { method: 'POST', path: `/wallets/${GONE}/psbt/${TXID}/broadcast`, needs: 'psbt:broadcast' },
    { method: 'GET', path: '/service', needs: 'service:read' },
    { method: 'GET', path: '/readiness', needs: 'service:read' },
    { method: 'GET', path: '/readyness', needs: 'service:read' },
    { method: 'GET', path: '/liveness', needs: null },
    { method: 'POST', path: '/webhooks', needs: 'webhooks:manage', json: { url: hookUrl, events: ['psbt.created'], wallets: ['w_wpkh'] } },
    { method: 'GET', path: '/webhooks', needs: 'webhooks:manage' },
    { method: 'GET', path: '/webhooks/nope', needs: 'webhooks:manage' },
    { method: 'PATCH', path: '/webhooks/nope', needs: 'webhooks:manage', json: {} },
    { method: 'DELETE', path: '/webhooks/nope', needs: 'webhooks:manage' },
    { method: 'GET', path: '/webhooks/nope/deliveries', needs: 'webhooks:manage' },
    { method: 'POST', path: '/webhooks/nope/deliveries/nope/redeliver', needs: 'webhooks:manage' },
    { method: 'GET', path: '/events', needs: 'wallets:read' },
  ];
}

let world: WalletWorld;
const admin = () => ({ authorization: basicAuth('admin', world.server.adminPassword) });

async function narrowToken(fields: { permissions?: string[]; wallets?: string[] }): Promise<any> {
  const created = await request(`${world.server.api}/token`, { method: 'POST', headers: admin(), json: { jwt_token_description: `narrow ${Math.random()}`, jwt_token_life: '1 hours', ...fields } });
  expect(created.status, created.text).toBe(201);
  return created.body;
}

/** Status and body of one call; the event stream is cut as soon as its status is known. */
async function call(e: Endpoint, token: string): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { authorization: bearer(token) };
  if (e.path === '/events') {
    const controller = new AbortController();
    const response = await fetch(`${world.server.api}${e.path}`, { headers, signal: controller.signal });
    const body = response.status === 200 ? undefined : await response.json();
    controller.abort();
    return { status: response.status, body };
  }
  const response = await request(`${world.server.api}${e.path}`, { method: e.method, headers, ...(e.json !== undefined ? { json: e.json } : {}) });
  return { status: response.status, body: response.body };
}

beforeAll(async () => {
  world = await startWalletWorld({ snapshot: 7 }, { env: { SERVICE_WEBHOOK_ALLOW_PRIVATE: 'True' } });
  await importFixtureWallets(world, ['w_wpkh', 'w_tr']);
  await world.server.running.runtime.services.sync.runOnce();
}, 60_000);

afterAll(async () => {
  await world?.close();
});

describe('token permissions', () => {
  it('every endpoint against every permission: a missing one answers 403 naming it, the one needed lets the request through', async () => {
    const list = endpoints('http://127.0.0.1:9/hook');
    const tokens = new Map<Permission, string>();
    for (const p of PERMISSIONS) tokens.set(p, (await narrowToken({ permissions: [p] })).jwt_token);
    const none = (await narrowToken({ permissions: [] })).jwt_token;
    for (const e of list) {
      for (const p of PERMISSIONS) {
        const { status, body } = await call(e, tokens.get(p)!);
        const label = `${e.method} ${e.path} with ${p}`;
        if (e.needs === null || e.needs === p) {
          expect(body?.code, label).not.toBe('permission_missing');
          expect([200, 201, 202, 404, 409, 422, 503], label).toContain(status);
        } else {
          expect(status, label).toBe(403);
          expect(body, label).toMatchObject({ code: 'permission_missing', permission: e.needs });
          expect(body.message, label).toContain(e.needs);
        }
      }
      const { status } = await call(e, none);
      expect(status, `${e.method} ${e.path} with no permission`).toBe(e.needs === null ? 200 : 403);
    }
  }, 120_000);

  it('a token limited to one wallet sees only it; another wallet answers as an unknown one', async () => {
    const token = (await narrowToken({ wallets: ['w_wpkh'] })).jwt_token;
    const auth = { authorization: bearer(token) };
    const listed = await request(`${world.server.api}/wallets`, { headers: auth });
    expect(listed.body.wallets.map((w: any) => w.alias)).toEqual(['w_wpkh']);
    expect((await request(`${world.server.api}/wallets/w_wpkh`, { headers: auth })).status).toBe(200);
    const outside = await request(`${world.server.api}/wallets/w_tr`, { headers: auth });
    const unknown = await request(`${world.server.api}/wallets/w_unknown`, { headers: auth });
    expect(outside.status).toBe(404);
    expect(outside.body).toEqual(unknown.body);
    for (const path of ['/wallets/w_tr/utxo', '/wallets/w_tr/addresses', '/wallets/w_tr/psbt']) {
      expect((await request(`${world.server.api}${path}`, { headers: auth })).body.code, path).toBe('wallet_not_found');
    }
    const all = await request(`${world.server.api}/service/full_txlist`, { headers: world.auth });
    const own = await request(`${world.server.api}/service/full_txlist`, { headers: auth });
    const wpkh = await request(`${world.server.api}/wallets/w_wpkh`, { headers: world.auth });
    expect(own.body.length).toBeGreaterThan(0);
    expect(own.body.length).toBeLessThan(all.body.length);
    expect(new Set(own.body.map((t: any) => t.txid))).toEqual(new Set(wpkh.body.txlist.map((t: any) => t.txid)));
    const service = await request(`${world.server.api}/service`, { headers: auth });
    expect(service.body.wallets_alias).toEqual(['w_wpkh']);
    const hook = await request(`${world.server.api}/webhooks`, { method: 'POST', headers: auth, json: { url: 'http://127.0.0.1:9/hook', events: ['psbt.created'], wallets: ['w_tr'] } });
    expect(hook.status).toBe(404);
  });

  it('shows a token\'s limits on creation, read and list; refuses unknown permissions and wallets the user cannot reach', async () => {
    const created = await narrowToken({ permissions: ['wallets:read', 'psbt:sign', 'wallets:read'], wallets: ['w_tr'] });
    expect(created).toMatchObject({ permissions: ['wallets:read', 'psbt:sign'], wallets: ['w_tr'] });
    const read = await request(`${world.server.api}/token/${created.jwt_token_id}`, { headers: admin() });
    expect(read.body).toMatchObject({ permissions: ['wallets:read', 'psbt:sign'], wallets: ['w_tr'] });
    const listed = await request(`${world.server.api}/token`, { headers: admin() });
    expect(listed.body.jwt_tokens[created.jwt_token_id]).toMatchObject({ permissions: ['wallets:read', 'psbt:sign'], wallets: ['w_tr'] });

    const badPermission = await request(`${world.server.api}/token`, { method: 'POST', headers: admin(), json: { jwt_token_description: 'bad', jwt_token_life: 60, permissions: ['wallets:read', 'wallets:steal'] } });
    expect(badPermission.status).toBe(400);
    expect(badPermission.body.errors[0].path).toBe('/permissions/1');
    await world.server.running.runtime.services.users.addUser('carol', 'carol-password', { admin: false });
    const notHers = await request(`${world.server.api}/token`, { method: 'POST', headers: { authorization: basicAuth('carol', 'carol-password') }, json: { jwt_token_description: 'c', jwt_token_life: 60, wallets: ['w_wpkh'] } });
    expect(notHers.status).toBe(400);
    expect(notHers.body.errors[0].path).toBe('/wallets/0');
  });

  it('a token without the new fields keeps the contract\'s answers and all of its user\'s rights', async () => {
    const created = await request(`${world.server.api}/token`, { method: 'POST', headers: admin(), json: { jwt_token_description: 'plain', jwt_token_life: '1 hours' } });
    expect(Object.keys(created.body).sort()).toEqual(['jwt_token', 'jwt_token_description', 'jwt_token_id', 'jwt_token_life', 'message']);
    const read = await request(`${world.server.api}/token/${created.body.jwt_token_id}`, { headers: admin() });
    expect(Object.keys(read.body).sort()).toEqual(['expiry_status', 'jwt_token_description', 'jwt_token_life', 'jwt_token_life_remaining', 'message']);
    for (const e of endpoints('http://127.0.0.1:9/hook')) {
      const { status, body } = await call(e, created.body.jwt_token);
      expect(status, `${e.method} ${e.path}`).not.toBe(403);
      expect(body?.code).not.toBe('permission_missing');
    }
  }, 60_000);
});
