/**
 * New wallets load in turns: while the sync loads hundreds of new wallets (each one's first gap derived, seconds
 * in all), a block paying a wallet it already follows is applied between two turns, not once the last is loaded.
 * Someone creating thousands of wallets must not hold back everyone else's payments.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithBitcoind, fixtureWallets, startChainWorld, waitFor, type ChainWorld } from './chain-world.js';

const ID = 'w_wsh2of3';
const PAID = 25_000_000;
/** New wallets whose first gaps (20 + 20 scripts of a 2-of-3) take the sync several seconds to derive in process. */
const NEW_WALLETS = 600;

describeWithBitcoind('a block for a followed wallet while many new wallets load', () => {
  let world: ChainWorld;
  beforeAll(async () => {
    world = await startChainWorld({ env: { SERVICE_SYNC_INTERVAL: '60' } });
  }, 60_000);
  afterAll(async () => {
    await world?.close();
  });

  it(`shows the block in the followed wallet before the ${NEW_WALLETS} new wallets are all loaded`, async () => {
    const { chain, server, client } = world;
    const wallet = fixtureWallets[ID]!;
    await client.importWallet(ID, { recv_descriptor: wallet.recv_descriptor, change_descriptor: wallet.change_descriptor, birthday: await chain.height() });
    await waitFor(async () => (await client.details(ID)).scan === null, `${ID} to reach the tip`);
    const address = await client.nextAddress(ID);

    // New wallets as a creation leaves them before the sync loads them: no addresses, no tip.
    const store = server.running.runtime.store;
    const model = (await store.wallets.findByAlias(ID))!;
    const birthday = (await chain.height()) + 1;
    const created = new Set<string>();
    for (let i = 0; i < NEW_WALLETS; i++) {
      const id = randomUUID();
      created.add(id);
      await store.wallets.insert({ ...model, id, alias: `new-${i}`, name: `New ${i}`, birthday, revision: 0, tip: null }, []);
    }
    server.running.runtime.services.sync.requestPass();
    await chain.pay([{ address, sat: PAID }]);
    await chain.mine(1);
    await client.waitForBalance(ID, { total: PAID, confirmed: PAID }, 120_000);

    // A load writes what it derived (a new wallet's revision moves from 0): some were still waiting for theirs.
    const loadedThen = (await store.wallets.listRevisions()).filter((w) => created.has(w.id) && w.revision > 0).length;
    expect(loadedThen).toBeLessThan(NEW_WALLETS);
    // And every one of them is loaded in the end, at the tip.
    await waitFor(async () => (await store.wallets.listRevisions()).filter((w) => created.has(w.id) && w.revision > 0).length === NEW_WALLETS, 'every new wallet loaded', 120_000);
  }, 240_000);
});
