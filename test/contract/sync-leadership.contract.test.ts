/** Sync leadership on PostgreSQL: one holder at a time, released on close, regained after a lost connection. */
import { describe, expect, it } from 'vitest';
import { PostgresSyncLeadership } from '../../src/store/sync-leadership.js';
import { TEST_DATABASE_URL } from '../support/stores.js';

describe('PostgreSQL sync leadership', () => {
  it('lets one instance lead until it releases the lock', async () => {
    // A lock id of this test alone, so parallel test files never contend with it.
    const lockId = 900_000 + Math.floor(Math.random() * 99_999);
    const first = new PostgresSyncLeadership(TEST_DATABASE_URL, lockId);
    const second = new PostgresSyncLeadership(TEST_DATABASE_URL, lockId);
    try {
      expect(await first.acquire()).toBe(true);
      expect(await first.acquire()).toBe(true);
      expect(await second.acquire()).toBe(false);
      await first.release();
      expect(await second.acquire()).toBe(true);
      expect(await first.acquire()).toBe(false);
    } finally {
      await first.release();
      await second.release();
    }
  });

  it('answers false, without throwing, when the database cannot be reached', async () => {
    const leadership = new PostgresSyncLeadership('postgres://nobody:wrong@127.0.0.1:1/none', 1);
    expect(await leadership.acquire()).toBe(false);
    await leadership.release();
  });
});
