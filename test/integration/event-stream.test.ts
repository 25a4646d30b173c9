/** The live stream (`GET /events`, server-sent events) over real HTTP: order, resuming with Last-Event-ID, wallet limits. */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DescriptorDeriver, parseDescriptor } from '../../src/core/descriptor/index.js';
import { NETWORKS } from '../../src/core/network.js';
import { TEST_ADMIN_PASSWORD, basicAuth, bearer, createToken, request, startTestServer, type TestServer } from '../support/server.js';
import { importFixtureWallets, startWalletWorld, walletDetails, wallets, type WalletWorld } from './wallet-helpers.js';
import { readStream } from './webhook-helpers.js';

const external = new DescriptorDeriver(parseDescriptor(wallets.w_tr!.recv_descriptor, NETWORKS.regtest)).derive(90).address;
let world: WalletWorld;

beforeAll(async () => {
  world = await startWalletWorld({ snapshot: 7 });
  await importFixtureWallets(world, ['w_wpkh', 'w_tr']);
  await world.server.running.runtime.services.sync.runOnce();
}, 60_000);
afterAll(async () => {
  await world?.close();
});

async function createPsbt(coin: { txid: string; vout: number }): Promise<string> {
  const created = await request(`${world.server.api}/wallets/w_wpkh/psbt`, { method: 'POST', headers: world.auth, json: { recipients: [{ address: external, amount: '0.01' }], fee_rate: 2, inputs: [coin] } });
  expect(created.status, created.text).toBe(201);
  return created.body.result.tx.txid as string;
}

describe('the event stream', () => {
  it('sends new events as they happen, and the missed ones, in order, after Last-Event-ID', async () => {
    const url = `${world.server.api}/events`;
    const coins = (await walletDetails(world, 'w_wpkh')).utxo;
    let first = '';
    const live = await readStream(url, world.auth, 1, async () => {
      first = await createPsbt(coins[0]);
    });
    expect(live.status).toBe(200);
    expect(live.messages).toHaveLength(1);
    expect(live.messages[0]).toMatchObject({ event: 'psbt.created', data: { type: 'psbt.created', wallet: 'w_wpkh', data: { txid: first } } });
    expect(live.messages[0]!.id).toBe(String(live.messages[0]!.data.seq));

    // While nobody listens: another PSBT, and the first deleted.
    const second = await createPsbt(coins[1]);
    expect((await request(`${world.server.api}/wallets/w_wpkh/psbt/${first}`, { method: 'DELETE', headers: world.auth })).status).toBe(200);
    const resumed = await readStream(url, { ...world.auth, 'last-event-id': live.messages[0]!.id }, 2);
    expect(resumed.messages.map((m) => [m.event, m.data.data.txid])).toEqual([
      ['psbt.created', second],
      ['psbt.deleted', first],
    ]);
    expect(Number(resumed.messages[1]!.id)).toBeGreaterThan(Number(resumed.messages[0]!.id));

    const bad = await request(url, { headers: { ...world.auth, 'last-event-id': 'yesterday' } });
    expect(bad.status).toBe(400);
  }, 60_000);

  it('sends a token limited to one wallet only that wallet\'s events', async () => {
    const store = world.server.running.runtime.store;
    const tr = await store.wallets.findByAlias('w_tr');
    const trEvents = await store.events.listAfter(0, [tr!.id], 1000);
    expect(trEvents.length).toBeGreaterThan(0);
    const created = await request(`${world.server.api}/token`, { method: 'POST', headers: { authorization: basicAuth('admin', world.server.adminPassword) }, json: { jwt_token_description: 'tr only', jwt_token_life: 600, wallets: ['w_tr'] } });
    // From the first event on: the whole history of the outbox, filtered to w_tr.
    const stream = await readStream(`${world.server.api}/events`, { authorization: bearer(created.body.jwt_token), 'last-event-id': '0' }, trEvents.length);
    expect(stream.messages.map((m) => m.data.id)).toEqual(trEvents.map((e) => e.id));
    expect(new Set(stream.messages.map((m) => m.data.wallet))).toEqual(new Set(['w_tr']));
    expect(new Set(stream.messages.map((m) => m.event))).toContain('transaction.received');
  }, 60_000);

  it('ends when its token is deleted, and refuses a token without wallets:read', async () => {
    const admin = { authorization: basicAuth('admin', world.server.adminPassword) };
    const created = await request(`${world.server.api}/token`, { method: 'POST', headers: admin, json: { jwt_token_description: 'short-lived stream', jwt_token_life: 600 } });
    const stream = await readStream(`${world.server.api}/events`, { authorization: bearer(created.body.jwt_token) }, 1, async () => {
      expect((await request(`${world.server.api}/token/${created.body.jwt_token_id}`, { method: 'DELETE', headers: admin })).status).toBe(200);
    });
    expect(stream).toEqual({ status: 200, messages: [] }); // the server closed it

    // The stream carries the security headers every answer has.
    const controller = new AbortController();
    const open = await fetch(`${world.server.api}/events`, { headers: world.auth, signal: controller.signal });
    expect(open.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(open.headers.get('x-content-type-options')).toBe('nosniff');
    controller.abort();

    const narrow = await request(`${world.server.api}/token`, { method: 'POST', headers: admin, json: { jwt_token_description: 'no read', jwt_token_life: 600, permissions: ['psbt:sign'] } });
    const refused = await request(`${world.server.api}/events`, { headers: { authorization: bearer(narrow.body.jwt_token) } });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'permission_missing', permission: 'wallets:read' });
  }, 60_000);
});

