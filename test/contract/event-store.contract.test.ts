/** The event outbox, webhooks and deliveries behave alike on SQLite and PostgreSQL. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DeliveryRecord, NewEvent, Store, WebhookRecord } from '../../src/store/repositories.js';
import { STORE_KINDS, type OpenedStore } from '../support/stores.js';

const event = (n: number, walletId = 'w1'): NewEvent => ({
  id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  type: 'psbt.created',
  walletId,
  walletAlias: `alias-${walletId}`,
  occurredAt: 1_700_000_000_000 + n,
  data: { txid: 'ab'.repeat(32), amount: [0.1], n },
});

const webhook = (overrides: Partial<WebhookRecord> = {}): WebhookRecord => ({
  id: 'hook-1',
  userName: 'alice',
  url: 'https://example.org/hook',
  eventTypes: ['psbt.created'],
  walletIds: ['w1'],
  secret: 'whsec_test',
  createdAt: 1_700_000_000_000,
  updatedAt: 1_700_000_000_000,
  eventCursor: 0,
  ...overrides,
});

const delivery = (id: string, seq: number, walletId = 'w1', overrides: Partial<DeliveryRecord> = {}): DeliveryRecord => ({
  id,
  webhookId: 'hook-1',
  eventSeq: seq,
  walletId,
  status: 'pending',
  attempts: 0,
  nextAttemptAt: 1000,
  leaseUntil: null,
  responseCode: null,
  error: null,
  createdAt: 1000 + seq,
  updatedAt: 1000 + seq,
  ...overrides,
});

describe.each(STORE_KINDS)('event store conformance: $kind', ({ open }) => {
  let opened: OpenedStore;
  let store: Store;

  beforeEach(async () => {
    opened = await open();
    store = opened.store;
  });
  afterEach(async () => {
    await opened.dispose();
  });

  it('appends events with consecutive seqs and reads them back in order, by wallet and up to a seq', async () => {
    expect(await store.events.lastSeq()).toBe(0);
    const first = await store.events.append([event(1), event(2, 'w2')]);
    expect(first.map((e) => e.seq)).toEqual([1, 2]);
    const second = await store.transaction((repos) => repos.events.append([event(3)]));
    expect(second[0]!.seq).toBe(3);
    expect(await store.events.lastSeq()).toBe(3);
    expect(await store.events.listAfter(0, undefined, 10)).toEqual([...first, ...second]);
    expect((await store.events.listAfter(1, ['w1'], 10)).map((e) => e.seq)).toEqual([3]);
    expect((await store.events.listAfter(0, undefined, 10, 2)).map((e) => e.seq)).toEqual([1, 2]);
    expect(await store.events.listAfter(0, [], 10)).toEqual([]);
    expect(await store.events.find(2)).toEqual(first[1]);
  });

  it('appends thousands of events in one write (each wallet of a catch-up reaching the tip), all or none', async () => {
    const many = Array.from({ length: 5_000 }, (_, i) => event(i + 1, `w${i}`));
    const stored = await store.transaction((repos) => repos.events.append(many));
    expect(stored.map((e) => e.seq)).toEqual(many.map((_, i) => i + 1));
    expect(await store.events.lastSeq()).toBe(5_000);
    expect((await store.events.listAfter(4_998, undefined, 10)).map((e) => [e.seq, e.walletId])).toEqual([[4_999, 'w4998'], [5_000, 'w4999']]);
    // The last part fails (an id already stored): the parts before it are not kept either.
    const failing = [...Array.from({ length: 4_999 }, (_, i) => event(5_001 + i)), event(1)];
    await expect(store.transaction((repos) => repos.events.append(failing))).rejects.toThrow();
    expect(await store.events.lastSeq()).toBe(5_000);
    expect(await store.events.listAfter(5_000, undefined, 10)).toEqual([]);
  });

  it('keeps no event, and uses no seq, of a transaction that rolled back', async () => {
    await store.events.append([event(1)]);
    await expect(
      store.transaction(async (repos) => {
        await repos.events.append([event(2)]);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await store.events.lastSeq()).toBe(1);
    expect((await store.events.append([event(3)]))[0]!.seq).toBe(2);
    expect((await store.events.listAfter(0, undefined, 10)).map((e) => e.id)).toEqual([event(1).id, event(3).id]);
  });

  it('hands out distinct, gapless seqs to concurrent writers', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => store.transaction((repos) => repos.events.append([event(10 + 2 * i), event(11 + 2 * i)]))));
    const seqs = results.flat().map((e) => e.seq).sort((a, b) => a - b);
    expect(seqs).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
    for (const pair of results) expect(pair[1]!.seq).toBe(pair[0]!.seq + 1);
  });

  it('stores, lists, changes and deletes webhooks; the cursor moves by compare-and-set', async () => {
    await store.webhooks.insert(webhook());
    await store.webhooks.insert(webhook({ id: 'hook-2', userName: 'bob', createdAt: 1_700_000_000_001 }));
    expect(await store.webhooks.find('hook-1')).toEqual(webhook());
    expect((await store.webhooks.listForUser('alice')).map((w) => w.id)).toEqual(['hook-1']);
    expect((await store.webhooks.listAll()).map((w) => w.id)).toEqual(['hook-1', 'hook-2']);
    expect(await store.webhooks.update('hook-1', { url: 'https://example.org/other', eventTypes: ['psbt.ready'], walletIds: ['w2'] }, 5)).toBe(true);
    expect(await store.webhooks.find('hook-1')).toMatchObject({ url: 'https://example.org/other', eventTypes: ['psbt.ready'], walletIds: ['w2'], updatedAt: 5 });
    expect(await store.webhooks.advanceCursor('hook-1', 0, 7)).toBe(true);
    expect(await store.webhooks.advanceCursor('hook-1', 0, 9)).toBe(false);
    expect((await store.webhooks.find('hook-1'))!.eventCursor).toBe(7);
    await store.webhooks.insertDeliveries([delivery('d1', 1)]);
    expect(await store.webhooks.delete('hook-1')).toBe(true);
    expect(await store.webhooks.delete('hook-1')).toBe(false);
    expect(await store.webhooks.findDelivery('hook-1', 'd1')).toBeUndefined();
  });

  it('queues deliveries in order per wallet, lets one claimer take each and records attempts', async () => {
    await store.webhooks.insert(webhook());
    await store.webhooks.insertDeliveries([delivery('a1', 1), delivery('a2', 3), delivery('b1', 2, 'w2'), delivery('done', 0, 'w3', { status: 'delivered' })]);
    expect((await store.webhooks.queueHeads(10)).map((d) => d.id).sort()).toEqual(['a1', 'b1']);

    const claims = await Promise.all([store.webhooks.claim('a1', 2000, 62_000), store.webhooks.claim('a1', 2000, 62_000)]);
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await store.webhooks.claim('a1', 3000, 63_000)).toBe(false); // leased
    expect(await store.webhooks.claim('a1', 62_000, 122_000)).toBe(true); // the lease lapsed

    await store.webhooks.recordAttempt('a1', { status: 'pending', attempts: 1, nextAttemptAt: 20_000, responseCode: 500, error: null }, 2500);
    expect(await store.webhooks.findDelivery('hook-1', 'a1')).toMatchObject({ status: 'pending', attempts: 1, nextAttemptAt: 20_000, responseCode: 500, leaseUntil: null, updatedAt: 2500 });
    // Still the head of its wallet: a2 waits for it.
    expect((await store.webhooks.queueHeads(10)).map((d) => d.id).sort()).toEqual(['a1', 'b1']);
    await store.webhooks.recordAttempt('a1', { status: 'delivered', attempts: 2, nextAttemptAt: 20_000, responseCode: 204, error: null }, 21_000);
    expect((await store.webhooks.queueHeads(10)).map((d) => d.id).sort()).toEqual(['a2', 'b1']);
    expect((await store.webhooks.deliveries('hook-1', 10)).map((d) => d.id)).toEqual(['a2', 'b1', 'a1', 'done']);
  });

  it('keeps a token\'s permissions and wallet list, and none for a token without them', async () => {
    await store.users.insert({ name: 'alice', passwordHash: 'x', isAdmin: false, createdAt: 1 });
    const base = { userName: 'alice', lifeSeconds: 60, createdAt: 1, expiresAt: 60_001 };
    await store.tokens.insert({ ...base, id: 't1', tokenHash: 'a'.repeat(64), description: 'narrow', permissions: ['wallets:read'], walletIds: ['w1', 'w2'] });
    await store.tokens.insert({ ...base, id: 't2', tokenHash: 'b'.repeat(64), description: 'full' });
    expect(await store.tokens.findForUser('alice', 't1')).toMatchObject({ permissions: ['wallets:read'], walletIds: ['w1', 'w2'] });
    expect((await store.tokens.findWithUser('t1'))!.token).toMatchObject({ permissions: ['wallets:read'], walletIds: ['w1', 'w2'] });
    const full = await store.tokens.findForUser('alice', 't2');
    expect((await store.tokens.findWithUser('t2'))!.token).not.toHaveProperty('permissions');
    expect(full).not.toHaveProperty('permissions');
    expect(full).not.toHaveProperty('walletIds');
  });
});
