/**
 * The sync loads a wallet larger than one batched read in slices (`chainRowsInSlices`), parsed one after the other,
 * never holding all its rows at once: here every fixture wallet counts as large (a bound of 10 chain rows). A sync
 * started on the stored wallets (as after a restart) loads each in slices, follows the chain from there, and every
 * wallet then matches Bitcoin Core's. SQLite and PostgreSQL; recorded Bitcoin Core answers (snapshots 5 and 10 of the
 * fixture timeline: payments, a reorg, a replacement in between).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ALWAYS_LEADER } from '../../src/services/sync/leadership.js';
import { SyncService } from '../../src/services/sync/sync-service.js';
import { PsbtChainReconciler } from '../../src/services/psbts/chain-reconciler.js';
import { WalletScriptsCache } from '../../src/services/wallet-state.js';
import type { Store, WalletRepository } from '../../src/store/repositories.js';
import { WALLET_IDS, expectWalletMatchesCore, importFixtureWallets, startWalletWorld, timeline, walletDetails, type WalletWorld } from './wallet-helpers.js';

let world: WalletWorld;
afterEach(async () => {
  await world?.close();
});

/** The store, counting the wallets its `chainRowsInSlices` reads (by id). */
function countingSlicedReads(store: Store, read: string[]): Store {
  const wallets = new Proxy(store.wallets, {
    get(target, prop) {
      if (prop === 'chainRowsInSlices') {
        return (...args: Parameters<WalletRepository['chainRowsInSlices']>) => {
          read.push(args[0]);
          return target.chainRowsInSlices(...args);
        };
      }
      const value = Reflect.get(target, prop) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return new Proxy(store, { get: (target, prop) => (prop === 'wallets' ? wallets : Reflect.get(target, prop)) });
}

describe.each(['sqlite', 'postgres'] as const)('a large wallet loaded by the sync in slices, on %s', (database) => {
  it('loads every wallet past the batch bound in slices and follows the chain from there as Core does', async () => {
    world = await startWalletWorld({}, { database });
    await importFixtureWallets(world);
    world.node.setSnapshot(5);
    await world.server.running.runtime.services.sync.runOnce();
    const store = world.server.running.runtime.store;

    const sliced: string[] = [];
    const sync = new SyncService({
      store: countingSlicedReads(store, sliced),
      follower: world.server.running.runtime.services.chain.source!.follower,
      scripts: new WalletScriptsCache(),
      leadership: ALWAYS_LEADER,
      psbts: new PsbtChainReconciler(Date.now),
      chainRowsPerRead: 10,
    });
    world.node.setSnapshot(10);
    expect((await sync.runOnce()).ran).toBe(true);
    const ids = await Promise.all(WALLET_IDS.map(async (alias) => (await store.wallets.findByAlias(alias))!.id));
    expect([...sliced].sort()).toEqual([...ids].sort()); // each read once, in slices
    const final = timeline.snapshots[10];
    for (const alias of WALLET_IDS) expectWalletMatchesCore(await walletDetails(world, alias), final.expected[alias], new Set(final.mempool.map((m: { txid: string }) => m.txid)));
  }, 120_000);
});
