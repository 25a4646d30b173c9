/**
 * `wallet_states_budget` and `wallet_states_idle` on the real server, SQLite and PostgreSQL: past the budget (in
 * transactions plus coins) the reads drop the least recently read states, never the one just read; a state unread
 * for the idle time is dropped; a dropped wallet answers the same once loaded again, and the wallet list shows its
 * balance without loading it. Fixture wallets at the recorded timeline's last snapshot weigh: w_wpkh 10 (6
 * transactions, 4 coins), w_shwpkh 6, w_pkh 6, w_tr 9, w_wsh2of3 14.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { request } from '../support/server.js';
import { expectWalletMatchesCore, importFixtureWallets, startWalletWorld, timeline, walletDetails, type WalletWorld } from './wallet-helpers.js';

const ALIASES = ['w_wpkh', 'w_shwpkh', 'w_pkh', 'w_tr', 'w_wsh2of3'];
const last = timeline.snapshots.length - 1;
const mempoolAt = (index: number) => new Set<string>(timeline.snapshots[index].mempool.map((m: { txid: string }) => m.txid));

/** Counts the whole-wallet loads of the server's store (each calls through to the store as before). */
function countLoads(world: WalletWorld): { count: number } {
  const loads = { count: 0 };
  const wallets = world.server.running.runtime.store.wallets;
  const chainRows = wallets.chainRows.bind(wallets);
  wallets.chainRows = (id) => {
    loads.count++;
    return chainRows(id);
  };
  const inSlices = wallets.chainRowsInSlices.bind(wallets);
  wallets.chainRowsInSlices = (id, sliceRows, take) => {
    loads.count++;
    return inSlices(id, sliceRows, take);
  };
  return loads;
}

async function syncTo(world: WalletWorld, index: number): Promise<void> {
  world.node.setSnapshot(index);
  expect((await world.server.running.runtime.services.sync.runOnce()).ran).toBe(true);
}

async function listedBalances(world: WalletWorld): Promise<Record<string, unknown>> {
  const listed = await request(`${world.server.api}/wallets?limit=100`, { headers: world.auth });
  expect(listed.status, listed.text).toBe(200);
  return Object.fromEntries(listed.body.wallets.map((w: { alias: string; balance: unknown }) => [w.alias, w.balance]));
}

describe.each(['sqlite', 'postgres'] as const)('reads\' wallet states within a budget (%s)', (database) => {
  let world: WalletWorld;
  /** Stored wallet ids by alias (the states are kept by id). */
  const ids = new Map<string, string>();
  const idOf = (alias: string) => ids.get(alias);
  beforeAll(async () => {
    world = await startWalletWorld({}, { database, env: { SERVICE_WALLET_STATES_BUDGET: '20', SERVICE_WALLET_STATES_IDLE: '0' } });
    await importFixtureWallets(world, ALIASES);
    for (const alias of ALIASES) ids.set(alias, (await world.server.running.runtime.store.wallets.findByAlias(alias))!.id);
  }, 60_000);
  afterAll(async () => {
    await world?.close();
  });

  it('drops the least recently read past the budget, counts a state\'s growth, and answers the same once loaded again', async () => {
    expect(world.server.config).toMatchObject({ walletStatesBudget: 20, walletStatesIdleMs: 0 });
    const details = await request(`${world.server.api}/service`, { headers: world.auth });
    expect(details.status, details.text).toBe(200);
    expect(details.body.config).toMatchObject({ wallet_states_kept: 1000, wallet_states_budget: 20, wallet_states_idle: 0 });
    const states = world.server.running.runtime.services.wallets.states;
    // One snapshot before the last: the state read then follows the rows written since, and weighs what it holds after.
    await syncTo(world, last - 1); // the sync's first pass loads every wallet for itself
    const loads = countLoads(world);
    await walletDetails(world, 'w_wsh2of3');
    expect(states.keptWeight()).toBeLessThan(14);
    await syncTo(world, last);
    const wsh2of3 = await walletDetails(world, 'w_wsh2of3');
    expect(states.keptWallets()).toEqual(['w_wsh2of3'].map(idOf));
    expect(states.keptWeight()).toBe(14);
    expect(loads.count).toBe(1);

    const first = await walletDetails(world, 'w_pkh'); // 14 + 6
    expect(states.keptWallets()).toEqual(['w_wsh2of3', 'w_pkh'].map(idOf));
    await walletDetails(world, 'w_shwpkh'); // 26: w_wsh2of3 goes
    expect(states.keptWallets()).toEqual(['w_pkh', 'w_shwpkh'].map(idOf));
    await walletDetails(world, 'w_pkh'); // read again: w_shwpkh is now the least recently read
    await walletDetails(world, 'w_tr'); // 21: w_shwpkh goes, w_pkh stays
    expect(states.keptWallets()).toEqual(['w_pkh', 'w_tr'].map(idOf));
    expect(states.keptWeight()).toBe(15);
    expect(loads.count).toBe(4);
    await walletDetails(world, 'w_wpkh'); // 25: w_pkh goes (w_tr, 9 + 10, stays)
    expect(states.keptWallets()).toEqual(['w_tr', 'w_wpkh'].map(idOf));
    expect(states.keptWeight()).toBe(19);

    // Dropped wallets: the list shows their balances without loading them, and a read loads them again alike.
    const balances = await listedBalances(world);
    expect(loads.count).toBe(5);
    expect(balances.w_pkh).toEqual(first.balance);
    expect(balances.w_wsh2of3).toEqual(wsh2of3.balance);
    const again = await walletDetails(world, 'w_pkh');
    expect(loads.count).toBe(6);
    expect(again).toEqual(first);
    expectWalletMatchesCore(again, timeline.snapshots[last].expected.w_pkh, mempoolAt(last));
    expect(await walletDetails(world, 'w_wsh2of3')).toEqual(wsh2of3); // 14 + 6: both w_tr and w_wpkh go
    expect(states.keptWallets()).toEqual(['w_pkh', 'w_wsh2of3'].map(idOf));
    expect(states.keptWeight()).toBe(20);
  }, 120_000);
});

