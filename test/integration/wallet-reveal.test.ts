/**
 * `POST /wallets/{alias}/addresses/next` over HTTP, on SQLite and on PostgreSQL, with two service instances
 * on one store: every call reveals a new receive address, concurrent callers on either instance never get the
 * same one nor one more than the gap limit past the last used, revealing continues after what the chain shows
 * used, and the instance that syncs watches the gap limit past the last revealed address (w_wpkh is paid at
 * receive index 19 and 30 in the fixture chain).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALWAYS_LEADER } from '../../src/services/sync/leadership.js';
import { SyncService } from '../../src/services/sync/sync-service.js';
import { PsbtChainReconciler } from '../../src/services/psbts/chain-reconciler.js';
import { WalletScriptsCache } from '../../src/services/wallet-state.js';
import { bearer, createToken, request, startTestServer, type TestServer } from '../support/server.js';
import { expectWalletMatchesCore, nodeEnv, sats, startWalletWorld, timeline, walletDetails, wallets, type WalletWorld } from './wallet-helpers.js';

const PAID_SNAPSHOT = 4; // w_wpkh has been paid at receive index 0, 1, 3, 19 and 30
const mempoolOf = (i: number) => new Set<string>(timeline.snapshots[i].mempool.map((m: any) => m.txid));

describe.each(['sqlite', 'postgres'] as const)('revealing receive addresses on %s', (database) => {
  let world: WalletWorld;
  let other: TestServer;
  let bob: { authorization: string };
  let carol: { authorization: string };

  const next = (server: TestServer, alias: string, auth: { authorization: string } = world.auth) =>
    request(`${server.api}/wallets/${alias}/addresses/next`, { method: 'POST', headers: auth });
  const reveal = async (server: TestServer, alias: string, auth?: { authorization: string }) => {
    const response = await next(server, alias, auth);
    expect(response.status, response.text).toBe(200);
    return response.body as { address: string; index: number };
  };
  const receiveAddresses = async (alias: string, from: number, count: number): Promise<string[]> => {
    const response = await request(`${world.server.api}/wallets/${alias}/addresses?branch=receive&from=${from}&count=${count}`, { headers: world.auth });
    expect(response.status, response.text).toBe(200);
    return response.body.addresses.map((a: any) => a.address);
  };
  const importWpkh = async (alias: string, extra: Record<string, unknown> = {}) => {
    const w = wallets.w_wpkh!;
    const body = { name: alias, alias, recv_descriptor: w.recv_descriptor, change_descriptor: w.change_descriptor, birthday: 0, ...extra };
    const response = await request(`${world.server.api}/wallets`, { method: 'POST', headers: world.auth, json: body });
    expect(response.status, response.text).toBe(201);
  };
  const sync = () => world.server.running.runtime.services.sync.runOnce();

  beforeAll(async () => {
    world = await startWalletWorld({ snapshot: 0 }, { database });
    // A second instance on the same store (same data folder, so the same token signing key), not syncing.
    other = await startTestServer({
      dataFolder: world.server.dataFolder,
      env: nodeEnv(world.node),
      ...(database === 'postgres' ? { database, postgresSchema: world.server.postgresSchema! } : {}),
    });
    const users = world.server.running.runtime.services.users;
    await users.addUser('bob', 'bob-password-123', { admin: false });
    await users.addUser('carol', 'carol-password-123', { admin: false });
    bob = { authorization: bearer((await createToken(world.server, 'bob', 'bob-password-123', 'bob')).jwt_token) };
    carol = { authorization: bearer((await createToken(world.server, 'carol', 'carol-password-123', 'carol')).jwt_token) };
    await importWpkh('w', { shared_with: [{ user: 'bob', access: 'read' }] });
    await importWpkh('narrow', { gap_limit: 5 });
    await importWpkh('control', { gap_limit: 5 });
    await sync(); // snapshot 0: nothing paid yet, every wallet loaded by the syncing instance
  }, 120_000);
  afterAll(async () => {
    await other?.stop();
    await world?.close();
  });

  it('hands out consecutive, distinct addresses after the one the details show, which stays', async () => {
    const derived = await receiveAddresses('w', 0, 5);
    const first = await reveal(world.server, 'w');
    const second = await reveal(other, 'w');
    const third = await reveal(world.server, 'w');
    expect([first, second, third]).toEqual([1, 2, 3].map((index) => ({ address: derived[index], index })));
    // Read access suffices to receive.
    expect(await reveal(other, 'w', bob)).toEqual({ address: derived[4], index: 4 });
    for (const server of [world.server, other]) {
      const details = await walletDetails({ server, auth: world.auth }, 'w');
      expect({ address: details.address, index: details.address_index }).toEqual({ address: derived[0], index: 0 });
    }
  });

  it('never hands out the address the details show, to concurrent callers of two instances reading the details meanwhile', async () => {
    await importWpkh('shop', { gap_limit: 10 });
    const shown = new Set<string>();
    const readDetails = async (server: TestServer) => {
      const details = await walletDetails({ server, auth: world.auth }, 'shop');
      shown.add(details.address);
      return details.address_index as number;
    };
    const calls = Array.from({ length: 12 }, (_, i) => next(i % 2 === 0 ? world.server : other, 'shop'));
    const reads = Array.from({ length: 8 }, (_, i) => readDetails(i % 2 === 0 ? other : world.server));
    const [responses, shownIndexes] = await Promise.all([Promise.all(calls), Promise.all(reads)]);
    shownIndexes.push(await readDetails(world.server), await readDetails(other));
    // Whoever read the details, before, during or after the calls, was shown index 0, which no caller got.
    expect(new Set(shownIndexes)).toEqual(new Set([0]));
    expect(shown.size).toBe(1);
    const answers = responses.filter((r) => r.status === 200).map((r) => r.body as { address: string; index: number });
    expect(answers.map((a) => a.index).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    for (const answer of answers) expect(shown.has(answer.address)).toBe(false);
    expect(new Set(answers.map((a) => a.address)).size).toBe(9);
    expect(responses.filter((r) => r.status === 409)).toHaveLength(3);
  });

  it('refuses callers without access exactly like a missing wallet, and unauthenticated ones', async () => {
    const hidden = await next(world.server, 'w', carol);
    const missing = await next(world.server, 'no-such-wallet');
    expect(hidden.status).toBe(404);
    expect(hidden.body).toEqual(missing.body);
    expect(hidden.body.code).toBe('wallet_not_found');
    const anonymous = await request(`${world.server.api}/wallets/w/addresses/next`, { method: 'POST' });
    expect(anonymous.status).toBe(401);
    // Neither consumed an index.
    expect((await reveal(world.server, 'w')).index).toBe(5);
  });

  it('gives concurrent callers on two instances distinct consecutive indexes, up to the gap limit and no further', async () => {
    const calls = Array.from({ length: 24 }, (_, i) => next(i % 2 === 0 ? world.server : other, 'w'));
    const responses = await Promise.all(calls);
    // 0 is shown, 1..5 are out already and nothing is used: with a gap limit of 20, 6..19 go out once each.
    const answers = responses.filter((r) => r.status === 200).map((r) => r.body as { address: string; index: number });
    expect(answers.map((a) => a.index).sort((a, b) => a - b)).toEqual(Array.from({ length: 14 }, (_, i) => 6 + i));
    expect(new Set(answers.map((a) => a.address)).size).toBe(14);
    const derived = await receiveAddresses('w', 6, 14);
    for (const answer of answers) expect(answer.address).toBe(derived[answer.index - 6]);
    const refused = responses.filter((r) => r.status !== 200);
    expect(refused).toHaveLength(10);
    for (const r of refused) {
      expect(r.status).toBe(409);
      expect(r.body).toEqual({
        code: 'gap_limit_reached',
        message:
          "Every receive address up to the gap limit (20) past the last used one was handed out already: use one of those unused addresses, or have the wallet's owner raise its gap_limit",
      });
    }
  });

  it('reveals up to the gap limit, further once the owner raises it; the sync watches the gap limit past the last revealed', async () => {
    // Gap limit 5: index 0 is shown, 1-4 go out, then the wallet refuses, on either instance.
    for (let i = 1; i < 5; i++) expect((await reveal(other, 'narrow')).index).toBe(i);
    expect((await next(world.server, 'narrow')).body.code).toBe('gap_limit_reached');
    // Only the owner raises the gap limit; a read user is refused like a stranger.
    await request(`${world.server.api}/wallets/narrow`, { method: 'PATCH', headers: world.auth, json: { shared_with: [{ user: 'bob', access: 'read' }] } });
    const byBob = await request(`${world.server.api}/wallets/narrow`, { method: 'PATCH', headers: bob, json: { gap_limit: 12 } });
    expect(byBob.status).toBe(404);
    const raised = await request(`${world.server.api}/wallets/narrow`, { method: 'PATCH', headers: world.auth, json: { gap_limit: 12 } });
    expect(raised.status, raised.text).toBe(200);
    for (let i = 5; i < 12; i++) expect((await reveal(other, 'narrow')).index).toBe(i);
    expect((await next(other, 'narrow')).status).toBe(409);
    // Revealed up to 11 with a gap limit of 12, the sync watches up to 23 and finds index 19, then 30.
    world.node.setSnapshot(PAID_SNAPSHOT);
    await sync();
    const expected = timeline.snapshots[PAID_SNAPSHOT].expected.w_wpkh;
    for (const server of [world.server, other]) {
      expectWalletMatchesCore(await walletDetails({ server, auth: world.auth }, 'narrow'), expected, mempoolOf(PAID_SNAPSHOT));
    }
    const narrow = await walletDetails(world, 'narrow');
    const paid30 = await receiveAddresses('narrow', 30, 1);
    expect(narrow.utxo.some((u: any) => u.address === paid30[0])).toBe(true);
    // The same chain with a gap limit of 5 and no reveals: 19 and 30 stay beyond the gap, their coins unseen.
    const control = await walletDetails(world, 'control');
    expect(control.balance.total_sat).toBeLessThan(sats(expected.balances.trusted) + sats(expected.balances.untrusted_pending));
    expect(control.utxo.some((u: any) => u.address === paid30[0])).toBe(false);
  });

  it('continues after the last index the chain shows used', async () => {
    // The fixture chain now shows receive index 30 used: the details of wallets that revealed less show 31,
    // and revealing continues at 32.
    expect((await walletDetails(world, 'control')).address_index).toBe(4);
    expect((await walletDetails(world, 'narrow')).address_index).toBe(31);
    expect(await reveal(world.server, 'narrow')).toMatchObject({ index: 32 });
    const w = await walletDetails(world, 'w');
    expect(w.address_index).toBe(31);
    expect((await reveal(other, 'w')).index).toBe(32);
    expect((await reveal(world.server, 'w')).index).toBe(33);
    expect((await walletDetails({ server: other, auth: world.auth }, 'w')).address).toBe(w.address);
  });

  it('a reveal that commits while the sync reads the node tip is watched for the blocks up to that tip', async () => {
    await importWpkh('late', { gap_limit: 12 });
    const runtime = world.server.running.runtime;
    const follower = runtime.services.chain.source!.follower;
    // The node's tip answers only after 1..11 were revealed on the other instance (0 is shown): any block up
    // to that tip may pay the addresses up to 11 + 12, so the pass must watch them although it loaded the
    // wallet before (without the reveals it would watch 0..11, find 3 and stop at 15, missing 19 and 30).
    let revealed = false;
    const chain = new Proxy(follower, {
      get(target, property) {
        if (property === 'tip') {
          return async () => {
            const tip = await target.tip();
            if (!revealed) {
              revealed = true;
              for (let i = 1; i < 12; i++) expect((await reveal(other, 'late')).index).toBe(i);
            }
            return tip;
          };
        }
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const pass = new SyncService({ store: runtime.store, follower: chain, scripts: new WalletScriptsCache(), leadership: ALWAYS_LEADER, psbts: new PsbtChainReconciler(Date.now) });
    await pass.runOnce();
    expectWalletMatchesCore(await walletDetails(world, 'late'), timeline.snapshots[PAID_SNAPSHOT].expected.w_wpkh, mempoolOf(PAID_SNAPSHOT));
  });
});
