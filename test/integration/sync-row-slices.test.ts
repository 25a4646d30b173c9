/**
 * A block that moves most wallets' tips only: their sync rows are written in transactions of a few wallets each
 * (here two), after the wallets whose rows changed. A failure (as a crash) between two such transactions leaves the
 * wallets written before at the block and the others at their own earlier tip, each at a revision of its own; the
 * next pass (a new sync, as after a restart) brings every wallet to the block, matching Bitcoin Core's wallet.
 * SQLite and PostgreSQL; recorded Bitcoin Core answers (snapshots 5 and 6 of the fixture timeline: one wallet paid in the block, six not).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ALWAYS_LEADER } from '../../src/services/sync/leadership.js';
import { SyncService } from '../../src/services/sync/sync-service.js';
import { PsbtChainReconciler } from '../../src/services/psbts/chain-reconciler.js';
import { WalletScriptsCache } from '../../src/services/wallet-state.js';
import type { Repositories, Store } from '../../src/store/repositories.js';
import { WALLET_IDS, expectWalletMatchesCore, importFixtureWallets, startWalletWorld, timeline, walletDetails, type WalletWorld } from './wallet-helpers.js';

let world: WalletWorld;
afterEach(async () => {
  await world?.close();
});

/** The store, with its `syncRowsWrites`-th write of sync rows alone failing inside its transaction (rolled back). */
function failingSyncRowsWrite(store: Store, failing: number): Store {
  let writes = 0;
  const wrap = (repos: Repositories): Repositories => {
    const wallets = new Proxy(repos.wallets, {
      get(target, prop) {
        if (prop === 'applySyncRows') {
          return async (...args: Parameters<typeof target.applySyncRows>) => {
            if (++writes === failing) throw new Error('the process stopped here');
            return target.applySyncRows(...args);
          };
        }
        const value = Reflect.get(target, prop) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    return { ...repos, wallets };
  };
  return new Proxy(store, {
    get(target, prop) {
      if (prop === 'transaction') return <T>(work: (repos: Repositories) => Promise<T>) => target.transaction((repos) => work(wrap(repos)));
      const value = Reflect.get(target, prop) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

const syncOf = (world: WalletWorld, store: Store) => {
  const services = world.server.running.runtime.services;
  return new SyncService({ store, follower: services.chain.source!.follower, scripts: new WalletScriptsCache(), leadership: ALWAYS_LEADER, psbts: new PsbtChainReconciler(Date.now), syncRowsPerTransaction: 2 });
};

describe.each(['sqlite', 'postgres'] as const)('sync rows of a block written a few wallets a transaction, on %s', (database) => {
  it('a stop between two transactions leaves the wallets written at the block and the rest at their tip; the next pass brings them all', async () => {
    world = await startWalletWorld({}, { database });
    await importFixtureWallets(world);
    world.node.setSnapshot(5);
    await world.server.running.runtime.services.sync.runOnce();
    const store = world.server.running.runtime.store;
    const [before, after] = [timeline.snapshots[5].tip, timeline.snapshots[6].tip];
    const stored = async () => Promise.all(WALLET_IDS.map(async (alias) => (await store.wallets.findByAlias(alias))!));
    const revisions = new Map((await stored()).map((w) => [w.alias, w.revision]));
    expect((await stored()).map((w) => w.tip?.height)).toEqual(WALLET_IDS.map(() => before.height));

    world.node.setSnapshot(6);
    // The second transaction of sync rows alone fails: the paid wallet and the first two others are written.
    await expect(syncOf(world, failingSyncRowsWrite(store, 2)).runOnce()).rejects.toThrow('the process stopped here');
    const partly = await stored();
    const atBlock = partly.filter((w) => w.tip?.hash === after.hash);
    expect(atBlock.map((w) => w.alias)).toContain('w_pkh'); // paid in the block: written first
    expect(atBlock).toHaveLength(3);
    expect(partly.filter((w) => w.tip?.height === before.height)).toHaveLength(4);
    for (const w of partly) expect(w.revision, w.alias).toBe(revisions.get(w.alias)! + (w.tip?.hash === after.hash ? 1 : 0));

    await syncOf(world, store).runOnce();
    for (const w of await stored()) expect(w.tip, w.alias).toEqual({ height: after.height, hash: after.hash });
    for (const alias of WALLET_IDS) expectWalletMatchesCore(await walletDetails(world, alias), timeline.snapshots[6].expected[alias], new Set(timeline.snapshots[6].mempool.map((m: { txid: string }) => m.txid)));
  }, 120_000);
});
