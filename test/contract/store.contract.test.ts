/** One conformance suite for every store adapter: SQLite and PostgreSQL must behave alike. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StoreConflictError, type Store, type TokenRecord, type UserRecord } from '../../src/store/repositories.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { STORE_KINDS, type OpenedStore } from '../support/stores.js';

const alice: UserRecord = { name: 'alice', passwordHash: '$argon2id$alice', isAdmin: false, createdAt: 1_700_000_000_000 };
const root: UserRecord = { name: 'root', passwordHash: '$argon2id$root', isAdmin: true, createdAt: 1_700_000_000_001 };

function token(overrides: Partial<TokenRecord> = {}): TokenRecord {
  return {
    id: '7a1c1a3e-0000-4000-8000-000000000001',
    userName: 'alice',
    description: 'laptop',
    tokenHash: 'a'.repeat(64),
    lifeSeconds: 86_400,
    createdAt: 1_700_000_000_000,
    // Beyond 2^32 ms on purpose: bigint columns must round-trip large values exactly.
    expiresAt: 1_700_000_000_000 + 86_400_000,
    ...overrides,
  };
}

describe.each(STORE_KINDS)('store conformance: $kind', ({ kind, open }) => {
  let opened: OpenedStore;
  let store: Store;

  beforeEach(async () => {
    opened = await open();
    store = opened.store;
  });
  afterEach(async () => {
    await opened.dispose();
  });

  it('reports its kind, answers a ping and is migrated to the newest schema version', async () => {
    expect(store.kind).toBe(kind);
    await expect(store.ping()).resolves.toBeUndefined();
    expect(await store.schemaVersion()).toBe(MIGRATIONS.at(-1)!.version);
  });

  it('inserts, finds, lists and counts users', async () => {
    expect(await store.users.count()).toBe(0);
    await store.users.insert(root);
    await store.users.insert(alice);
    expect(await store.users.count()).toBe(2);
    expect(await store.users.find('alice')).toEqual(alice);
    expect(await store.users.find('root')).toEqual(root);
    expect(await store.users.find('nobody')).toBeUndefined();
    expect((await store.users.list()).map((u) => u.name)).toEqual(['alice', 'root']);
  });

  it('refuses a duplicate user name with StoreConflictError', async () => {
    await store.users.insert(alice);
    await expect(store.users.insert({ ...alice, passwordHash: 'other' })).rejects.toBeInstanceOf(StoreConflictError);
  });

  it('updates a password hash and tells whether the user existed', async () => {
    await store.users.insert(alice);
    expect(await store.users.updatePasswordHash('alice', 'new-hash')).toBe(true);
    expect((await store.users.find('alice'))?.passwordHash).toBe('new-hash');
    expect(await store.users.updatePasswordHash('nobody', 'x')).toBe(false);
  });

  it('stores tokens with exact bigint values and finds them only for their owner', async () => {
    await store.users.insert(alice);
    await store.users.insert(root);
    const t = token({ expiresAt: 9_007_199_254_740_000 });
    await store.tokens.insert(t);
    expect(await store.tokens.findForUser('alice', t.id)).toEqual(t);
    expect(await store.tokens.findForUser('root', t.id)).toBeUndefined();
    expect(await store.tokens.findWithUser(t.id)).toEqual({ token: t, userIsAdmin: false });
    expect(await store.tokens.findWithUser('7a1c1a3e-0000-4000-8000-00000000ffff')).toBeUndefined();
  });

  it('lists a user\'s tokens oldest first and no one else\'s', async () => {
    await store.users.insert(alice);
    await store.users.insert(root);
    await store.tokens.insert(token({ id: 'id-2', description: 'second', tokenHash: 'h2', createdAt: 2 }));
    await store.tokens.insert(token({ id: 'id-1', description: 'first', tokenHash: 'h1', createdAt: 1 }));
    await store.tokens.insert(token({ id: 'id-3', userName: 'root', description: 'first', tokenHash: 'h3' }));
    expect((await store.tokens.listForUser('alice')).map((t) => t.id)).toEqual(['id-1', 'id-2']);
    expect((await store.tokens.listForUser('root')).map((t) => t.id)).toEqual(['id-3']);
    expect(await store.tokens.listForUser('nobody')).toEqual([]);
  });

  it('refuses a duplicate description of the same user, allows it for another user', async () => {
    await store.users.insert(alice);
    await store.users.insert(root);
    await store.tokens.insert(token());
    await expect(store.tokens.insert(token({ id: 'other-id', tokenHash: 'b'.repeat(64) }))).rejects.toBeInstanceOf(StoreConflictError);
    await store.tokens.insert(token({ id: 'root-id', userName: 'root', tokenHash: 'c'.repeat(64) }));
    expect(await store.tokens.findForUser('root', 'root-id')).toBeDefined();
  });

  it('refuses a token of a user that does not exist (foreign key)', async () => {
    await expect(store.tokens.insert(token({ userName: 'ghost' }))).rejects.toThrow();
  });

  it('deletes a token only for its owner', async () => {
    await store.users.insert(alice);
    await store.users.insert(root);
    await store.tokens.insert(token());
    expect(await store.tokens.deleteForUser('root', token().id)).toBe(false);
    expect(await store.tokens.findWithUser(token().id)).toBeDefined();
    expect(await store.tokens.deleteForUser('alice', token().id)).toBe(true);
    expect(await store.tokens.findWithUser(token().id)).toBeUndefined();
    expect(await store.tokens.deleteForUser('alice', token().id)).toBe(false);
  });

  it('deletes all tokens of a user, and a deleted user takes their tokens along', async () => {
    await store.users.insert(alice);
    await store.users.insert(root);
    await store.tokens.insert(token({ id: 'a1', description: 'one', tokenHash: 'h1' }));
    await store.tokens.insert(token({ id: 'a2', description: 'two', tokenHash: 'h2' }));
    await store.tokens.insert(token({ id: 'r1', userName: 'root', description: 'one', tokenHash: 'h3' }));
    expect(await store.tokens.deleteAllForUser('alice')).toBe(2);
    expect(await store.tokens.listForUser('alice')).toEqual([]);
    expect(await store.users.delete('root')).toBe(true);
    expect(await store.tokens.findWithUser('r1')).toBeUndefined();
    expect(await store.users.delete('root')).toBe(false);
  });

  it('keeps login attempts per key: pending until failed or removed, failures counted inside a window, old ones pruned', async () => {
    const attempts = store.authFailures;
    const times = (since: number, staleBefore = 0) => ({ since, staleBefore });
    const [ip1, alice1] = await attempts.begin(['ip:127.0.0.1', 'user:alice'], 1_000);
    const [ip2] = await attempts.begin(['ip:127.0.0.1'], 2_000);
    const [ip3] = await attempts.begin(['ip:127.0.0.1'], 3_000);
    expect(ip1! < alice1! && alice1! < ip2! && ip2! < ip3!).toBe(true);
    // Pending ones stand before later attempts; none has failed yet.
    expect(await attempts.standing('ip:127.0.0.1', ip3!, times(0))).toEqual({ failed: 0, oldestFailed: undefined, pendingBefore: 2 });
    expect(await attempts.standing('ip:127.0.0.1', ip1!, times(0))).toEqual({ failed: 0, oldestFailed: undefined, pendingBefore: 0 });
    await attempts.fail([ip1!, alice1!], 1_100);
    await attempts.fail([ip2!], 2_100);
    expect(await attempts.standing('ip:127.0.0.1', ip3!, times(0))).toEqual({ failed: 2, oldestFailed: 1_100, pendingBefore: 0 });
    expect(await attempts.standing('ip:127.0.0.1', ip3!, times(1_500))).toEqual({ failed: 1, oldestFailed: 2_100, pendingBefore: 0 });
    expect(await attempts.standing('user:alice', Number.MAX_SAFE_INTEGER, times(0))).toEqual({ failed: 1, oldestFailed: 1_100, pendingBefore: 0 });
    expect(await attempts.standing('user:bob', Number.MAX_SAFE_INTEGER, times(0))).toEqual({ failed: 0, oldestFailed: undefined, pendingBefore: 0 });
    // A pending attempt begun before staleBefore was cut short: it counts as failed.
    expect(await attempts.standing('ip:127.0.0.1', Number.MAX_SAFE_INTEGER, times(0, 3_500))).toEqual({ failed: 3, oldestFailed: 1_100, pendingBefore: 0 });
    await attempts.pruneBefore(2_500);
    expect(await attempts.standing('ip:127.0.0.1', Number.MAX_SAFE_INTEGER, times(0))).toEqual({ failed: 0, oldestFailed: undefined, pendingBefore: 1 });
    const seqs = await attempts.begin(['ip:10.0.0.1', 'ip-user:10.0.0.1:x'], 4_000);
    expect(seqs).toHaveLength(2);
    await attempts.remove(seqs);
    expect(await attempts.standing('ip:10.0.0.1', Number.MAX_SAFE_INTEGER, times(0))).toEqual({ failed: 0, oldestFailed: undefined, pendingBefore: 0 });
    expect(await attempts.standing('ip-user:10.0.0.1:x', Number.MAX_SAFE_INTEGER, times(0))).toEqual({ failed: 0, oldestFailed: undefined, pendingBefore: 0 });
    expect(await attempts.standing('ip:127.0.0.1', Number.MAX_SAFE_INTEGER, times(0))).toEqual({ failed: 0, oldestFailed: undefined, pendingBefore: 1 });
  });

  it('numbers login attempts begun at the same moment without a gap or a repeat', async () => {
    const all = await Promise.all(Array.from({ length: 16 }, () => store.authFailures.begin(['ip:127.0.0.1', 'ip-user:127.0.0.1:a'], 1_000)));
    const numbers = all.flat().sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: 32 }, (_, i) => numbers[0]! + i));
    for (const pair of all) expect(pair[1]).toBe(pair[0]! + 1);
  });

  it('commits a transaction as a whole', async () => {
    await store.transaction(async (repos) => {
      await repos.users.insert(alice);
      await repos.tokens.insert(token());
    });
    expect(await store.tokens.findWithUser(token().id)).toBeDefined();
  });

  it('rolls a failed transaction back entirely', async () => {
    await store.users.insert(alice);
    await expect(
      store.transaction(async (repos) => {
        await repos.users.updatePasswordHash('alice', 'changed');
        await repos.users.insert(root);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect((await store.users.find('alice'))?.passwordHash).toBe(alice.passwordHash);
    expect(await store.users.find('root')).toBeUndefined();
  });

  it('closes idempotently', async () => {
    await store.close();
    await store.close();
    await expect(store.ping()).rejects.toThrow();
  });
});

describe.each(STORE_KINDS)('store conformance across transactions: $kind', ({ open }) => {
  it('the token lookup of the Bearer path sees a committed delete at once and never an uncommitted one', async () => {
    const { store, dispose } = await open();
    try {
      await store.users.insert(alice);
      await store.tokens.insert(token());
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let deletedInside!: () => void;
      const deleted = new Promise<void>((resolve) => (deletedInside = resolve));
      const transaction = store.transaction(async (repos) => {
        await repos.tokens.deleteAllForUser('alice');
        deletedInside();
        await held;
      });
      await deleted;
      // SQLite serialises writers; a reader on another connection still sees the committed row.
      expect(await store.tokens.findWithUser(token().id)).toBeDefined();
      release();
      await transaction;
      expect(await store.tokens.findWithUser(token().id)).toBeUndefined();
    } finally {
      await dispose();
    }
  });
});
