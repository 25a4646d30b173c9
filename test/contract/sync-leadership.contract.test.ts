/** Sync leadership on PostgreSQL: one holder at a time per schema, released on close, regained after a lost connection. */
import { describe, expect, it } from 'vitest';
import { PostgresSyncLeadership } from '../../src/store/sync-leadership.js';
import pg from 'pg';
import { TEST_DATABASE_URL, dropPostgresSchema, uniqueSchemaName } from '../support/stores.js';

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

  it('gives each schema of one database its own leader, and one at a time within a schema', async () => {
    const lockId = 900_000 + Math.floor(Math.random() * 99_999);
    const schemas = [uniqueSchemaName(), uniqueSchemaName()];
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    for (const schema of schemas) await admin.query(`create schema "${schema}"`);
    await admin.end();
    // As a deployment names its schema: in the URL's search_path, which the store uses too.
    const inSchema = (schema: string) => new PostgresSyncLeadership(`${TEST_DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`, lockId);
    const [a1, a2, b1] = [inSchema(schemas[0]!), inSchema(schemas[0]!), inSchema(schemas[1]!)];
    try {
      expect(await a1.acquire()).toBe(true);
      expect(await a2.acquire()).toBe(false);
      expect(await b1.acquire()).toBe(true);
      await a1.release();
      expect(await a2.acquire()).toBe(true);
      expect(await b1.acquire()).toBe(true);
    } finally {
      for (const leadership of [a1, a2, b1]) await leadership.release();
      for (const schema of schemas) await dropPostgresSchema(schema);
    }
  });

  it('lets instances sharing the wallets hold the lock together, never beside a single leader', async () => {
    const lockId = 900_000 + Math.floor(Math.random() * 99_999);
    const [sharing1, sharing2] = [new PostgresSyncLeadership(TEST_DATABASE_URL, lockId, true), new PostgresSyncLeadership(TEST_DATABASE_URL, lockId, true)];
    const leader = new PostgresSyncLeadership(TEST_DATABASE_URL, lockId);
    try {
      expect(await sharing1.acquire()).toBe(true);
      expect(await sharing2.acquire()).toBe(true);
      expect(await leader.acquire()).toBe(false);
      await sharing1.release();
      await sharing2.release();
      expect(await leader.acquire()).toBe(true);
      expect(await sharing1.acquire()).toBe(false);
    } finally {
      for (const leadership of [sharing1, sharing2, leader]) await leadership.release();
    }
  });

  it('answers false, without throwing, when the database cannot be reached', async () => {
    const leadership = new PostgresSyncLeadership('postgres://nobody:wrong@127.0.0.1:1/none', 1);
    expect(await leadership.acquire()).toBe(false);
    await leadership.release();
  });
});
