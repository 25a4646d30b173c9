/**
 * The events the sync records, along the recorded timeline on the JSON-RPC test node: transactions first seen,
 * confirmed at 1 and at `confirmations_notify`, a mempool spend replaced, the PSBT whose coin the replacement
 * spent made invalid, and the wallet's scan reaching the tip. Read from the outbox, in its order.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DescriptorDeriver, parseDescriptor } from '../../src/core/descriptor/index.js';
import { NETWORKS } from '../../src/core/network.js';
import { parseTransaction } from '../../src/core/tx.js';
import type { StoredEvent } from '../../src/store/repositories.js';
import { request } from '../support/server.js';
import { startWalletWorld, timeline, walletDetails, wallets, type WalletWorld } from './wallet-helpers.js';

const external = new DescriptorDeriver(parseDescriptor(wallets.w_tr!.recv_descriptor, NETWORKS.regtest)).derive(90).address;
const lowFee: string = timeline.snapshots[8].mempool[0].txid;
const replacement: string = timeline.snapshots[9].mempool[0].txid;
const spentLater = parseTransaction(timeline.snapshots[8].mempool[0].hex).inputs.map((i) => ({ txid: i.txid, vout: i.vout }));

let world: WalletWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe('events of the sync', () => {
  it('record what the chain did to a wallet, once each, in order', async () => {
    world = await startWalletWorld({ snapshot: 7 }, { env: { SERVICE_CONFIRMATIONS_NOTIFY: '2' } });
    const imported = await request(`${world.server.api}/wallets`, {
      method: 'POST',
      headers: world.auth,
      json: { name: 'Hot', alias: 'w_wpkh', recv_descriptor: wallets.w_wpkh!.recv_descriptor, change_descriptor: wallets.w_wpkh!.change_descriptor, birthday: 0 },
    });
    expect(imported.status, imported.text).toBe(201);
    const { store, services } = world.server.running.runtime;
    let seen = 0;
    const next = async (): Promise<StoredEvent[]> => {
      const events = await store.events.listAfter(seen, undefined, 10_000);
      seen = events.at(-1)?.seq ?? seen;
      return events;
    };
    const sync = async (snapshot: number) => {
      world!.node.setSnapshot(snapshot);
      expect((await services.sync.runOnce()).ran).toBe(true);
    };

    await sync(7);
    const first = await next();
    const details = await walletDetails(world, 'w_wpkh');
    const seenTx = first.filter((e) => e.type === 'transaction.received' || e.type === 'transaction.sent');
    expect(seenTx.map((e) => e.data.txid).sort()).toEqual(details.txlist.map((t: any) => t.txid).sort());
    const confirmedTxids = details.txlist.filter((t: any) => t.confirmations >= 2).map((t: any) => t.txid).sort();
    for (const depth of [1, 2]) {
      expect(first.filter((e) => e.type === 'transaction.confirmed' && e.data.confirmations === depth).map((e) => e.data.txid).sort(), `depth ${depth}`).toEqual(confirmedTxids);
    }
    // Each transaction's "seen" event comes before its confirmations; the scan's end comes last.
    for (const e of first.filter((x) => x.type === 'transaction.confirmed')) {
      expect(seenTx.find((s) => s.data.txid === e.data.txid)!.seq).toBeLessThan(e.seq);
    }
    expect(first.filter((e) => e.type === 'wallet.synced')).toHaveLength(1);
    expect(first.at(-1)).toMatchObject({ type: 'wallet.synced', walletAlias: 'w_wpkh', data: { tip_height: 131 } });
    expect(first.every((e) => e.walletAlias === 'w_wpkh')).toBe(true);

    // Nothing new: no event.
    await sync(7);
    expect(await next()).toEqual([]);

    const coins = (await walletDetails(world, 'w_wpkh')).utxo;
    const other = coins.find((u: any) => !spentLater.some((s) => s.txid === u.txid && s.vout === u.vout));
    const doomed = await request(`${world.server.api}/wallets/w_wpkh/psbt`, { method: 'POST', headers: world.auth, json: { recipients: [{ address: external, amount: '0.01' }], fee_rate: 2, inputs: [...spentLater, { txid: other.txid, vout: other.vout }] } });
    expect(doomed.status, doomed.text).toBe(201);
    expect((await next()).map((e) => e.type)).toEqual(['psbt.created']);

    await sync(8);
    expect((await next()).map((e) => [e.type, e.data.txid, e.data.status])).toEqual([['transaction.sent', lowFee, 'mempool']]);

    await sync(9);
    const replaced = await next();
    expect(replaced.map((e) => [e.type, e.data.txid])).toEqual([
      ['transaction.sent', replacement],
      ['transaction.replaced', lowFee],
    ]);
    expect(replaced[1]!.data.replaced_by).toEqual([replacement]);

    await sync(10);
    const settled = await next();
    expect(settled[0]).toMatchObject({ type: 'psbt.invalid', data: { txid: doomed.body.result.tx.txid, status: 'invalid' } });
    expect(settled.filter((e) => e.type === 'transaction.confirmed').map((e) => [e.data.txid, e.data.confirmations])).toContainEqual([replacement, 1]);
    expect(settled.some((e) => e.type === 'wallet.synced')).toBe(false);
  }, 60_000);

  it('follow a wallet whose name, description and key labels changed between passes (its revision stays)', async () => {
    world = await startWalletWorld({ snapshot: 7 });
    const { store, services } = world.server.running.runtime;
    const imported = await request(`${world.server.api}/wallets`, {
      method: 'POST',
      headers: world.auth,
      json: { name: 'Hot', alias: 'w_wpkh', recv_descriptor: wallets.w_wpkh!.recv_descriptor, change_descriptor: wallets.w_wpkh!.change_descriptor, birthday: 0 },
    });
    expect(imported.status, imported.text).toBe(201);
    expect((await services.sync.runOnce()).ran).toBe(true);
    const seen = await store.events.lastSeq();
    const id = (await store.wallets.findByAlias('w_wpkh'))!.id;
    const revision = await store.wallets.revision(id);
    const fingerprint = (await walletDetails(world, 'w_wpkh')).keys[0].fingerprint;
    const edited = await request(`${world.server.api}/wallets/w_wpkh`, { method: 'PATCH', headers: world.auth, json: { name: 'Renamed', description: 'edited', labels: [{ fingerprint, label: 'desk' }] } });
    expect(edited.status, edited.text).toBe(200);
    expect(await store.wallets.revision(id)).toBe(revision);

    world.node.setSnapshot(8);
    expect((await services.sync.runOnce()).ran).toBe(true);
    const events = await store.events.listAfter(seen, undefined, 100);
    expect(events.map((e) => [e.type, e.walletAlias, e.data.txid])).toEqual([['transaction.sent', 'w_wpkh', lowFee]]);
    const details = await walletDetails(world, 'w_wpkh');
    expect(details).toMatchObject({ name: 'Renamed', description: 'edited' });
    expect(details.keys.find((k: any) => k.fingerprint === fingerprint).label).toBe('desk');
    expect(details.txlist.map((t: any) => t.txid)).toContain(lowFee);
  }, 60_000);

  it('keep syncing when a wallet still waiting for its first block is deleted', async () => {
    world = await startWalletWorld({ snapshot: 7 });
    const { services } = world.server.running.runtime;
    const future = await request(`${world.server.api}/wallets`, {
      method: 'POST',
      headers: world.auth,
      json: { name: 'Later', alias: 'w_later', recv_descriptor: wallets.w_tr!.recv_descriptor, change_descriptor: wallets.w_tr!.change_descriptor, birthday: 1000 },
    });
    expect(future.status, future.text).toBe(201);
    expect((await services.sync.runOnce()).ran).toBe(true);
    expect((await request(`${world.server.api}/wallets/w_later`, { method: 'DELETE', headers: world.auth })).status).toBe(200);
    const pass = await services.sync.runOnce();
    expect(pass.ran).toBe(true);
    expect(pass.tip?.height).toBe(131);
  }, 60_000);
  for (const database of ['sqlite', 'postgres'] as const) {
    it(`announce each transaction once per wallet: a rescan records only its scan's end (${database})`, async () => {
      world = await startWalletWorld({ snapshot: 7 }, { database, env: { SERVICE_CONFIRMATIONS_NOTIFY: '2' } });
      const imported = await request(`${world.server.api}/wallets`, {
        method: 'POST',
        headers: world.auth,
        json: { name: 'Hot', alias: 'w_wpkh', recv_descriptor: wallets.w_wpkh!.recv_descriptor, change_descriptor: wallets.w_wpkh!.change_descriptor, birthday: 0 },
      });
      expect(imported.status, imported.text).toBe(201);
      const { store, services } = world.server.running.runtime;
      expect((await services.sync.runOnce()).ran).toBe(true);
      const first = await store.events.listAfter(0, undefined, 10_000);
      expect(first.filter((e) => e.type.startsWith('transaction.')).length).toBeGreaterThan(10);
      for (let i = 0; i < 2; i++) {
        const rescan = await request(`${world.server.api}/wallets/w_wpkh/rescan`, { method: 'POST', headers: world.auth, json: { from: 0 } });
        expect(rescan.status, rescan.text).toBeLessThan(300);
        expect((await services.sync.runOnce()).ran).toBe(true);
      }
      const after = await store.events.listAfter(first.at(-1)!.seq, undefined, 10_000);
      expect(after.map((e) => e.type)).toEqual(['wallet.synced', 'wallet.synced']);

      // The chain moving on is still announced: the mempool spend, its first confirmation, depth 2 a block later.
      world.node.setSnapshot(8);
      expect((await services.sync.runOnce()).ran).toBe(true);
      const moved = await store.events.listAfter(after.at(-1)!.seq, undefined, 10_000);
      expect(moved.map((e) => [e.type, e.data.txid])).toContainEqual(['transaction.sent', lowFee]);
    }, 60_000);
  }
});