/** Opens a stream; its status, and a function that closes it from the client's side. */
async function openStream(server: TestServer, authorization: string): Promise<{ status: number; body: unknown; retryAfter: string | null; close(): void }> {
  const controller = new AbortController();
  const response = await fetch(`${server.api}/events`, { headers: { authorization }, signal: controller.signal });
  const body = response.status === 200 ? undefined : await response.json();
  return { status: response.status, body, retryAfter: response.headers.get('retry-after'), close: () => controller.abort() };
}

describe('event streams per user', () => {
  let server: TestServer;
  let admin: string;
  let bob: string;
  beforeAll(async () => {
    server = await startTestServer({ env: { SERVICE_USER_EVENT_STREAMS: '2', SERVICE_USER_REQUESTS_IN_FLIGHT: '1' } });
    await server.running.runtime.services.users.addUser('bob', 'bob-password-1', { admin: false });
    admin = bearer((await createToken(server, 'admin', TEST_ADMIN_PASSWORD, 'streams')).jwt_token);
    bob = bearer((await createToken(server, 'bob', 'bob-password-1', 'streams')).jwt_token);
  });
  afterAll(() => server.dispose());

  it('refuses one stream more than user_event_streams with 429 too_many_requests, to that user only, until one closes', async () => {
    const open = [await openStream(server, admin), await openStream(server, admin)];
    expect(open.map((s) => s.status)).toEqual([200, 200]);
    const third = await openStream(server, admin);
    expect(third.status).toBe(429);
    expect(third.body).toEqual({ message: 'A user may hold at most 2 event streams open at once; close one first', code: 'too_many_requests' });
    expect(Number(third.retryAfter)).toBeGreaterThan(0);
    // Streams hold no request slot: with one slot per user, ordinary requests still pass.
    expect((await request(`${server.api}/wallets`, { headers: { authorization: admin } })).status).toBe(200);
    const bobs = await openStream(server, bob);
    expect(bobs.status).toBe(200);
    // Closing one makes room (once the server has seen the client leave).
    open[0]!.close();
    let again = await openStream(server, admin);
    for (let tries = 0; again.status === 429 && tries < 100; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      again = await openStream(server, admin);
    }
    expect(again.status).toBe(200);
    for (const stream of [open[1]!, again, bobs]) stream.close();
  });

  it('does not read the store per stream: many open streams share one look for new events', async () => {
    const many = await startTestServer({ env: { SERVICE_USER_EVENT_STREAMS: '20' } });
    try {
      const auth = bearer((await createToken(many, 'admin', TEST_ADMIN_PASSWORD, 'many')).jwt_token);
      const streams = await Promise.all(Array.from({ length: 20 }, () => openStream(many, auth)));
      expect(streams.map((s) => s.status)).toEqual(Array(20).fill(200));
      const { events, tokens } = many.running.runtime.store;
      const reads = [vi.spyOn(events, 'lastSeq'), vi.spyOn(events, 'listAfter'), vi.spyOn(tokens, 'findWithUser')];
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const count = reads.reduce((sum, spy) => sum + spy.mock.calls.length, 0);
      for (const spy of reads) spy.mockRestore();
      for (const stream of streams) stream.close();
      // One look every half second for all of them (a stream's own checks come every few seconds): not 20 times that.
      expect(count).toBeLessThan(20);
    } finally {
      await many.dispose();
    }
  });
});
