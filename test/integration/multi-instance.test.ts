/**
 * Two real `wcs serve` processes on one PostgreSQL database (SERVICE_DATABASE_URL), driven over
 * HTTP: either answers any request. Tokens, revocations and failed-login counters live in the
 * database, so what one instance did is seen by the other on the next request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRpcTestServer, type RpcTestServer } from '../support/rpc-server.js';
import { NETWORKS } from '../../src/core/network.js';
import { DescriptorDeriver, parseDescriptor } from '../../src/core/descriptor/index.js';
import { WALLET_IDS, expectWalletMatchesCore, nodeEnv, timeline, wallets } from './wallet-helpers.js';
import { TEST_ADMIN_PASSWORD, basicAuth, bearer, request } from '../support/server.js';
import { createSharedStore, killHard, killStartedInstances, postgresClient, startInstance, stopInstance, type Instance, type SharedStore } from '../support/instances.js';

const RATE_LIMIT = 4;
let store: SharedStore;
let a: Instance;
let b: Instance;

beforeAll(async () => {
  store = await createSharedStore('postgres');
  // Both start at once on an empty database: migrations and the admin bootstrap race.
  [a, b] = await Promise.all([
    startInstance(store, 'a', { SERVICE_RATE_LIMIT: String(RATE_LIMIT) }),
    startInstance(store, 'b', { SERVICE_RATE_LIMIT: String(RATE_LIMIT) }),
  ]);
});

afterAll(async () => {
  await Promise.all([a && stopInstance(a), b && stopInstance(b)]);
  await store?.dispose();
});

// After a timeout the cases' own cleanup may not have run: no server outlives the file.
afterAll(() => killStartedInstances());

const admin = () => basicAuth('admin', TEST_ADMIN_PASSWORD);

async function createTokenOn(instance: Instance, description: string): Promise<{ jwt_token: string; jwt_token_id: string }> {
  const response = await request(`${instance.api}/token`, {
    method: 'POST',
    headers: { authorization: admin() },
    json: { jwt_token_description: description, jwt_token_life: '1 hours' },
  });
  expect(response.status, response.text).toBe(201);
  return response.body;
}

describe('two instances on one PostgreSQL database', () => {
  it('both started on an empty database, and exactly one admin exists', async () => {
    for (const instance of [a, b]) {
      const tokens = await request(`${instance.api}/token`, { headers: { authorization: admin() } });
      expect(tokens.status).toBe(200);
    }
    const client = await postgresClient(store);
    try {
      expect((await client.query('select name, is_admin from users')).rows).toEqual([{ name: 'admin', is_admin: 1 }]);
      expect((await client.query('select count(*)::int as n from schema_version')).rows[0].n).toBeGreaterThan(0);
    } finally {
      await client.end();
    }
  });

  it('a token created on one instance works on the other, and both list it', async () => {
    const token = await createTokenOn(a, 'made on a');
    const onB = await request(`${b.api}/service`, { headers: { authorization: bearer(token.jwt_token) } });
    expect(onB.status).toBe(200);
    const listOnB = await request(`${b.api}/token`, { headers: { authorization: admin() } });
    expect(Object.keys(listOnB.body.jwt_tokens)).toContain(token.jwt_token_id);
    const readOnB = await request(`${b.api}/token/${token.jwt_token_id}`, { headers: { authorization: admin() } });
    expect(readOnB.body).toMatchObject({ message: 'Token exists', jwt_token_description: 'made on a', expiry_status: 'Valid' });
    // The description is unique per user across instances too.
    const duplicate = await request(`${b.api}/token`, { method: 'POST', headers: { authorization: admin() }, json: { jwt_token_description: 'made on a', jwt_token_life: '1 hours' } });
    expect(duplicate.status).toBe(409);
  });

  it('a token deleted on one instance is refused by the other on the very next request', async () => {
    const token = await createTokenOn(a, 'revoked on b');
    expect((await request(`${a.api}/liveness`, { headers: { authorization: bearer(token.jwt_token) } })).status).toBe(200);
    expect((await request(`${b.api}/liveness`, { headers: { authorization: bearer(token.jwt_token) } })).status).toBe(200);
    const deleted = await request(`${b.api}/token/${token.jwt_token_id}`, { method: 'DELETE', headers: { authorization: admin() } });
    expect(deleted.body).toEqual({ message: 'Token deleted' });
    const onA = await request(`${a.api}/liveness`, { headers: { authorization: bearer(token.jwt_token) } });
    expect(onA.status).toBe(401);
    expect(onA.headers.get('www-authenticate')).toBe('Bearer');
    expect((await request(`${b.api}/liveness`, { headers: { authorization: bearer(token.jwt_token) } })).status).toBe(401);
    expect((await request(`${a.api}/token/${token.jwt_token_id}`, { headers: { authorization: admin() } })).status).toBe(404);
  });

  it('keeps answering on the survivor when one instance is killed, and a restarted instance serves old tokens', async () => {
    const token = await createTokenOn(b, 'outlives b');
    await killHard(b);
    expect((await request(`${a.api}/service`, { headers: { authorization: bearer(token.jwt_token) } })).status).toBe(200);
    b = await startInstance(store, 'b', { SERVICE_RATE_LIMIT: String(RATE_LIMIT) });
    expect((await request(`${b.api}/service`, { headers: { authorization: bearer(token.jwt_token) } })).status).toBe(200);
  });

  it('counts failed logins across instances: the limit is reached by failures spread over both', async () => {
    // A user name of its own, so the per-user counter starts at zero (the address is shared by all tests).
    const user = `rl-${Date.now().toString(36)}`;
    const wrong = basicAuth(user, 'wrong password');
    const answers: number[] = [];
    for (let i = 0; i < RATE_LIMIT; i++) {
      const instance = i % 2 === 0 ? a : b;
      answers.push((await request(`${instance.api}/token`, { headers: { authorization: wrong } })).status);
    }
    // No single instance saw RATE_LIMIT failures, yet the next attempt for that name is refused on both.
    expect(answers).toEqual(Array(RATE_LIMIT).fill(401));
    for (const instance of [a, b]) {
      const limited = await request(`${instance.api}/token`, { headers: { authorization: wrong } });
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(limited.body.code).toBe('rate_limited');
    }
    // Another user from the same address is not locked out by them.
    expect((await request(`${b.api}/token`, { headers: { authorization: admin() } })).status).toBe(200);
  });

  it('lets 20 right-password token creations sent at once over both instances all succeed (they wait their turn)', async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        request(`${(i % 2 === 0 ? a : b).api}/token`, { method: 'POST', headers: { authorization: admin() }, json: { jwt_token_description: `together ${i}`, jwt_token_life: '1 hours' } }),
      ),
    );
    expect(answers.map((x) => x.status)).toEqual(Array(20).fill(201));
  });

  it('checks at most rate_limit of 40 wrong passwords sent at once over both instances', async () => {
    const wrong = { headers: { authorization: basicAuth('guess-target', 'wrong-password') } };
    const statuses = await Promise.all(Array.from({ length: 40 }, (_, i) => request(`${(i % 2 === 0 ? a : b).api}/token`, wrong).then((r) => r.status)));
    expect(statuses.filter((s) => s !== 401 && s !== 429)).toEqual([]);
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(RATE_LIMIT);
  });
});

/** Polls `check` until it returns true or `timeoutMs` passes; returns the time it took. */
async function within(timeoutMs: number, check: () => Promise<boolean>, what: string): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Chain sync leadership: each instance talks to its own test node (both replay the same regtest
 * timeline), so the node an instance calls shows whether that instance syncs. Mempool polling
 * (getrawmempool) happens only in a sync pass.
 */
