/**
 * Two real `wcs serve` processes on one PostgreSQL database, each with its own connection pool: callers of
 * `POST /wallets/{alias}/addresses/next` spread over both never get the same address, nor the one the wallet
 * details show.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSharedStore, killStartedInstances, startInstance, stopInstance, type Instance, type SharedStore } from '../support/instances.js';
import { TEST_ADMIN_PASSWORD, basicAuth, bearer, request } from '../support/server.js';
import { wallets } from './wallet-helpers.js';

let store: SharedStore;
let a: Instance;
let b: Instance;

beforeAll(async () => {
  store = await createSharedStore('postgres');
  // No chain backend: revealing needs none.
  [a, b] = await Promise.all([startInstance(store, 'reveal-a', { SERVICE_NETWORK: 'regtest' }), startInstance(store, 'reveal-b', { SERVICE_NETWORK: 'regtest' })]);
}, 60_000);

afterAll(async () => {
  await Promise.all([a && stopInstance(a), b && stopInstance(b)]);
  await store?.dispose();
});
afterAll(() => killStartedInstances());

describe('revealing addresses on two instances of one PostgreSQL database', () => {
  it('hands out distinct consecutive indexes to concurrent callers of both instances, never past the gap limit', async () => {
    const token = await request(`${a.api}/token`, {
      method: 'POST',
      headers: { authorization: basicAuth('admin', TEST_ADMIN_PASSWORD) },
      json: { jwt_token_description: 'reveal', jwt_token_life: '1 hours' },
    });
    expect(token.status, token.text).toBe(201);
    const auth = { authorization: bearer(token.body.jwt_token) };
    const w = wallets.w_wpkh!;
    const created = await request(`${a.api}/wallets`, {
      method: 'POST',
      headers: auth,
      json: { name: 'Shop', alias: 'shop', recv_descriptor: w.recv_descriptor, change_descriptor: w.change_descriptor, birthday: 0 },
    });
    expect(created.status, created.text).toBe(201);

    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, i) => request(`${(i % 2 === 0 ? a : b).api}/wallets/shop/addresses/next`, { method: 'POST', headers: auth })),
    );
    // Nothing used yet and a gap limit of 20: index 0 is the one the details show, 1..19 go out once each;
    // the eleven other callers are refused.
    const answers = responses.filter((r) => r.status === 200).map((r) => r.body as { address: string; index: number });
    expect(answers.map((x) => x.index).sort((x, y) => x - y)).toEqual(Array.from({ length: 19 }, (_, i) => i + 1));
    const refused = responses.filter((r) => r.status !== 200);
    expect(refused).toHaveLength(11);
    for (const r of refused) expect({ status: r.status, code: r.body.code }).toEqual({ status: 409, code: 'gap_limit_reached' });
    const derived = await request(`${b.api}/wallets/shop/addresses?branch=receive&from=0&count=30`, { headers: auth });
    expect(derived.status).toBe(200);
    for (const answer of answers) expect(answer.address).toBe(derived.body.addresses[answer.index].address);
    for (const instance of [a, b]) {
      const details = await request(`${instance.api}/wallets/shop`, { headers: auth });
      expect({ address: details.body.address, index: details.body.address_index }).toEqual({ address: derived.body.addresses[0].address, index: 0 });
    }
  });
});
