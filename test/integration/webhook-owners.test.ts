/**
 * Whose webhooks are whose: a token limited to some wallets sees and changes only the webhooks that stay
 * within them, and a deleted user's webhooks go with the user (a new user of the same name finds none, and
 * nothing reaches the old receiver). A real server over HTTP, the `wcs` command for the deletion.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DescriptorDeriver, parseDescriptor } from '../../src/core/descriptor/index.js';
import { NETWORKS } from '../../src/core/network.js';
import { runCli } from '../support/cli.js';
import { TestClock } from '../support/clock.js';
import { basicAuth, bearer, request } from '../support/server.js';
import { nodeEnv, startWalletWorld, walletDetails, wallets, type WalletWorld } from './wallet-helpers.js';
import { startReceiver, type Receiver } from './webhook-helpers.js';

const external = new DescriptorDeriver(parseDescriptor(wallets.w_tr!.recv_descriptor, NETWORKS.regtest)).derive(90).address;

let world: WalletWorld | undefined;
const receivers: Receiver[] = [];
afterEach(async () => {
  await world?.close();
  world = undefined;
  for (const r of receivers.splice(0)) await r.close();
});

async function setUp(): Promise<WalletWorld> {
  const w = await startWalletWorld({ snapshot: 7 }, { now: new TestClock().now, env: { SERVICE_WEBHOOK_ALLOW_PRIVATE: 'True' } });
  for (const alias of ['w_wpkh', 'w_tr']) {
    const imported = await request(`${w.server.api}/wallets`, {
      method: 'POST',
      headers: w.auth,
      json: { name: alias, alias, recv_descriptor: wallets[alias]!.recv_descriptor, change_descriptor: wallets[alias]!.change_descriptor, birthday: 0 },
    });
    expect(imported.status, imported.text).toBe(201);
  }
  expect((await w.server.running.runtime.services.sync.runOnce()).ran).toBe(true);
  return w;
}

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  receivers.push(r);
  return r;
}

async function tokenFor(user: string, password: string, fields: Record<string, unknown> = {}): Promise<{ authorization: string }> {
  const created = await request(`${world!.server.api}/token`, { method: 'POST', headers: { authorization: basicAuth(user, password) }, json: { jwt_token_description: `t ${Math.random()}`, jwt_token_life: '1 days', ...fields } });
  expect(created.status, created.text).toBe(201);
  return { authorization: bearer(created.body.jwt_token) };
}

async function register(auth: { authorization: string }, json: unknown): Promise<any> {
  const created = await request(`${world!.server.api}/webhooks`, { method: 'POST', headers: auth, json });
  expect(created.status, created.text).toBe(201);
  return created.body;
}

async function createPsbt(coin: { txid: string; vout: number }): Promise<string> {
  const created = await request(`${world!.server.api}/wallets/w_wpkh/psbt`, { method: 'POST', headers: world!.auth, json: { recipients: [{ address: external, amount: '0.01' }], fee_rate: 2, inputs: [coin] } });
  expect(created.status, created.text).toBe(201);
  return created.body.result.tx.txid as string;
}

const deliverRound = () => world!.server.running.runtime.services.webhookDeliverer.runOnce();

describe('webhooks and narrowed tokens', () => {
  it('a token limited to some wallets reaches only the webhooks within them; the others answer as missing', async () => {
    world = await setUp();
    const api = `${world.server.api}/webhooks`;
    const old = await receiver();
    const taken = await receiver();
    const other = await register(world.auth, { url: old.url, events: ['psbt.created'], wallets: ['w_wpkh'] });
    const both = await register(world.auth, { url: old.url, events: ['psbt.created'], wallets: ['w_wpkh', 'w_tr'] });
    const inside = await register(world.auth, { url: old.url, events: ['psbt.created'], wallets: ['w_tr'] });
    await createPsbt((await walletDetails(world, 'w_wpkh')).utxo[0]);
    await deliverRound();
    expect(old.deliveries).toHaveLength(2);
    const [delivery] = (await request(`${api}/${other.id}/deliveries`, { headers: world.auth })).body.deliveries;

    const narrow = await tokenFor('admin', world.server.adminPassword, { permissions: ['webhooks:manage'], wallets: ['w_tr'] });
    expect((await request(api, { headers: narrow })).body.webhooks.map((w: any) => w.id)).toEqual([inside.id]);
    for (const hidden of [other, both]) {
      const attempts = [
        await request(`${api}/${hidden.id}`, { headers: narrow }),
        await request(`${api}/${hidden.id}`, { method: 'PATCH', headers: narrow, json: { url: taken.url } }),
        await request(`${api}/${hidden.id}/deliveries`, { headers: narrow }),
        await request(`${api}/${hidden.id}/deliveries/${delivery.id}/redeliver`, { method: 'POST', headers: narrow }),
        await request(`${api}/${hidden.id}`, { method: 'DELETE', headers: narrow }),
      ];
      for (const answer of attempts) expect([answer.status, answer.body.code], answer.text).toEqual([404, 'webhook_not_found']);
    }
    // Nothing changed: same URL, nothing redelivered anywhere.
    expect((await request(`${api}/${other.id}`, { headers: world.auth })).body.url).toBe(old.url);
    await deliverRound();
    expect(taken.deliveries).toHaveLength(0);
    expect(old.deliveries).toHaveLength(2);

    // Its own webhook it may read and change, but not stretch to a wallet outside its list.
    expect((await request(`${api}/${inside.id}`, { method: 'PATCH', headers: narrow, json: { url: taken.url } })).status).toBe(200);
    const stretched = await request(`${api}/${inside.id}`, { method: 'PATCH', headers: narrow, json: { wallets: ['w_tr', 'w_wpkh'] } });
    expect([stretched.status, stretched.body.code]).toEqual([404, 'wallet_not_found']);
    // Creating is limited to its wallets too.
    const outside = await request(api, { method: 'POST', headers: narrow, json: { url: taken.url, events: ['psbt.created'], wallets: ['w_wpkh'] } });
    expect([outside.status, outside.body.code]).toEqual([404, 'wallet_not_found']);
    const mixed = await request(api, { method: 'POST', headers: narrow, json: { url: taken.url, events: ['psbt.created'], wallets: ['w_tr', 'w_wpkh'] } });
    expect([mixed.status, mixed.body.code]).toEqual([404, 'wallet_not_found']);
    const own = await register(narrow, { url: taken.url, events: ['psbt.created'], wallets: ['w_tr'] });
    const ids = async (auth: { authorization: string }) => (await request(api, { headers: auth })).body.webhooks.map((w: any) => w.id).sort();
    expect(await ids(narrow)).toEqual([inside.id, own.id].sort());
    // The user's unrestricted token still sees them all.
    expect(await ids(world.auth)).toEqual([other.id, both.id, inside.id, own.id].sort());
  }, 60_000);
});

describe('webhooks of a deleted user', () => {
  it('go with the user: a new user of the same name finds none, and nothing reaches the old receiver', async () => {
    world = await setUp();
    const { services } = world.server.running.runtime;
    const env = { ...nodeEnv(world.node), SERVICE_DATA_FOLDER: world.server.dataFolder };
    const api = `${world.server.api}/webhooks`;
    const shareWithEve = async () => {
      const shared = await request(`${world!.server.api}/wallets/w_wpkh`, { method: 'PATCH', headers: world!.auth, json: { shared_with: [{ user: 'eve', access: 'read' }] } });
      expect(shared.status, shared.text).toBe(200);
    };
    await services.users.addUser('eve', 'eve-password-1', { admin: false });
    await shareWithEve();
    const old = await receiver();
    const eve = await tokenFor('eve', 'eve-password-1');
    const hook = await register(eve, { url: old.url, events: ['psbt.created'], wallets: ['w_wpkh'] });
    const coins = (await walletDetails(world, 'w_wpkh')).utxo;
    await createPsbt(coins[0]);
    await deliverRound();
    expect(old.deliveries).toHaveLength(1);

    const deleted = await runCli(['user', 'delete', 'eve'], env);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout).toContain('1 webhook(s) with their delivery logs');

    await services.users.addUser('eve', 'eve-password-2', { admin: false });
    await shareWithEve();
    const newEve = await tokenFor('eve', 'eve-password-2');
    expect((await request(api, { headers: newEve })).body.webhooks).toEqual([]);
    expect((await request(`${api}/${hook.id}`, { headers: newEve })).status).toBe(404);
    expect((await request(`${api}/${hook.id}/deliveries`, { headers: newEve })).status).toBe(404);
    await createPsbt(coins[1]);
    await deliverRound();
    expect(old.deliveries).toHaveLength(1);
  }, 60_000);

  it('go with the user on PostgreSQL too, in the transaction that deletes the user and the wallets it owns', async () => {
    world = await startWalletWorld({ snapshot: 7 }, { database: 'postgres', now: new TestClock().now, env: { SERVICE_WEBHOOK_ALLOW_PRIVATE: 'True' } });
    const { services } = world.server.running.runtime;
    await services.users.addUser('eve', 'eve-password-1', { admin: false });
    const eve = await tokenFor('eve', 'eve-password-1');
    const imported = await request(`${world.server.api}/wallets`, {
      method: 'POST',
      headers: eve,
      json: { name: 'Eve', alias: 'eve_hot', recv_descriptor: wallets.w_wpkh!.recv_descriptor, change_descriptor: wallets.w_wpkh!.change_descriptor, birthday: 0 },
    });
    expect(imported.status, imported.text).toBe(201);
    const old = await receiver();
    const hook = await register(eve, { url: old.url, events: ['psbt.created', 'transaction.received'], wallets: ['eve_hot'] });

    // Handed to admin with the user: the wallet's events go to admin's webhooks only, never to eve's old URL.
    expect(await services.users.deleteUser('eve', { wallets: { action: 'transfer', to: 'admin' } })).toMatchObject({ webhooks: 1, walletsTransferred: ['eve_hot'] });
    expect((await request(`${world.server.api}/webhooks/${hook.id}`, { headers: world.auth })).status).toBe(404);
    await services.users.addUser('eve', 'eve-password-2', { admin: false });
    expect((await request(`${world.server.api}/webhooks`, { headers: await tokenFor('eve', 'eve-password-2') })).body.webhooks).toEqual([]);
    const shared = await request(`${world.server.api}/wallets/eve_hot`, { method: 'PATCH', headers: world.auth, json: { shared_with: [{ user: 'eve', access: 'read' }] } });
    expect(shared.status, shared.text).toBe(200);
    expect((await services.sync.runOnce()).ran).toBe(true);
    await deliverRound();
    expect(old.deliveries).toHaveLength(0);
  }, 60_000);
});
