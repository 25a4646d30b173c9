/**
 * Webhooks against a real HTTP receiver: a real server (SQLite file), the JSON-RPC test node on the recorded
 * fixtures, PSBTs created and deleted over HTTP. Time moves with the server's test clock, never by sleeping.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DescriptorDeriver, parseDescriptor } from '../../src/core/descriptor/index.js';
import { NETWORKS } from '../../src/core/network.js';
import { TestClock } from '../support/clock.js';
import { bearer, createToken, request } from '../support/server.js';
import { startWalletWorld, walletDetails, wallets, type WalletWorld } from './wallet-helpers.js';
import { startReceiver, verifySignature, type Receiver } from './webhook-helpers.js';

const external = new DescriptorDeriver(parseDescriptor(wallets.w_tr!.recv_descriptor, NETWORKS.regtest)).derive(90).address;

let world: WalletWorld | undefined;
let receiver: Receiver | undefined;
afterEach(async () => {
  await world?.close();
  await receiver?.close();
  world = undefined;
  receiver = undefined;
});

async function setUp(clock: TestClock, env: Record<string, string> = { SERVICE_WEBHOOK_ALLOW_PRIVATE: 'True' }): Promise<WalletWorld> {
  const w = await startWalletWorld({ snapshot: 7 }, { now: clock.now, env });
  const imported = await request(`${w.server.api}/wallets`, {
    method: 'POST',
    headers: w.auth,
    json: { name: 'Hot', alias: 'w_wpkh', recv_descriptor: wallets.w_wpkh!.recv_descriptor, change_descriptor: wallets.w_wpkh!.change_descriptor, birthday: 0 },
  });
  expect(imported.status, imported.text).toBe(201);
  expect((await w.server.running.runtime.services.sync.runOnce()).ran).toBe(true);
  return w;
}

const services = () => world!.server.running.runtime.services;
const deliverRound = () => services().webhookDeliverer.runOnce();

async function register(json: unknown): Promise<any> {
  const created = await request(`${world!.server.api}/webhooks`, { method: 'POST', headers: world!.auth, json });
  expect(created.status, created.text).toBe(201);
  return created.body;
}

async function createPsbt(coin: { txid: string; vout: number }): Promise<string> {
  const created = await request(`${world!.server.api}/wallets/w_wpkh/psbt`, { method: 'POST', headers: world!.auth, json: { recipients: [{ address: external, amount: '0.01' }], fee_rate: 2, inputs: [coin] } });
  expect(created.status, created.text).toBe(201);
  return created.body.result.tx.txid as string;
}

const deletePsbt = (txid: string) => request(`${world!.server.api}/wallets/w_wpkh/psbt/${txid}`, { method: 'DELETE', headers: world!.auth });
const deliveriesOf = async (id: string) => (await request(`${world!.server.api}/webhooks/${id}/deliveries`, { headers: world!.auth })).body.deliveries;

describe('webhooks', () => {
  it('deliver signed events in order, retry after the receiver fails, keep a log and redeliver on request', async () => {
    const clock = new TestClock();
    world = await setUp(clock);
    receiver = await startReceiver();
    receiver.answer = (n) => (n < 2 ? 500 : 204);
    const hook = await register({ url: receiver.url, events: ['psbt.created', 'psbt.deleted', 'psbt.signed'], wallets: ['w_wpkh'] });
    expect(hook).toMatchObject({ url: receiver.url, events: ['psbt.created', 'psbt.deleted', 'psbt.signed'], wallets: ['w_wpkh'] });
    expect(hook.secret).toMatch(/^whsec_/);
    // The secret is shown once.
    const read = await request(`${world.server.api}/webhooks/${hook.id}`, { headers: world.auth });
    expect(read.status).toBe(200);
    expect(read.body).not.toHaveProperty('secret');

    const coins = (await walletDetails(world, 'w_wpkh')).utxo;
    const first = await createPsbt(coins[0]);
    const second = await createPsbt(coins[1]);
    expect((await deletePsbt(first)).status).toBe(200);

    await deliverRound();
    expect(receiver.deliveries).toHaveLength(1); // the first failed; the others of the wallet wait behind it
    let log = await deliveriesOf(hook.id);
    expect(log.find((d: any) => d.status === 'pending' && d.attempts === 1)).toMatchObject({ response_code: 500, event_type: 'psbt.created', wallet: 'w_wpkh' });

    await deliverRound();
    expect(receiver.deliveries).toHaveLength(1); // not due before its delay
    clock.advance(10_000);
    await deliverRound();
    expect(receiver.deliveries).toHaveLength(2);
    clock.advance(60_000);
    await deliverRound();
    expect(receiver.deliveries).toHaveLength(5);

    const bodies = receiver.deliveries.map((d) => d.body);
    expect(bodies.map((b) => [b.type, b.data.txid])).toEqual([
      ['psbt.created', first],
      ['psbt.created', first],
      ['psbt.created', first],
      ['psbt.created', second],
      ['psbt.deleted', first],
    ]);
    expect(new Set(bodies.slice(0, 3).map((b) => b.id)).size).toBe(1);
    expect(bodies[3].seq).toBeGreaterThan(bodies[0].seq);
    expect(bodies[4].seq).toBeGreaterThan(bodies[3].seq);
    expect(bodies[0]).toMatchObject({ wallet: 'w_wpkh', data: { sigs_count: 0, sigs_required: 1, created_by: 'admin', address: [external] } });
    for (const d of receiver.deliveries) {
      expect(verifySignature(hook.secret, d.headers, d.raw, clock.now() / 1000)).toBe(true);
      expect(d.headers['x-wcs-event-id']).toBe(d.body.id);
      expect(d.headers['x-wcs-event-type']).toBe(d.body.type);
      expect(verifySignature('whsec_another', d.headers, d.raw, clock.now() / 1000)).toBe(false);
      expect(verifySignature(hook.secret, d.headers, d.raw.replace('w_wpkh', 'w_wpkx'), clock.now() / 1000)).toBe(false);
    }

    log = await deliveriesOf(hook.id);
    expect(log.map((d: any) => d.status)).toEqual(['delivered', 'delivered', 'delivered']);
    const retried = log.find((d: any) => d.event_id === bodies[0].id);
    expect(retried).toMatchObject({ attempts: 3, response_code: 204, error: null, next_attempt_at: null });

    const again = await request(`${world.server.api}/webhooks/${hook.id}/deliveries/${retried.id}/redeliver`, { method: 'POST', headers: world.auth });
    expect(again.status, again.text).toBe(202);
    expect(again.body).toMatchObject({ status: 'pending', attempts: 0, event_id: bodies[0].id });
    await deliverRound();
    expect(receiver.deliveries).toHaveLength(6);
    expect(receiver.deliveries[5]!.body.id).toBe(bodies[0].id);
    expect(receiver.deliveries[5]!.headers['x-wcs-delivery-id']).toBe(again.body.id);
    expect((await request(`${world.server.api}/webhooks/${hook.id}/deliveries/nope/redeliver`, { method: 'POST', headers: world.auth })).status).toBe(404);
  }, 60_000);

  it('gives up after the last retry, more than a day after the first attempt, and the next events follow', async () => {
    const clock = new TestClock();
    world = await setUp(clock);
    receiver = await startReceiver();
    receiver.answer = () => 503;
    // The clock runs past a day: a token that outlives it.
    world.auth.authorization = bearer((await createToken(world.server, 'admin', world.server.adminPassword, 'long', '30 days')).jwt_token);
    const hook = await register({ url: receiver.url, events: ['psbt.created'], wallets: ['w_wpkh'] });
    const coins = (await walletDetails(world, 'w_wpkh')).utxo;
    const first = await createPsbt(coins[0]);
    const start = clock.now();
    await deliverRound();
    let attempts = 1;
    for (let i = 0; i < 60 && (await deliveriesOf(hook.id))[0].status === 'pending'; i++) {
      clock.advance(60 * 60_000);
      await deliverRound();
      attempts = receiver.deliveries.length;
    }
    const [given] = await deliveriesOf(hook.id);
    expect(given).toMatchObject({ status: 'failed', response_code: 503, attempts: 9 });
    expect(attempts).toBe(9);
    expect(clock.now() - start).toBeGreaterThan(24 * 3600_000);
    receiver.answer = () => 200;
    const second = await createPsbt(coins[1]);
    await deliverRound();
    expect(receiver.deliveries.map((d) => d.body.data.txid)).toEqual([...Array(9).fill(first), second]);
  }, 60_000);

  it('deliver nothing of a change that rolled back', async () => {
    const clock = new TestClock();
    world = await setUp(clock);
    receiver = await startReceiver();
    const hook = await register({ url: receiver.url, events: ['psbt.created', 'psbt.deleted'], wallets: ['w_wpkh'] });
    const coins = (await walletDetails(world, 'w_wpkh')).utxo;
    const txid = await createPsbt(coins[0]);

    // The store fails the next transaction after its work is done: the deletion and its event roll back together.
    const store = world.server.running.runtime.store;
    const transaction = store.transaction.bind(store);
    let failNext = true;
    store.transaction = (work) =>
      transaction(async (repos) => {
        const result = await work(repos);
        if (failNext) {
          failNext = false;
          throw new Error('injected failure');
        }
        return result;
      });
    const failed = await deletePsbt(txid);
    expect(failed.status).toBe(500);
    expect((await request(`${world.server.api}/wallets/w_wpkh/psbt/${txid}`, { headers: world.auth })).status).toBe(200);
    await deliverRound();
    expect(receiver.deliveries.map((d) => d.body.type)).toEqual(['psbt.created']);

    expect((await deletePsbt(txid)).status).toBe(200);
    await deliverRound();
    expect(receiver.deliveries.map((d) => d.body.type)).toEqual(['psbt.created', 'psbt.deleted']);
    expect((await deliveriesOf(hook.id)).every((d: any) => d.status === 'delivered')).toBe(true);
  }, 60_000);

  it('refuse link-local and metadata addresses always, loopback unless allowed, also for names resolved at delivery', async () => {
    const clock = new TestClock();
    world = await setUp(clock, {});
    receiver = await startReceiver();
    for (const url of ['http://169.254.169.254/latest/meta-data', 'http://[fe80::1]/', 'http://0.0.0.0/', 'http://224.0.0.1/', `http://127.0.0.1:${receiver.port}/`, 'http://[::ffff:127.0.0.1]/', 'http://10.1.2.3/',
      // IPv6 addresses carrying a loopback or metadata IPv4 address, and deprecated private ranges
      `http://[::7f00:1]:${receiver.port}/`, `http://[64:ff9b::7f00:1]:${receiver.port}/`, 'http://[2002:7f00:1::]/', 'http://[fec0::1]/', 'http://[64:ff9b::a9fe:a9fe]/', 'http://[2002:a9fe:a9fe::]/', 'http://[::ffff:0:7f00:1]/']) {
      const refused = await request(`${world.server.api}/webhooks`, { method: 'POST', headers: world.auth, json: { url, events: ['psbt.created'], wallets: ['w_wpkh'] } });
      expect(refused.status, url).toBe(422);
      expect(refused.body.code).toBe('webhook_address_refused');
    }
    // A name is checked on the address it resolves to when delivering.
    const hook = await register({ url: `http://localhost:${receiver.port}/hook`, events: ['psbt.created'], wallets: ['w_wpkh'] });
    await createPsbt((await walletDetails(world, 'w_wpkh')).utxo[0]);
    await deliverRound();
    expect(receiver.deliveries).toHaveLength(0);
    const [delivery] = await deliveriesOf(hook.id);
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1, response_code: null });
    expect(delivery.error).toMatch(/refused: localhost resolves to a loopback or private address/);
  }, 60_000);

  it('validate registrations and changes, and keep each user\'s webhooks to itself', async () => {
    const clock = new TestClock();
    world = await setUp(clock);
    const api = `${world.server.api}/webhooks`;
    const post = (json: unknown) => request(api, { method: 'POST', headers: world!.auth, json });
    const good = { url: 'http://127.0.0.1:9/hook', events: ['psbt.created'], wallets: ['w_wpkh'] };
    for (const [json, status, path] of [
      [{ ...good, url: 'ftp://example.org/' }, 400, '/url'],
      [{ ...good, url: 'http://user:pw@example.org/' }, 400, '/url'],
      [{ ...good, url: 'not a url' }, 400, '/url'],
      [{ ...good, events: [] }, 400, '/events'],
      [{ ...good, events: ['psbt.created', 'psbt.eaten'] }, 400, '/events/1'],
      [{ ...good, wallets: [] }, 400, '/wallets'],
    ] as const) {
      const refused = await post(json);
      expect(refused.status, JSON.stringify(json)).toBe(status);
      expect(refused.body.errors[0].path).toBe(path);
    }
    const unknownWallet = await post({ ...good, wallets: ['nope'] });
    expect(unknownWallet.status).toBe(404);
    expect(unknownWallet.body.code).toBe('wallet_not_found');
    expect((await request(api, { headers: world.auth })).body.webhooks).toEqual([]);

    const hook = (await post(good)).body;
    const patched = await request(`${api}/${hook.id}`, { method: 'PATCH', headers: world.auth, json: { events: ['psbt.ready', 'transaction.confirmed'] } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ id: hook.id, url: good.url, events: ['psbt.ready', 'transaction.confirmed'], wallets: ['w_wpkh'] });
    expect((await request(`${api}/${hook.id}`, { method: 'PATCH', headers: world.auth, json: { url: 'http://169.254.169.254/' } })).status).toBe(422);
    expect((await request(api, { headers: world.auth })).body.webhooks.map((w: any) => w.id)).toEqual([hook.id]);

    // Another user sees none of it.
    await world.server.running.runtime.services.users.addUser('bob', 'bob-password', { admin: false });
    const bobToken = (await request(`${world.server.api}/token`, { method: 'POST', headers: { authorization: `Basic ${Buffer.from('bob:bob-password').toString('base64')}` }, json: { jwt_token_description: 'bob', jwt_token_life: '1 days' } })).body.jwt_token;
    const bob = { authorization: `Bearer ${bobToken}` };
    expect((await request(`${api}/${hook.id}`, { headers: bob })).status).toBe(404);
    expect((await request(`${api}/${hook.id}`, { method: 'DELETE', headers: bob })).status).toBe(404);
    expect((await request(api, { headers: bob })).body.webhooks).toEqual([]);
    expect((await request(api, { method: 'POST', headers: bob, json: good })).status).toBe(404); // not bob's wallet

    expect((await request(`${api}/${hook.id}`, { method: 'DELETE', headers: world.auth })).status).toBe(200);
    expect((await request(`${api}/${hook.id}`, { headers: world.auth })).status).toBe(404);
  }, 60_000);
});

describe('webhook bodies', () => {
  for (const database of ['sqlite', 'postgres'] as const) {
    it(`are the same bytes on every attempt and redelivery, amounts as recorded (${database})`, async () => {
      const clock = new TestClock();
      world = await startWalletWorld({ snapshot: 7 }, { now: clock.now, database, env: { SERVICE_WEBHOOK_ALLOW_PRIVATE: 'True' } });
      const imported = await request(`${world.server.api}/wallets`, {
        method: 'POST',
        headers: world.auth,
        json: { name: 'Hot', alias: 'w_wpkh', recv_descriptor: wallets.w_wpkh!.recv_descriptor, change_descriptor: wallets.w_wpkh!.change_descriptor, birthday: 0 },
      });
      expect(imported.status, imported.text).toBe(201);
      expect((await services().sync.runOnce()).ran).toBe(true);
      receiver = await startReceiver();
      receiver.answer = (n) => (n === 0 ? 500 : 200);
      const hook = await register({ url: receiver.url, events: ['psbt.created'], wallets: ['w_wpkh'] });
      const txid = await createPsbt((await walletDetails(world, 'w_wpkh')).utxo[0]);
      const record = (await request(`${world.server.api}/wallets/w_wpkh/psbt/${txid}`, { headers: world.auth })).body.result;
      await deliverRound();
      clock.advance(10_000);
      await deliverRound();
      const [delivered] = await deliveriesOf(hook.id);
      expect((await request(`${world.server.api}/webhooks/${hook.id}/deliveries/${delivered.id}/redeliver`, { method: 'POST', headers: world.auth })).status).toBe(202);
      await deliverRound();
      expect(receiver.deliveries).toHaveLength(3);
      const [first, retried, redelivered] = receiver.deliveries.map((d) => d.raw);
      expect(retried).toBe(first);
      expect(redelivered).toBe(first);
      expect(receiver.deliveries[0]!.body.data.fee).toBe(record.fee);
      expect(first).toContain(`"fee":${JSON.stringify(record.fee)}`);
    }, 60_000);
  }
});
