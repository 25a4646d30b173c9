/**
 * The configured network against the node's chain: a node on another network fails readiness
 * naming both, shows in the service details, and the sync applies none of its blocks; a store
 * holding wallets of another network refuses to start.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeEnv, wallets } from './wallet-helpers.js';
import { startRpcTestServer, type RpcTestServer } from '../support/rpc-server.js';
import { TEST_ADMIN_PASSWORD, bearer, createToken, request, startTestServer, type TestServer } from '../support/server.js';

let node: RpcTestServer;
let server: TestServer;
let auth: { authorization: string };
beforeAll(async () => {
  node = await startRpcTestServer({ snapshot: 2 });
  server = await startTestServer({ env: nodeEnv(node) });
  auth = { authorization: bearer((await createToken(server, 'admin', TEST_ADMIN_PASSWORD, 'network')).jwt_token) };
  const created = await request(`${server.api}/wallets`, {
    method: 'POST',
    headers: auth,
    json: { name: 'Net', alias: 'net', recv_descriptor: wallets.w_wpkh!.recv_descriptor, change_descriptor: wallets.w_wpkh!.change_descriptor, birthday: 0 },
  });
  expect(created.status, created.text).toBe(201);
  await server.running.runtime.services.sync.runOnce();
});
afterAll(async () => {
  await server.dispose();
  await node.close();
});

describe('a node on another network', () => {
  it('fails readiness naming both networks, shows in the service details, and stops the sync', async () => {
    const before = await request(`${server.api}/wallets/net`, { headers: auth });
    expect((await request(`${server.api}/readiness`, { headers: auth })).status).toBe(200);
    expect((await request(`${server.api}/service`, { headers: auth })).body.chain).toMatchObject({ network: 'regtest', sync_state: 'synced' });

    node.behaviour.chain = 'main';
    node.setSnapshot(5);
    const readiness = await request(`${server.api}/readiness`, { headers: auth });
    expect(readiness.status).toBe(503);
    expect(readiness.body).toEqual({
      message: 'not ready',
      code: 'not_ready',
      checks: { store: 'ok', chain: 'failing', wallets: 'ok' },
      reasons: { chain: 'Bitcoin Core follows mainnet but the service is configured for regtest' },
    });
    expect((await request(`${server.url}/healthz/ready`)).status).toBe(503);
    await new Promise((r) => setTimeout(r, 2_100)); // the details cache the node's health for 2 s
    const details = await request(`${server.api}/service`, { headers: auth });
    expect(details.body.network).toBe('regtest');
    expect(details.body.chain).toMatchObject({ backend: 'bitcoind', network: 'mainnet', sync_state: 'unavailable: wrong_network', tip_height: null });

    await expect(server.running.runtime.services.sync.runOnce()).rejects.toMatchObject({ code: 'wrong_network' });
    const after = await request(`${server.api}/wallets/net`, { headers: auth });
    expect(after.body).toEqual(before.body);

    // Back on regtest: ready again, and the sync catches up.
    node.behaviour.chain = 'regtest';
    expect((await request(`${server.api}/readiness`, { headers: auth })).status).toBe(200);
    const pass = await server.running.runtime.services.sync.runOnce();
    expect(pass.ran).toBe(true);
    expect((await request(`${server.api}/wallets/net`, { headers: auth })).body).not.toEqual(before.body);
  });
});

describe('a store holding wallets of another network', () => {
  it('refuses to start with a one-line reason', async () => {
    await server.stop();
    await expect(startTestServer({ dataFolder: server.dataFolder, env: { SERVICE_NETWORK: 'testnet' } })).rejects.toThrow(
      /^The store holds wallets of regtest \(such as "net"\) but the service is configured for testnet: set SERVICE_NETWORK \(--network\) to regtest, or use another data folder or database$/,
    );
  });
});
