/**
 * The last admin stays an admin (every store), also when two admins are demoted or deleted at the same
 * moment: one of the two changes is refused with 409 `last_admin`, and one admin is left.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PasswordHasher } from '../../../src/auth/passwords.js';
import { UserService } from '../../../src/services/users.js';
import { STORE_KINDS, type OpenedStore } from '../../support/stores.js';

const ROUNDS = 10;

describe.each(STORE_KINDS)('the last admin ($kind)', ({ open }) => {
  let opened: OpenedStore;
  let users: UserService;
  beforeEach(async () => {
    opened = await open();
    users = new UserService({ store: opened.store, hasher: new PasswordHasher(), passwordMinChars: 8, now: () => 5 });
  });
  afterEach(() => opened.dispose());

  const admins = async () => (await opened.store.users.list()).filter((u) => u.isAdmin).map((u) => u.name);

  it('two admins withdrawing each other\'s flag at once: one is refused, one admin is left', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const [a, b] = [`a${round}`, `b${round}`];
      for (const name of [a, b]) await opened.store.users.insert({ name, passwordHash: 'not-a-hash', isAdmin: true, createdAt: 1 });
      const outcomes = await Promise.allSettled([users.setAdmin(a, false), users.setAdmin(b, false)]);
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      expect(outcomes.find((o) => o.status === 'rejected')).toMatchObject({ reason: { code: 'last_admin' } });
      expect(await admins()).toHaveLength(1);
      for (const name of [a, b]) await opened.store.users.delete(name);
    }
  });

  it('two admins deleted at once: one is refused, one admin is left', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const [a, b] = [`a${round}`, `b${round}`];
      for (const name of [a, b]) await opened.store.users.insert({ name, passwordHash: 'not-a-hash', isAdmin: true, createdAt: 1 });
      const outcomes = await Promise.allSettled([users.deleteUser(a), users.deleteUser(b)]);
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      expect(outcomes.find((o) => o.status === 'rejected')).toMatchObject({ reason: { code: 'last_admin' } });
      const left = await admins();
      expect(left).toHaveLength(1);
      await opened.store.users.delete(left[0]!);
    }
  });
});
