/**
 * A restart with many wallets in the store: the sync loads them after the server listens, giving way between
 * wallets, so liveness answers while readiness still names the wallets loading; a wallet's details read
 * meanwhile are those of before the restart; readiness comes once every wallet is loaded.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, expect, it } from 'vitest';
import { request, startTestServer, type TestServer } from '../support/server.js';
import { startRpcTestServer, type RpcTestServer } from '../support/rpc-server.js';
import { importFixtureWallets, nodeEnv, timeline, walletDetails } from './wallet-helpers.js';
import { bearer, createToken } from '../support/server.js';

/** 2-of-3 wallets written into the store without their addresses: loading them takes the sync a few seconds (derivations). */
const WALLETS = 200;
const ID = 'w_wsh2of3';

let node: RpcTestServer | undefined;
const servers: TestServer[] = [];
afterAll(async () => {
  for (const server of servers.slice(1)) await server.stop();
  await servers[0]?.dispose();
  await node?.close();
});

it(`restarts with ${WALLETS} wallets: live at once, ready once they are loaded, details right meanwhile`, async () => {
  const last = timeline.snapshots.length - 1;
  node = await startRpcTestServer({ snapshot: last });
  const first = await startTestServer({ env: nodeEnv(node) });
  servers.push(first);
  const token = (await createToken(first, 'admin', first.adminPassword, 'many wallets')).jwt_token as string;
  const auth = { authorization: bearer(token) };
  await importFixtureWallets({ server: first, auth }, [ID]);
  await first.running.runtime.services.sync.runOnce();
  const before = await walletDetails({ server: first, auth }, ID);
  expect(before.balance.total_sat).toBeGreaterThan(0);
  // More wallets written into the store directly: followed before (a tip) but their addresses not stored, as a gap
  // limit raised just before the restart leaves them. The first load derives them before readiness.
  const store = first.running.runtime.store;
  const model = (await store.wallets.findByAlias(ID))!;
  const tip = timeline.snapshots[last].tip.height as number;
  for (let i = 0; i < WALLETS; i++) {
    await store.wallets.insert({ ...model, id: randomUUID(), alias: `many-${i}`, name: `Many ${i}`, birthday: tip + 1, revision: 0 }, []);
  }
  await first.stop();

  const second = await startTestServer({ dataFolder: first.dataFolder, env: { ...nodeEnv(node), SERVICE_SYNC_INTERVAL: '60' } });
  servers.push(second);
  const live = await request(`${second.url}/healthz/live`);
  expect(live.status).toBe(200);
  const loading = await request(`${second.api}/readiness`, { headers: auth });
  expect(loading.status, loading.text).toBe(503);
  expect(loading.body.checks).toMatchObject({ store: 'ok', wallets: 'failing' });
  expect(loading.body.reasons.wallets).toMatch(/^(\d+ of \d+ wallets still loading|The sync has not started loading the wallets yet)$/);
  expect((await request(`${second.url}/healthz/ready`)).status).toBe(503);
  // A wallet the sync may not have loaded yet reads as it was stored.
  const during = await walletDetails({ server: second, auth }, ID);
  expect(during.balance).toEqual(before.balance);
  expect(during.txlist).toEqual(before.txlist);
  // Liveness keeps answering during the load, and readiness comes once every wallet is loaded.
  let ready = loading;
  let livesDuringLoad = 0;
  for (let attempt = 0; attempt < 600 && ready.status !== 200; attempt++) {
    if ((await request(`${second.url}/healthz/live`)).status === 200) livesDuringLoad++;
    ready = await request(`${second.api}/readiness`, { headers: auth });
    if (ready.status !== 200) {
      expect(ready.body.checks.wallets).toBe('failing');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  expect(ready.body, ready.text).toEqual({ message: 'ready', checks: { store: 'ok', chain: 'ok', wallets: 'ok' } });
  expect(livesDuringLoad).toBeGreaterThan(0);
  expect((await request(`${second.url}/healthz/ready`)).status).toBe(200);
  expect((await walletDetails({ server: second, auth }, ID)).balance).toEqual(before.balance);
}, 120_000);

it(`restarts with ${WALLETS} new wallets the sync never followed: ready without waiting for their derivations, loaded after`, async () => {
  node ??= await startRpcTestServer({ snapshot: timeline.snapshots.length - 1 });
  const first = await startTestServer({ env: nodeEnv(node) });
  servers.push(first);
  const token = (await createToken(first, 'admin', first.adminPassword, 'new wallets')).jwt_token as string;
  const auth = { authorization: bearer(token) };
  await importFixtureWallets({ server: first, auth }, [ID]);
  await first.running.runtime.services.sync.runOnce();
  // As creations leave them when the service stops before the sync reached them: no tip, no addresses.
  const store = first.running.runtime.store;
  const model = (await store.wallets.findByAlias(ID))!;
  const created = new Set<string>();
  for (let i = 0; i < WALLETS; i++) {
    const id = randomUUID();
    created.add(id);
    await store.wallets.insert({ ...model, id, alias: `new-${i}`, name: `New ${i}`, revision: 0, tip: null }, []);
  }
  await first.stop();

  const second = await startTestServer({ dataFolder: first.dataFolder, env: { ...nodeEnv(node), SERVICE_SYNC_INTERVAL: '60' } });
  servers.push(second);
  let ready = await request(`${second.api}/readiness`, { headers: auth });
  for (let attempt = 0; attempt < 600 && ready.status !== 200; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    ready = await request(`${second.api}/readiness`, { headers: auth });
  }
  expect(ready.body, ready.text).toEqual({ message: 'ready', checks: { store: 'ok', chain: 'ok', wallets: 'ok' } });
  // A load writes what it derived (a new wallet's revision moves from 0): at readiness most still wait for theirs.
  const loaded = async () => (await second.running.runtime.store.wallets.listRevisions()).filter((w) => created.has(w.id) && w.revision > 0).length;
  expect(await loaded()).toBeLessThan(WALLETS);
  for (let attempt = 0; attempt < 1200 && (await loaded()) < WALLETS; attempt++) await new Promise((resolve) => setTimeout(resolve, 100));
  expect(await loaded()).toBe(WALLETS);
}, 180_000);
