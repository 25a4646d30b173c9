/**
 * Reads come from the store's truth: a second instance that does not sync answers what the syncing one
 * stored. And a wallet catching up from its birthday does not hold back wallets already following the tip.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ALWAYS_LEADER } from '../../src/services/sync/leadership.js';
import { SyncService } from '../../src/services/sync/sync-service.js';
import { PsbtChainReconciler } from '../../src/services/psbts/chain-reconciler.js';
import { WalletScriptsCache } from '../../src/services/wallet-state.js';
import { request, startTestServer, type TestServer } from '../support/server.js';
import { expectWalletMatchesCore, nodeEnv, startWalletWorld, timeline, walletDetails, wallets, type WalletWorld } from './wallet-helpers.js';

let world: WalletWorld;
const extra: TestServer[] = [];
afterEach(async () => {
  for (const server of extra.splice(0)) await server.stop();
  await world?.close();
});

const mempoolOf = (i: number) => new Set<string>(timeline.snapshots[i].mempool.map((m: any) => m.txid));

async function importWallet(id: string): Promise<void> {
  const response = await request(`${world.server.api}/wallets`, {
    method: 'POST',
    headers: world.auth,
    json: { name: id, alias: id, recv_descriptor: wallets[id]!.recv_descriptor, change_descriptor: wallets[id]!.change_descriptor, birthday: 0 },
  });
  expect(response.status, response.text).toBe(201);
}

describe('several instances on one store', () => {
  it('a non-syncing instance answers the state the syncing one stored, as it changes', async () => {
    world = await startWalletWorld();
    await importWallet('w_wsh2of3');
    world.node.setSnapshot(3);
    await world.server.running.runtime.services.sync.runOnce();
    const reader = await startTestServer({ dataFolder: world.server.dataFolder, env: nodeEnv(world.node) });
    extra.push(reader);
    const onReader = { server: reader, auth: world.auth };
    expectWalletMatchesCore(await walletDetails(onReader, 'w_wsh2of3'), timeline.snapshots[3].expected.w_wsh2of3, mempoolOf(3));
    for (const i of [5, 7, 9]) {
      world.node.setSnapshot(i);
      await world.server.running.runtime.services.sync.runOnce();
      expectWalletMatchesCore(await walletDetails(onReader, 'w_wsh2of3'), timeline.snapshots[i].expected.w_wsh2of3, mempoolOf(i));
    }
  }, 120_000);
});

describe('catching up', () => {
  it('advances the wallets at the tip before a new wallet scanning from its birthday', async () => {
    world = await startWalletWorld();
    await importWallet('w_wpkh');
    world.node.setSnapshot(9);
    await world.server.running.runtime.services.sync.runOnce();
    await importWallet('w_tr');
    world.node.setSnapshot(10);

    const services = world.server.running.runtime.services;
    const sync = new SyncService({ store: world.server.running.runtime.store, follower: services.chain.source!.follower, scripts: new WalletScriptsCache(), leadership: ALWAYS_LEADER, psbts: new PsbtChainReconciler(Date.now), batchBlocks: 10 });
    const firstCall = world.node.calls.length;
    const pass = await sync.runOnce();
    const newTip = timeline.snapshots[10].tip.height;
    const heights = world.node.calls.slice(firstCall).filter((c) => c.method === 'getblockhash').map((c) => c.params[0]);
    // The following wallet's next block is fetched before the new wallet's first one.
    expect(heights.indexOf(newTip)).toBeGreaterThanOrEqual(0);
    expect(heights.indexOf(newTip)).toBeLessThan(heights.indexOf(0));
    expect(pass.blocksConnected).toBe(1 + newTip + 1);
    for (const id of ['w_wpkh', 'w_tr']) expectWalletMatchesCore(await walletDetails(world, id), timeline.snapshots[10].expected[id], mempoolOf(10));
  }, 120_000);
});
