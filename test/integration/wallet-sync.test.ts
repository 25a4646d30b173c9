/**
 * The seven fixture wallets imported over HTTP and synced from a JSON-RPC node replaying the recorded
 * regtest timeline: at every snapshot the wallet details equal what Bitcoin Core's own wallets reported
 * (reorg in snapshots 6-7, BIP125 replacement in 8-9), with and without BIP158 filters.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from '../support/server.js';
import { importFixtureWallets, startWalletWorld, timeline, WALLET_IDS, walletDetails, expectWalletMatchesCore, type WalletWorld } from './wallet-helpers.js';

describe.each([
  { filters: true, label: 'with BIP158 filters' },
  { filters: false, label: 'without filters (getblockfilter errors)' },
])('wallet sync over the regtest timeline, $label', ({ filters }) => {
  let world: WalletWorld;
  beforeAll(async () => {
    world = await startWalletWorld({ filters });
    await importFixtureWallets(world);
  }, 60_000);
  afterAll(async () => {
    await world?.close();
  });

  it('matches Bitcoin Core at every snapshot', async () => {
    let skipped = 0;
    for (const [index, snapshot] of timeline.snapshots.entries()) {
      world.node.setSnapshot(index);
      const pass = await world.server.running.runtime.services.sync.runOnce();
      expect(pass.ran).toBe(true);
      expect(pass.tip).toEqual(snapshot.tip);
      skipped += pass.blocksSkippedByFilter;
      const mempool = new Set<string>(snapshot.mempool.map((m: any) => m.txid));
      for (const id of WALLET_IDS) {
        const details = await walletDetails(world, id);
        expect(details.scan).toBeNull();
        try {
          expectWalletMatchesCore(details, snapshot.expected[id], mempool);
        } catch (error) {
          (error as Error).message = `snapshot ${index} (${snapshot.description}), wallet ${id}: ${(error as Error).message}`;
          throw error;
        }
      }
    }
    if (filters) expect(skipped).toBeGreaterThan(0);
    else expect(skipped).toBe(0);
  }, 120_000);

  it('rescans a wallet over HTTP: its rows are dropped, scan shows progress, the next pass restores it', async () => {
    const last = timeline.snapshots.length - 1;
    const tip = timeline.snapshots[last].tip.height;
    const before = await walletDetails(world, 'w_shwpkh');
    const gap = await request(`${world.server.api}/wallets/w_shwpkh/rescan`, { method: 'POST', headers: world.auth, json: { from: tip + 2 } });
    expect(gap.status, gap.text).toBe(422);
    expect(gap.body).toMatchObject({ code: 'rescan_past_tip', errors: [{ path: '/from', message: `must be at most ${tip + 1}` }] });
    expect(await walletDetails(world, 'w_shwpkh')).toEqual(before);
    const rescan = await request(`${world.server.api}/wallets/w_shwpkh/rescan`, { method: 'POST', headers: world.auth, json: { from: 0 } });
    expect(rescan.status, rescan.text).toBe(202);
    expect(rescan.body).toEqual({ alias: 'w_shwpkh', from: 0 });
    const during = await walletDetails(world, 'w_shwpkh');
    expect(during.scan).toEqual({ progress: 0, height: 0 });
    expect(during.utxo).toEqual([]);
    const pass = await world.server.running.runtime.services.sync.runOnce();
    expect(pass.blocksConnected).toBe(timeline.snapshots[last].tip.height + 1);
    const mempool = new Set<string>(timeline.snapshots[last].mempool.map((m: any) => m.txid));
    expectWalletMatchesCore(await walletDetails(world, 'w_shwpkh'), timeline.snapshots[last].expected.w_shwpkh, mempool);
    // The full list holds every wallet's live transactions, newest first.
    const full = await request(`${world.server.api}/service/full_txlist`, { headers: world.auth });
    expect(full.status).toBe(200);
    const perWallet = await Promise.all(WALLET_IDS.map((id) => walletDetails(world, id)));
    expect(full.body).toHaveLength(perWallet.reduce((n, d) => n + d.txlist.length, 0));
    const heights = full.body.map((e: any) => e.blockheight ?? Infinity);
    expect(heights).toEqual([...heights].sort((a: number, b: number) => b - a));
    const paged = await request(`${world.server.api}/service/full_txlist?limit=2&offset=1`, { headers: world.auth });
    expect(paged.body).toEqual(full.body.slice(1, 3));
    // Pages merged from the wallets' lists join up to the whole list, in its order.
    const pages = [];
    for (let offset = 0; offset < full.body.length; offset += 3) pages.push(...(await request(`${world.server.api}/service/full_txlist?limit=3&offset=${offset}`, { headers: world.auth })).body);
    expect(pages).toEqual(full.body);
    expect(new Set(full.body.map((e: any) => e.wallet_alias)).size).toBeGreaterThan(1);
  }, 120_000);
});
