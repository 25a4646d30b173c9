/**
 * Leases on following wallets (PostgreSQL): two stores on one schema stand for two instances. Claims made at the
 * same moment never give one wallet to both; a lease is taken over only once expired; a write fenced by a lease
 * its instance lost fails and writes nothing; a takeover waits for the write in flight.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { openPostgresStore } from '../../src/store/postgres.js';
import { FollowLeaseLostError, type Store } from '../../src/store/repositories.js';
import { TEST_DATABASE_URL, dropPostgresSchema, uniqueSchemaName } from '../support/stores.js';

const WALLETS = 120;
const schema = uniqueSchemaName();
let a: Store;
let b: Store;
const walletIds: string[] = [];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  a = await openPostgresStore({ url: TEST_DATABASE_URL, schema, maxConnections: 4 });
  b = await openPostgresStore({ url: TEST_DATABASE_URL, schema, maxConnections: 4 });
  await a.users.insert({ name: 'admin', passwordHash: 'x', isAdmin: true, createdAt: 0 });
  for (let i = 0; i < WALLETS; i++) {
    const id = randomUUID();
    walletIds.push(id);
    await a.wallets.insert(
      {
        id, alias: `lease-${i}`, name: `Lease ${i}`, description: '', ownerName: 'admin', network: 'regtest',
        receiveDescriptor: 'addr(x)', changeDescriptor: 'addr(y)', addressType: 'bech32',
        sigsRequired: 1, sigsTotal: 1, keys: [], gapLimit: 20, birthday: 1, createdAt: i, revision: 0, tip: null,
      },
      [],
    );
  }
});

afterAll(async () => {
  await a?.close();
  await b?.close();
  await dropPostgresSchema(schema);
});

async function holders(): Promise<Map<string, string>> {
  const held = new Map<string, string>();
  for (const instance of ['one', 'two']) for (const id of (await a.followLeases.heartbeat(instance, 60_000)).held) held.set(id, instance);
  return held;
}

describe('wallet follow leases on PostgreSQL', () => {
  it('two instances claiming every wallet at once share them: none held by both, none left out', async () => {
    for (let round = 0; round < 5; round++) {
      const [one, two] = await Promise.all([a.followLeases.claim('one', WALLETS, 60_000), b.followLeases.claim('two', WALLETS, 60_000)]);
      expect(one.filter((id) => two.includes(id))).toEqual([]);
      expect(new Set([...one, ...two])).toEqual(new Set(walletIds));
      await Promise.all([a.followLeases.release('one'), b.followLeases.release('two')]);
    }
  });

  it('expired leases are taken over by one claimer only, live ones by none', async () => {
    // 'gone' holds every wallet for 150 ms, then stops renewing (an instance killed).
    expect((await a.followLeases.claim('gone', WALLETS, 150)).length).toBe(WALLETS);
    expect(await b.followLeases.claim('two', WALLETS, 60_000)).toEqual([]);
    await sleep(300);
    const [one, two] = await Promise.all([a.followLeases.claim('one', WALLETS, 60_000), b.followLeases.claim('two', WALLETS, 60_000)]);
    expect(one.filter((id) => two.includes(id))).toEqual([]);
    expect(new Set([...one, ...two])).toEqual(new Set(walletIds));
    // The silent instance renews nothing: its leases name another instance now.
    expect((await a.followLeases.heartbeat('gone', 60_000)).held).toEqual([]);
    const held = await holders();
    expect(held.size).toBe(WALLETS);
    await Promise.all([a.followLeases.release('one'), b.followLeases.release('two'), a.followLeases.release('gone')]);
  });

  it('counts the live instances and forgets an instance released on a clean stop', async () => {
    await a.followLeases.heartbeat('one', 60_000);
    expect((await b.followLeases.heartbeat('two', 60_000)).liveInstances).toBe(2);
    await a.followLeases.release('one');
    const state = await b.followLeases.heartbeat('two', 60_000);
    expect(state).toMatchObject({ liveInstances: 1, wallets: WALLETS });
    await b.followLeases.release('two');
  });

  it('a write fenced by a lost lease fails and writes nothing', async () => {
    const [wallet] = await a.followLeases.claim('one', 1, 150);
    await sleep(300);
    expect(await b.followLeases.claim('two', 1, 60_000)).toEqual([wallet]);
    const write = a.transaction(async (repos) => {
      await repos.followLeases.fence('one', [wallet!]);
      await repos.settings.set('written-by-one', 'yes', 0);
    });
    await expect(write).rejects.toBeInstanceOf(FollowLeaseLostError);
    expect(await a.settings.get('written-by-one')).toBeUndefined();
    // The holder writes.
    await b.transaction((repos) => repos.followLeases.fence('two', [wallet!]));
    await b.followLeases.release('two');
  });

  it('a takeover waits for the write in flight of the lease it takes', async () => {
    const [wallet] = await a.followLeases.claim('one', 1, 300);
    const order: string[] = [];
    let fenced!: () => void;
    const inside = new Promise<void>((resolve) => (fenced = resolve));
    const write = a.transaction(async (repos) => {
      await repos.followLeases.fence('one', [wallet!]);
      fenced();
      await sleep(600); // the lease expires while the write is in flight
      order.push('write committed');
    });
    await inside;
    await sleep(400);
    const takeover = b.followLeases.claim('two', 1, 60_000).then((ids) => {
      order.push('taken over');
      return ids;
    });
    await write;
    expect(await takeover).toEqual([wallet]);
    expect(order).toEqual(['write committed', 'taken over']);
    await b.followLeases.release('two');
  });
});