describe('chain sync across two instances on one PostgreSQL database', () => {
  const SYNC_SECONDS = '0.3';
  let shared: SharedStore;
  let nodes: [RpcTestServer, RpcTestServer];
  let instances: [Instance, Instance];
  let auth: { authorization: string };

  beforeAll(async () => {
    shared = await createSharedStore('postgres');
    nodes = [await startRpcTestServer({ snapshot: 0 }), await startRpcTestServer({ snapshot: 0 })];
    instances = [
      await startInstance(shared, 'sync-a', { ...nodeEnv(nodes[0]), SERVICE_SYNC_INTERVAL: SYNC_SECONDS }),
      await startInstance(shared, 'sync-b', { ...nodeEnv(nodes[1]), SERVICE_SYNC_INTERVAL: SYNC_SECONDS }),
    ];
    const token = await createTokenOn(instances[0], 'sync');
    auth = { authorization: bearer(token.jwt_token) };
    for (const id of WALLET_IDS.slice(0, 3)) {
      const created = await request(`${instances[1].api}/wallets`, {
        method: 'POST',
        headers: auth,
        json: { name: `Fixture ${id}`, alias: id, recv_descriptor: wallets[id]!.recv_descriptor, change_descriptor: wallets[id]!.change_descriptor, birthday: 0 },
      });
      expect(created.status, created.text).toBe(201);
    }
  });

  afterAll(async () => {
    await Promise.all((instances ?? []).map((i) => stopInstance(i)));
    await Promise.all((nodes ?? []).map((n) => n.close()));
    await shared?.dispose();
  });

  /** True when every imported wallet, read through `instance`, equals Core's wallet at the snapshot. */
  async function matchesSnapshot(instance: Instance, index: number): Promise<boolean> {
    const snapshot = timeline.snapshots[index];
    const mempool = new Set<string>(snapshot.mempool.map((m: any) => m.txid));
    for (const id of WALLET_IDS.slice(0, 3)) {
      const details = await request(`${instance.api}/wallets/${id}`, { headers: auth });
      try {
        expectWalletMatchesCore(details.body, snapshot.expected[id], mempool);
      } catch {
        return false;
      }
    }
    return true;
  }

  const mempoolPolls = () => nodes.map((n) => n.count('getrawmempool'));

  it('exactly one instance syncs, and both answer with what it wrote', async () => {
    for (const node of nodes) node.setSnapshot(3);
    await within(20_000, async () => (await matchesSnapshot(instances[0], 3)) && (await matchesSnapshot(instances[1], 3)), 'both instances show snapshot 3');
    const before = mempoolPolls();
    await new Promise((resolve) => setTimeout(resolve, 1_500)); // several sync intervals
    const during = mempoolPolls().map((n, i) => n - (before[i] ?? 0));
    // One node is polled every interval, the other never.
    expect(during.filter((n) => n > 0)).toHaveLength(1);
    expect(Math.max(...during)).toBeGreaterThanOrEqual(2);
    expect(Math.min(...during)).toBe(0);
  });

  it('another instance takes the sync over within seconds when the syncing one is killed', async () => {
    const leader = nodes[0].count('getrawmempool') > nodes[1].count('getrawmempool') ? 0 : 1;
    const survivor = 1 - leader;
    const survivorPollsBefore = nodes[survivor]!.count('getrawmempool');
    await killHard(instances[leader]!);
    for (const node of nodes) node.setSnapshot(5);
    const takeoverMs = await within(10_000, async () => nodes[survivor]!.count('getrawmempool') > survivorPollsBefore, 'the survivor starts syncing');
    await within(20_000, () => matchesSnapshot(instances[survivor]!, 5), 'the survivor shows snapshot 5');
    expect(takeoverMs).toBeLessThan(10_000);
    // The restarted instance does not take the lock back while the survivor holds it.
    instances[leader] = await startInstance(shared, leader === 0 ? 'sync-a' : 'sync-b', { ...nodeEnv(nodes[leader]!), SERVICE_SYNC_INTERVAL: SYNC_SECONDS });
    const restartedBefore = nodes[leader]!.count('getrawmempool');
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(nodes[leader]!.count('getrawmempool')).toBe(restartedBefore);
    expect(await matchesSnapshot(instances[leader]!, 5)).toBe(true);
  });

  it('concurrent PSBT creations on both instances never reserve the same coin', async () => {
    const coins = timeline.snapshots[5].expected.w_wpkh.unspent.length;
    const recipient = new DescriptorDeriver(parseDescriptor(wallets.w_tr!.recv_descriptor, NETWORKS.regtest)).derive(61).address;
    const attempts = 2 * coins + 2;
    const answers = await Promise.all(
      Array.from({ length: attempts }, (_, i) =>
        request(`${instances[i % 2]!.api}/wallets/w_wpkh/psbt`, {
          method: 'POST',
          headers: auth,
          json: { recipients: [{ address: recipient, amount: '0.04', unit: 'btc' }], fee_rate: '2' },
        }),
      ),
    );
    const created = answers.filter((a) => a.status === 201);
    for (const refused of answers.filter((a) => a.status !== 201)) {
      expect(refused.status, refused.text).toBeGreaterThanOrEqual(400);
      expect(refused.status, refused.text).toBeLessThan(500);
    }
    // Every coin can fund one of these payments, so as many succeed as there are coins.
    expect(created.length).toBe(coins);
    const outpoints = created.flatMap((a) => a.body.result.tx.vin.map((v: { txid: string; vout: number }) => `${v.txid}:${v.vout}`));
    expect(new Set(outpoints).size).toBe(outpoints.length);
    // Both instances list the same PSBTs.
    const lists = await Promise.all(instances.map((i) => request(`${i.api}/wallets/w_wpkh/psbt`, { headers: auth })));
    const txids = created.map((a) => a.body.result.tx.txid).sort();
    for (const list of lists) expect(Object.keys(list.body.result).sort()).toEqual(txids);
  });
});
