/** Addresses, next address, coin freezing and labels over HTTP, on a synced fixture wallet. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DescriptorDeriver, parseDescriptor } from '../../src/core/descriptor/index.js';
import { NETWORKS } from '../../src/core/network.js';
import { request } from '../support/server.js';
import { startWalletWorld, timeline, walletDetails, wallets, type WalletWorld } from './wallet-helpers.js';

let world: WalletWorld;
const SNAPSHOT = 4;

beforeAll(async () => {
  world = await startWalletWorld({ snapshot: SNAPSHOT });
  const w = wallets.w_wpkh!;
  const created = await request(`${world.server.api}/wallets`, { method: 'POST', headers: world.auth, json: { name: 'w', alias: 'w', recv_descriptor: w.recv_descriptor, change_descriptor: w.change_descriptor, birthday: 0 } });
  expect(created.status).toBe(201);
  await world.server.running.runtime.services.sync.runOnce();
}, 60_000);
afterAll(() => world?.close());

describe('addresses', () => {
  it('lists derived addresses with use, matching the addresses Core reported', async () => {
    const expected = timeline.snapshots[SNAPSHOT].expected.w_wpkh;
    const usedByCore = new Set<string>(expected.unspent.map((u: any) => u.address));
    const response = await request(`${world.server.api}/wallets/w/addresses?branch=receive&from=0&count=40`, { headers: world.auth });
    expect(response.status).toBe(200);
    expect(response.body.addresses).toHaveLength(40);
    expect(response.body.addresses[5].index).toBe(5);
    const used = response.body.addresses.filter((a: any) => a.used).map((a: any) => a.address);
    for (const address of usedByCore) if (response.body.addresses.some((a: any) => a.address === address)) expect(used).toContain(address);
    // Receive indexes 0, 1, 3, 19 and 30 were used in the timeline; 2 was not.
    expect(response.body.addresses.filter((a: any) => a.used).map((a: any) => a.index)).toEqual(expect.arrayContaining([0, 1, 3, 19, 30]));
    expect(response.body.addresses[2].used).toBe(false);
    // The details show 31, the first unused; revealing hands out the one after it, and the details keep 31.
    const shown = await walletDetails(world, 'w');
    expect({ address: shown.address, index: shown.address_index }).toEqual({ address: response.body.addresses[31].address, index: 31 });
    const next = await request(`${world.server.api}/wallets/w/addresses/next`, { method: 'POST', headers: world.auth });
    expect(next.body).toEqual({ address: response.body.addresses[32].address, index: 32 });
    expect((await walletDetails(world, 'w')).address).toBe(shown.address);
    const bad = await request(`${world.server.api}/wallets/w/addresses?count=5000`, { headers: world.auth });
    expect(bad.status).toBe(400);
  });

  it('lists a page far past the watched addresses, up to the last index, the same as the descriptor derives it', async () => {
    const last = 2 ** 31 - 1;
    const deriver = new DescriptorDeriver(parseDescriptor(wallets.w_wpkh!.change_descriptor, NETWORKS.regtest));
    const page = await request(`${world.server.api}/wallets/w/addresses?branch=change&from=${last - 2}&count=3`, { headers: world.auth });
    expect(page.status, page.text).toBe(200);
    expect(page.body.addresses).toEqual([last - 2, last - 1, last].map((index) => ({ index, address: deriver.derive(index).address, label: '', used: false })));
    const middle = await request(`${world.server.api}/wallets/w/addresses?from=1000000&count=2`, { headers: world.auth });
    expect(middle.body.addresses.map((a: { index: number }) => a.index)).toEqual([1_000_000, 1_000_001]);

    const past = await request(`${world.server.api}/wallets/w/addresses?from=${last}&count=2`, { headers: world.auth });
    expect(past.status).toBe(400);
    expect(past.body).toMatchObject({ code: 'invalid_request', errors: [{ path: '/from' }] });
  });
});

describe('coins', () => {
  it('pages the coin list and the details\' coins in one order, most confirmations first; bad page values are 400', async () => {
    const all = await request(`${world.server.api}/wallets/w/utxo`, { headers: world.auth });
    expect(all.status, all.text).toBe(200);
    const coins = all.body.utxo;
    expect(coins.length).toBeGreaterThan(3);
    const confirmations = coins.map((u: any) => u.confirmations);
    expect(confirmations).toEqual([...confirmations].sort((a: number, b: number) => b - a));
    const page = await request(`${world.server.api}/wallets/w/utxo?limit=2&offset=1`, { headers: world.auth });
    expect(page.body.utxo).toEqual(coins.slice(1, 3));
    const pages = [];
    for (let offset = 0; offset < coins.length; offset += 2) pages.push(...(await request(`${world.server.api}/wallets/w/utxo?limit=2&offset=${offset}`, { headers: world.auth })).body.utxo);
    expect(pages).toEqual(coins);
    expect((await request(`${world.server.api}/wallets/w/utxo?offset=${coins.length}`, { headers: world.auth })).body.utxo).toEqual([]);

    const details = await walletDetails(world, 'w');
    const withoutFlags = coins.map(({ frozen: _frozen, ...coin }: any) => coin);
    expect(details.utxo).toEqual(withoutFlags);
    const paged = await request(`${world.server.api}/wallets/w?utxo_limit=1&utxo_offset=2`, { headers: world.auth });
    expect(paged.status, paged.text).toBe(200);
    expect(paged.body.utxo).toEqual(withoutFlags.slice(2, 3));
    expect(paged.body.txlist).toEqual(details.txlist); // the coin page leaves the transaction list whole
    expect(paged.body.balance).toEqual(details.balance); // and the balance counts every coin
    const both = await request(`${world.server.api}/wallets/w?limit=1&utxo_limit=0`, { headers: world.auth });
    expect(both.body.utxo).toEqual([]);
    expect(both.body.txlist).toEqual(details.txlist.slice(0, 1));

    for (const query of ['utxo_limit=-1', 'utxo_offset=1e3', 'utxo_limit=0x2']) {
      const bad = await request(`${world.server.api}/wallets/w?${query}`, { headers: world.auth });
      expect(bad.status, query).toBe(400);
      expect(bad.body.errors).toEqual([{ path: `/querystring/${query.split('=')[0]}`, message: expect.any(String) }]);
    }
    const bad = await request(`${world.server.api}/wallets/w/utxo?limit=-1`, { headers: world.auth });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'invalid_request', errors: [{ path: '/querystring/limit' }] });
  });

  it('freezes and labels one coin; the label shows in the details; unknown coins are 404', async () => {
    const details = await walletDetails(world, 'w');
    const coin = details.utxo[0];
    const patched = await request(`${world.server.api}/wallets/w/utxo`, { method: 'PATCH', headers: world.auth, json: { txid: coin.txid, vout: coin.vout, frozen: true, label: 'savings' } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.utxo.find((u: any) => u.txid === coin.txid && u.vout === coin.vout)).toMatchObject({ frozen: true, label: 'savings', reserved_by: null });
    const spendable = await world.server.running.runtime.services.wallets.coins.forSpending((await world.server.running.runtime.store.wallets.findByAlias('w'))!.id);
    expect(spendable.utxos.find((u) => u.txid === coin.txid && u.vout === coin.vout)).toMatchObject({ frozen: true });
    expect(spendable.utxos.every((u) => typeof u.prevTxHex === 'string' && u.prevTxHex.length > 0)).toBe(true);
    expect((await walletDetails(world, 'w')).utxo.find((u: any) => u.txid === coin.txid && u.vout === coin.vout).label).toBe('savings');
    const unfrozen = await request(`${world.server.api}/wallets/w/utxo`, { method: 'PATCH', headers: world.auth, json: { txid: coin.txid, vout: coin.vout, frozen: false } });
    expect(unfrozen.body.utxo.find((u: any) => u.txid === coin.txid && u.vout === coin.vout)).toMatchObject({ frozen: false, label: 'savings' });
    const missing = await request(`${world.server.api}/wallets/w/utxo`, { method: 'PATCH', headers: world.auth, json: { txid: 'ab'.repeat(32), vout: 0, frozen: true } });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('utxo_not_found');
  });

  it('never spends a frozen coin: PSBT creation takes the one coin left unfrozen, and none once it is frozen too', async () => {
    const external = new DescriptorDeriver(parseDescriptor(wallets.w_tr!.recv_descriptor, NETWORKS.regtest)).derive(91).address;
    const coins: { txid: string; vout: number; amount: string }[] = (await walletDetails(world, 'w')).utxo;
    const kept = coins.reduce((a, b) => (Number(b.amount) > Number(a.amount) ? b : a));
    const setFrozen = (coin: { txid: string; vout: number }, frozen: boolean) =>
      request(`${world.server.api}/wallets/w/utxo`, { method: 'PATCH', headers: world.auth, json: { txid: coin.txid, vout: coin.vout, frozen } });
    for (const coin of coins) if (coin !== kept) expect((await setFrozen(coin, true)).status).toBe(200);
    const psbt = () => request(`${world.server.api}/wallets/w/psbt`, { method: 'POST', headers: world.auth, json: { recipients: [{ address: external, amount: 10_000, unit: 'sat' }], fee_rate: 1 } });
    const made = await psbt();
    expect(made.status, made.text).toBe(201);
    expect(made.body.result.tx.vin.map((i: any) => `${i.txid}:${i.vout}`)).toEqual([`${kept.txid}:${kept.vout}`]);
    await request(`${world.server.api}/wallets/w/psbt/${made.body.result.tx.txid}`, { method: 'DELETE', headers: world.auth });
    expect((await setFrozen(kept, true)).status).toBe(200);
    const none = await psbt();
    expect({ status: none.status, code: none.body.code }).toEqual({ status: 422, code: 'insufficient_funds' });
    // The other way round, on the same revision: only the coin spent before is frozen now.
    for (const coin of coins) if (coin !== kept) expect((await setFrozen(coin, false)).status).toBe(200);
    for (let i = 0; i < 3; i++) {
      const other = await psbt();
      expect(other.status, other.text).toBe(201);
      expect(other.body.result.tx.vin.map((v: any) => `${v.txid}:${v.vout}`)).not.toContain(`${kept.txid}:${kept.vout}`);
      await request(`${world.server.api}/wallets/w/psbt/${other.body.result.tx.txid}`, { method: 'DELETE', headers: world.auth });
    }
    expect((await setFrozen(kept, false)).status).toBe(200);
  });

  it('labels addresses through the spending seam; transactions show the label', async () => {
    const id = (await world.server.running.runtime.store.wallets.findByAlias('w'))!.id;
    const details = await walletDetails(world, 'w');
    const entry = details.txlist.find((e: any) => e.category === 'receive');
    const { runtime } = world.server.running;
    await runtime.store.transaction(runtime.services.wallets.coins.addressLabelsWrite(id, [{ address: entry.address.toUpperCase(), label: 'from exchange' }]));
    const after = await walletDetails(world, 'w');
    expect(after.txlist.find((e: any) => e.txid === entry.txid).label).toBe('from exchange');
  });
});

describe('pending PSBTs in the wallet details, and wallet deletion', () => {
  it('shows the reserving PSBT on its coins and the pending count; deleting the wallet removes its PSBTs and reservations', async () => {
    const recipient = timeline.snapshots[SNAPSHOT].expected.w_pkh.unspent[0]?.address ?? (await walletDetails(world, 'w')).address;
    const created = await request(`${world.server.api}/wallets/w/psbt`, {
      method: 'POST',
      headers: world.auth,
      json: { recipients: [{ address: recipient, amount: '10000', unit: 'sat' }], fee_rate: '2' },
    });
    expect(created.status, created.text).toBe(201);
    const psbtTxid = created.body.result.tx.txid;
    const details = await walletDetails(world, 'w');
    expect(details.pending_psbts).toBe(1);
    const reserved = details.utxo.filter((u: any) => u.reserved_by !== null);
    expect(reserved.length).toBeGreaterThan(0);
    expect(reserved.every((u: any) => u.reserved_by === psbtTxid)).toBe(true);

    const store = world.server.running.runtime.store;
    const id = (await store.wallets.findByAlias('w'))!.id;
    expect((await request(`${world.server.api}/wallets/w`, { method: 'DELETE', headers: world.auth })).status).toBe(200);
    expect(await store.psbts.list(id)).toEqual([]);
    expect(await store.psbts.reservations(id)).toEqual([]);
  });
});