describe.each(['sqlite', 'postgres'] as const)('reads\' wallet states unread for wallet_states_idle (%s)', (database) => {
  let world: WalletWorld;
  beforeAll(async () => {
    world = await startWalletWorld({}, { database, env: { SERVICE_WALLET_STATES_IDLE: '0.05' } });
    await importFixtureWallets(world, ['w_wpkh', 'w_tr']);
    await syncTo(world, last);
  }, 60_000);
  afterAll(async () => {
    await world?.close();
  });

  it('are dropped, listed without a load, and answer the same once loaded again', async () => {
    expect(world.server.config).toMatchObject({ walletStatesBudget: 500_000, walletStatesIdleMs: 50 });
    const details = await request(`${world.server.api}/service`, { headers: world.auth });
    expect(details.body.config).toMatchObject({ wallet_states_kept: 1000, wallet_states_budget: 500_000, wallet_states_idle: 0.05 });
    const states = world.server.running.runtime.services.wallets.states;
    const loads = countLoads(world);
    const first = await walletDetails(world, 'w_wpkh');
    const tr = await walletDetails(world, 'w_tr');
    expect(loads.count).toBe(2);
    // Nothing reads them: the service's own look for idle states drops both.
    await vi.waitFor(() => expect(states.keptWallets()).toEqual([]), { timeout: 30_000, interval: 20 });
    expect(states.keptWeight()).toBe(0);
    const balances = await listedBalances(world);
    expect(loads.count).toBe(2);
    expect(balances).toEqual({ w_wpkh: first.balance, w_tr: tr.balance });
    const again = await walletDetails(world, 'w_wpkh');
    expect(loads.count).toBe(3);
    expect(again).toEqual(first);
    expectWalletMatchesCore(again, timeline.snapshots[last].expected.w_wpkh, mempoolAt(last));
  }, 60_000);

  it('lists a wallet the sync has not reached yet with no coins, without loading it', async () => {
    await importFixtureWallets(world, ['w_pkh']); // revision 0: no pass ran since
    const states = world.server.running.runtime.services.wallets.states;
    const id = (await world.server.running.runtime.store.wallets.findByAlias('w_pkh'))!.id;
    expect((await world.server.running.runtime.store.wallets.findByAlias('w_pkh'))!.revision).toBe(0);
    const loads = countLoads(world);
    const balances = await listedBalances(world);
    expect(loads.count).toBe(0);
    expect(states.keptWallets()).not.toContain(id);
    expect(balances.w_pkh).toMatchObject({ total_sat: 0, confirmed_sat: 0 });
    expect(balances.w_pkh).toEqual((await walletDetails(world, 'w_pkh')).balance); // what its details show: nothing yet
    // Once the sync has reached it, the list shows its coins.
    await syncTo(world, last);
    expect((await listedBalances(world)).w_pkh).toEqual((await walletDetails(world, 'w_pkh')).balance);
    expect((await walletDetails(world, 'w_pkh')).balance.total_sat).toBeGreaterThan(0);
    expect(states.keptWallets()).toContain(id);
  }, 60_000);
});
