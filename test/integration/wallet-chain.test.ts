/**
 * The service against a node that is missing, down, refusing credentials, warming up or in initial block
 * download: readiness names the chain check, the service keeps serving, wallets needing the chain answer 503.
 * And a restart mid-timeline: state persists and the sync resumes without rescanning.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bearer, createToken, request, startTestServer, type TestServer } from '../support/server.js';
import { startRpcTestServer } from '../support/rpc-server.js';
import { expectWalletMatchesCore, importFixtureWallets, nodeEnv, startWalletWorld, timeline, WALLET_IDS, walletDetails, wallets, type WalletWorld } from './wallet-helpers.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

async function readiness(server: TestServer, token: string) {
  return request(`${server.api}/readiness`, { headers: { authorization: bearer(token) } });
}

const wpkhBody = (extra: Record<string, unknown> = {}) => ({ name: 'Hot', recv_descriptor: wallets.w_wpkh!.recv_descriptor, change_descriptor: wallets.w_wpkh!.change_descriptor, ...extra });

describe('without a configured node', () => {
  it('starts, names the failing chain check, answers 503 where the chain is needed and serves the rest', async () => {
    const server = await startTestServer({ env: { SERVICE_NETWORK: 'regtest' } });
    cleanups.push(() => server.dispose());
    const token = (await createToken(server, 'admin', server.adminPassword, 'no node')).jwt_token;
    const auth = { authorization: bearer(token) };
    const ready = await readiness(server, token);
    expect(ready.status).toBe(503);
    expect(ready.body.checks).toMatchObject({ store: 'ok', chain: 'failing' });
    const atTip = await request(`${server.api}/wallets`, { method: 'POST', headers: auth, json: wpkhBody() });
    expect(atTip.status).toBe(503);
    expect(atTip.body.code).toBe('chain_unavailable');
    const fromZero = await request(`${server.api}/wallets`, { method: 'POST', headers: auth, json: wpkhBody({ birthday: 0 }) });
    expect(fromZero.status).toBe(201);
    expect(fromZero.body.scan).toEqual({ progress: 0, height: 0 });
    // Scanning again from the start needs no node; from a later height, only the node can tell it exists.
    const rescan = (from: number) => request(`${server.api}/wallets/hot/rescan`, { method: 'POST', headers: auth, json: { from } });
    expect((await rescan(0)).status).toBe(202);
    const later = await rescan(100);
    expect(later.status).toBe(503);
    expect(later.body.code).toBe('chain_unavailable');
    expect((await request(`${server.api}/service`, { headers: auth })).body.chain).toBeNull();
    expect((await server.running.runtime.services.sync.runOnce()).ran).toBe(false);
  });
});

describe('readiness follows the node', () => {
  async function world(options: Parameters<typeof startRpcTestServer>[0] = {}, env: Record<string, string> = {}) {
    const node = await startRpcTestServer({ snapshot: 2, ...options });
    const server = await startTestServer({ env: { ...nodeEnv(node), ...env } });
    cleanups.push(async () => {
      await server.dispose();
      await node.close();
    });
    const token = (await createToken(server, 'admin', server.adminPassword, 'probe')).jwt_token as string;
    return { node, server, token };
  }

  it('is ready with a healthy node, and 503 naming chain while it warms up, is in IBD or is down', async () => {
    const { node, server, token } = await world();
    expect((await readiness(server, token)).body).toEqual({ message: 'ready', checks: { store: 'ok', chain: 'ok', wallets: 'ok' } });
    node.behaviour.warmingUp = 'Loading block index…';
    let ready = await readiness(server, token);
    expect(ready.status).toBe(503);
    expect(ready.body.checks).toEqual({ store: 'ok', chain: 'failing', wallets: 'ok' });
    node.behaviour.warmingUp = null;
    node.behaviour.initialBlockDownload = true;
    expect((await readiness(server, token)).body.checks.chain).toBe('failing');
    node.behaviour.initialBlockDownload = false;
    expect((await readiness(server, token)).status).toBe(200);
    await node.close();
    ready = await readiness(server, token);
    expect(ready.status).toBe(503);
    expect(ready.body.checks.chain).toBe('failing');
    // Still serving: liveness, wallet creation from a given height, wallet reads; a sync pass fails without harm.
    expect((await request(`${server.api}/liveness`, { headers: { authorization: bearer(token) } })).status).toBe(200);
    const created = await request(`${server.api}/wallets`, { method: 'POST', headers: { authorization: bearer(token) }, json: wpkhBody({ birthday: 0 }) });
    expect(created.status).toBe(201);
    await expect(server.running.runtime.services.sync.runOnce()).rejects.toThrow();
    expect((await request(`${server.api}/wallets/hot`, { headers: { authorization: bearer(token) } })).status).toBe(200);
  });

  it('is 503 naming chain when the node refuses the credentials', async () => {
    const node = await startRpcTestServer({ snapshot: 2 });
    const server = await startTestServer({ env: { ...nodeEnv(node), SERVICE_BITCOIND_PASSWORD: 'wrong-password' } });
    cleanups.push(async () => {
      await server.dispose();
      await node.close();
    });
    const token = (await createToken(server, 'admin', server.adminPassword, 'creds')).jwt_token as string;
    const ready = await readiness(server, token);
    expect(ready.status).toBe(503);
    expect(ready.body.checks).toEqual({ store: 'ok', chain: 'failing', wallets: 'ok' });
  });

  it('keeps serving with the background loop running against a node that goes away', { timeout: 60_000 }, async () => {
    const { node, server, token } = await world({}, { SERVICE_SYNC_INTERVAL: '0.02' });
    await request(`${server.api}/wallets`, { method: 'POST', headers: { authorization: bearer(token) }, json: wpkhBody({ birthday: 0 }) });
    // The background loop alone brings the wallet to the tip.
    let scan: unknown = 'not read';
    for (let i = 0; i < 400 && scan !== null; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      scan = (await request(`${server.api}/wallets/hot`, { headers: { authorization: bearer(token) } })).body.scan;
    }
    expect(scan).toBeNull();
    await node.close();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await request(`${server.api}/wallets/hot`, { headers: { authorization: bearer(token) } })).status).toBe(200);
  });

  it('logs a missing cookie file once, naming its path, and again only when the reason changes', { timeout: 60_000 }, async () => {
    const node = await startRpcTestServer({ snapshot: 2 });
    const cookie = join(mkdtempSync(join(tmpdir(), 'wcs-cookie-')), '.cookie');
    const server = await startTestServer({
      env: { SERVICE_BITCOIND_URL: node.url, SERVICE_BITCOIND_COOKIE: cookie, SERVICE_SYNC_INTERVAL: '0.02', SERVICE_LOG_LEVEL: 'info' },
    });
    cleanups.push(async () => {
      await server.dispose();
      await node.close();
    });
    const failures = () => server.logs.filter((line) => line.includes('sync pass failed'));
    const until = async (done: () => boolean) => {
      for (let i = 0; i < 300 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    };
    // A missing cookie is retried within a pass (about 2 s), then the next pass comes 20 ms later.
    await until(() => failures().length > 0);
    expect(failures()[0]).toContain(cookie);
    expect(failures()[0]).toContain('ENOENT');
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    expect(failures()).toHaveLength(1);
    writeFileSync(cookie, 'not-a-user-and-password');
    await until(() => failures().length > 1);
    expect(failures()[1]).toContain('not user:password');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(failures()).toHaveLength(2);
    // The path stays out of what API clients see.
    const token = (await createToken(server, 'admin', server.adminPassword, 'cookie')).jwt_token as string;
    const details = await request(`${server.api}/service`, { headers: { authorization: bearer(token) } });
    expect(JSON.stringify(details.body)).not.toContain(cookie);
  });
});

describe('restart in the middle of the timeline', () => {
  let world: WalletWorld;
  afterEach(async () => {
    await world?.close();
  });

  it('keeps the state and resumes from the stored tip without rescanning', async () => {
    world = await startWalletWorld();
    await importFixtureWallets(world);
    const sync = () => world.server.running.runtime.services.sync.runOnce();
    for (let i = 0; i <= 4; i++) {
      world.node.setSnapshot(i);
      await sync();
    }
    const before = await Promise.all(WALLET_IDS.map((id) => walletDetails(world, id)));
    await world.server.stop();

    const getblocks = () => world.node.calls.filter((c) => c.method === 'getblock').length;
    const second = await startTestServer({ dataFolder: world.server.dataFolder, env: nodeEnv(world.node) });
    const first = world.server;
    world.server = second;
    cleanups.push(async () => {
      await second.dispose();
      await first.dispose();
    });
    const after = await Promise.all(WALLET_IDS.map((id) => walletDetails(world, id)));
    expect(after).toEqual(before);

    const calls = getblocks();
    const resumed = await world.server.running.runtime.services.sync.runOnce();
    expect(resumed).toMatchObject({ ran: true, blocksConnected: 0, blocksDisconnected: 0 });
    expect(getblocks()).toBe(calls);

    for (let i = 5; i < timeline.snapshots.length; i++) {
      world.node.setSnapshot(i);
      const pass = await world.server.running.runtime.services.sync.runOnce();
      expect(pass.blocksFetched).toBeLessThanOrEqual(pass.blocksConnected);
      const mempool = new Set<string>(timeline.snapshots[i].mempool.map((m: any) => m.txid));
      for (const id of WALLET_IDS) expectWalletMatchesCore(await walletDetails(world, id), timeline.snapshots[i].expected[id], mempool);
    }
    // Only blocks above the stored tip were fetched after the restart.
    const tipAtRestart = timeline.snapshots[4].tip.height;
    const fetchedHeights = world.node.calls.slice(0).filter((c) => c.method === 'getblock').length - calls;
    expect(fetchedHeights).toBeLessThanOrEqual(timeline.snapshots.at(-1).tip.height - tipAtRestart + 2);
  }, 120_000);
});
