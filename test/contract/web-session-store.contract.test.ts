/** Web sessions behave alike on SQLite and PostgreSQL: found only while valid, ended with their user. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store, UserRecord, WebSessionRecord } from '../../src/store/repositories.js';
import { STORE_KINDS, type OpenedStore } from '../support/stores.js';

const alice: UserRecord = { name: 'alice', passwordHash: '$argon2id$alice', isAdmin: false, createdAt: 1_700_000_000_000 };
const root: UserRecord = { name: 'root', passwordHash: '$argon2id$root', isAdmin: true, createdAt: 1_700_000_000_001 };

function session(overrides: Partial<WebSessionRecord> = {}): WebSessionRecord {
  return { idHash: 'a'.repeat(64), userName: 'alice', csrfToken: 'csrf-a', createdAt: 1_700_000_000_000, expiresAt: 1_700_000_000_000 + 43_200_000, ...overrides };
}

describe.each(STORE_KINDS)('web session store: $kind', ({ open }) => {
  let opened: OpenedStore;
  let store: Store;

  beforeEach(async () => {
    opened = await open();
    store = opened.store;
    await store.users.insert(alice);
    await store.users.insert(root);
  });
  afterEach(async () => {
    await opened.dispose();
  });

  it('finds a session with its user\'s admin flag only before it expires', async () => {
    await store.webSessions.insert(session());
    await store.webSessions.insert(session({ idHash: 'b'.repeat(64), userName: 'root', csrfToken: 'csrf-b' }));
    expect(await store.webSessions.findValid('a'.repeat(64), 1_700_000_000_001)).toEqual({ session: session(), userIsAdmin: false });
    expect((await store.webSessions.findValid('b'.repeat(64), 1_700_000_000_001))?.userIsAdmin).toBe(true);
    expect(await store.webSessions.findValid('a'.repeat(64), session().expiresAt)).toBeUndefined();
    expect(await store.webSessions.findValid('c'.repeat(64), 0)).toBeUndefined();
  });

  it('deletes one session, all of a user, the expired ones, and those of a deleted user', async () => {
    await store.webSessions.insert(session());
    await store.webSessions.insert(session({ idHash: 'b'.repeat(64), expiresAt: 10 }));
    await store.webSessions.insert(session({ idHash: 'c'.repeat(64) }));
    await store.webSessions.insert(session({ idHash: 'd'.repeat(64), userName: 'root' }));
    expect(await store.webSessions.pruneExpired(11)).toBe(1);
    expect(await store.webSessions.delete('a'.repeat(64))).toBe(true);
    expect(await store.webSessions.delete('a'.repeat(64))).toBe(false);
    expect(await store.webSessions.deleteAllForUser('alice')).toBe(1);
    expect(await store.webSessions.findValid('c'.repeat(64), 0)).toBeUndefined();
    expect(await store.users.delete('root')).toBe(true);
    expect(await store.webSessions.findValid('d'.repeat(64), 0)).toBeUndefined();
  });

  it('refuses a session of a user that does not exist', async () => {
    await expect(store.webSessions.insert(session({ userName: 'nobody' }))).rejects.toThrow();
  });

  it('a deletion in a rolled-back transaction leaves the session valid', async () => {
    await store.webSessions.insert(session());
    await expect(
      store.transaction(async (repos) => {
        await repos.webSessions.deleteAllForUser('alice');
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(await store.webSessions.findValid('a'.repeat(64), 0)).toBeDefined();
  });
});
