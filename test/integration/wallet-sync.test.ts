/**
 * The seven fixture wallets imported over HTTP and synced from a JSON-RPC node replaying the recorded
 * regtest timeline: at every snapshot the wallet details equal what Bitcoin Core's own wallets reported
 * (reorg in snapshots 6-7, BIP125 replacement in 8-9), with and without BIP158 filters.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
});
