/**
 * Webhooks with two real `wcs serve` processes on one PostgreSQL database: every event is delivered once,
 * by one of them, in order; deliveries survive kill -9 of both and resume when one starts again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DescriptorDeriver, parseDescriptor } from '../../src/core/descriptor/index.js';
import { NETWORKS } from '../../src/core/network.js';
import { startRpcTestServer, type RpcTestServer } from '../support/rpc-server.js';
import { TEST_ADMIN_PASSWORD, basicAuth, bearer, request } from '../support/server.js';
import { createSharedStore, killHard, killStartedInstances, postgresClient, startInstance, stopInstance, type Instance, type SharedStore } from '../support/instances.js';
import { nodeEnv, wallets } from './wallet-helpers.js';
import { startReceiver, verifySignature, type Receiver } from './webhook-helpers.js';

const external = new DescriptorDeriver(parseDescriptor(wallets.w_tr!.recv_descriptor, NETWORKS.regtest)).derive(90).address;

let store: SharedStore;
let node: RpcTestServer;
let receiver: Receiver;
let instances: Instance[] = [];
let auth: { authorization: string };
let hook: { id: string; secret: string };

const env = () => ({ ...nodeEnv(node), SERVICE_SYNC_INTERVAL: '0.2', SERVICE_WEBHOOK_ALLOW_PRIVATE: 'True' });

async function query<T = any>(text: string): Promise<T[]> {
  const client = await postgresClient(store);
  try {
    return (await client.query(text)).rows as T[];
  } finally {
    await client.end();
  }
}

/** Polls until every recorded event is turned into deliveries and none is pending. */
async function settled(): Promise<void> {
  for (;;) {
    const [state] = await query<{ cursor: string; last: string; pending: string }>(
      `select (select event_cursor from webhooks) as cursor, (select last_seq from event_sequence) as last, (select count(*) from webhook_deliveries where status = 'pending') as pending`,
    );
    if (state && state.cursor === state.last && Number(state.pending) === 0) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

function expectOncePerEvent(expectedIds: string[]): void {
  const ids = receiver.deliveries.map((d) => d.body.id);
  expect(new Set(ids).size, 'no event delivered twice').toBe(ids.length);
  expect([...ids].sort()).toEqual([...expectedIds].sort());
  const seqs = receiver.deliveries.map((d) => d.body.seq);
  expect(seqs, 'in order').toEqual([...seqs].sort((x, y) => x - y));
  for (const d of receiver.deliveries) expect(verifySignature(hook.secret, d.headers, d.raw, Date.now() / 1000)).toBe(true);
}

beforeAll(async () => {
  store = await createSharedStore('postgres');
  node = await startRpcTestServer({ snapshot: 0 });
  receiver = await startReceiver();
  instances = await Promise.all([startInstance(store, 'a', env()), startInstance(store, 'b', env())]);
  const token = await request(`${instances[0]!.api}/token`, { method: 'POST', headers: { authorization: basicAuth('admin', TEST_ADMIN_PASSWORD) }, json: { jwt_token_description: 'hooks', jwt_token_life: '1 hours' } });
  auth = { authorization: bearer(token.body.jwt_token) };
  const imported = await request(`${instances[0]!.api}/wallets`, {
    method: 'POST',
    headers: auth,
    json: { name: 'Hot', alias: 'w_wpkh', recv_descriptor: wallets.w_wpkh!.recv_descriptor, change_descriptor: wallets.w_wpkh!.change_descriptor, birthday: 0 },
  });
  expect(imported.status, imported.text).toBe(201);
  const created = await request(`${instances[1]!.api}/webhooks`, {
    method: 'POST',
    headers: auth,
    json: { url: receiver.url, events: ['transaction.received', 'transaction.sent', 'transaction.confirmed', 'psbt.created'], wallets: ['w_wpkh'] },
  });
  expect(created.status, created.text).toBe(201);
  hook = created.body;
}, 60_000);

afterAll(async () => {
  await Promise.all(instances.map((i) => stopInstance(i)));
  await receiver?.close();
  await node?.close();
  await store?.dispose();
});
afterAll(() => killStartedInstances());

describe('webhooks with two instances on one PostgreSQL database', () => {
  it('deliver each event of the sync and of PSBTs created on either instance exactly once, in order', async () => {
    node.setSnapshot(4);
    // Until the sync (on one of them) has written the confirmations the funding reaches at snapshot 4.
    while (!receiver.deliveries.some((d) => d.body.type === 'transaction.confirmed' && d.body.data.confirmations === 6)) await new Promise((r) => setTimeout(r, 100));
    await settled();
    const coins = (await request(`${instances[0]!.api}/wallets/w_wpkh`, { headers: auth })).body.utxo;
    expect(coins.length).toBeGreaterThanOrEqual(2);
    const made = await Promise.all(
      coins.slice(0, Math.min(4, coins.length - 1)).map((coin: any, i: number) =>
        request(`${instances[i % 2]!.api}/wallets/w_wpkh/psbt`, { method: 'POST', headers: auth, json: { recipients: [{ address: external, amount: '0.001' }], fee_rate: 2, inputs: [{ txid: coin.txid, vout: coin.vout }] } }),
      ),
    );
    for (const m of made) expect(m.status, m.text).toBe(201);
    await settled();
    const expected = await query<{ id: string }>(
      `select id from events where type in ('transaction.received', 'transaction.sent', 'transaction.confirmed', 'psbt.created') and seq > (select min(event_seq) - 1 from webhook_deliveries)`,
    );
    expect(receiver.deliveries.filter((d) => d.body.type === 'psbt.created')).toHaveLength(made.length);
    expect(receiver.deliveries.filter((d) => d.body.type === 'transaction.received').length).toBeGreaterThan(0);
    expectOncePerEvent(expected.map((e) => e.id));
  }, 90_000);

  it('resume deliveries after kill -9 of every instance', async () => {
    const port = receiver.port;
    await receiver.close();
    const before = receiver.deliveries.length;
    const coin = (await request(`${instances[0]!.api}/wallets/w_wpkh/utxo`, { headers: auth })).body.utxo.find((u: any) => u.reserved_by === null);
    const made = await request(`${instances[0]!.api}/wallets/w_wpkh/psbt`, { method: 'POST', headers: auth, json: { recipients: [{ address: external, amount: '0.001' }], fee_rate: 2, inputs: [{ txid: coin.txid, vout: coin.vout }] } });
    expect(made.status, made.text).toBe(201);
    // The receiver is down: the delivery fails and waits for its retry.
    while ((await query(`select 1 from webhook_deliveries where status = 'pending' and attempts > 0`)).length === 0) await new Promise((r) => setTimeout(r, 100));
    await Promise.all(instances.map((i) => killHard(i)));

    const previous = receiver.deliveries;
    receiver = await startReceiver(port);
    instances = [await startInstance(store, 'a', env())];
    await receiver.waitFor(1);
    await settled();
    expect(receiver.deliveries).toHaveLength(1);
    expect(receiver.deliveries[0]!.body).toMatchObject({ type: 'psbt.created', data: { txid: made.body.result.tx.txid } });
    expect(previous).toHaveLength(before);
    const [row] = await query<{ status: string; attempts: number }>(`select status, attempts from webhook_deliveries order by event_seq desc limit 1`);
    expect(row).toMatchObject({ status: 'delivered' });
    expect(Number(row!.attempts)).toBeGreaterThanOrEqual(2);
  }, 90_000);
});
