/**
 * Migrations 0012 and 0015 on a store that already holds webhooks and events (schema version 11): the
 * webhooks of users deleted before go with their delivery logs, the others stay; the transaction events
 * already recorded get their announcements, so the same announcement is not recorded again. SQLite and PostgreSQL.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../../src/store/migrations/index.js';
import { migrate } from '../../../src/store/migrator.js';
import { openPostgresStore } from '../../../src/store/postgres.js';
import type { Store } from '../../../src/store/repositories.js';
import type { Database } from '../../../src/store/schema.js';
import { openSqliteStore } from '../../../src/store/sqlite.js';
import { TEST_DATABASE_URL, dropPostgresSchema, uniqueSchemaName } from '../../support/stores.js';

const TXID = 'ab'.repeat(32);
const BLOCK = 'cd'.repeat(32);

/** Version 11: alice with a webhook, and the webhook of a user deleted since (ghost), each with a delivery. */
async function seedVersion11(db: Kysely<Database>): Promise<void> {
  await migrate(db, MIGRATIONS.slice(0, 11));
  const raw = db as unknown as Kysely<any>;
  await raw.insertInto('users').values({ name: 'alice', password_hash: 'x', is_admin: 0, created_at: 1 }).execute();
  const webhook = (id: string, user: string) => ({ id, user_name: user, url: 'https://example.org/', event_types: '["transaction.received"]', wallet_ids: '["w1"]', secret: 's', created_at: 1, updated_at: 1, event_cursor: 0 });
  await raw.insertInto('webhooks').values([webhook('h-alice', 'alice'), webhook('h-ghost', 'ghost')]).execute();
  const event = (seq: number, type: string, data: Record<string, unknown>) => ({ seq, id: `e${seq}`, type, wallet_id: 'w1', wallet_alias: 'one', occurred_at: 1, data: JSON.stringify(data) });
  await raw
    .insertInto('events')
    .values([
      event(1, 'transaction.received', { txid: TXID, category: 'receive' }),
      event(2, 'transaction.confirmed', { txid: TXID, confirmations: 1, block_hash: BLOCK }),
      event(3, 'psbt.created', { txid: TXID }),
    ])
    .execute();
  await raw.updateTable('event_sequence').set({ last_seq: 3 }).execute();
  const delivery = (id: string, webhookId: string) => ({ id, webhook_id: webhookId, event_seq: 1, wallet_id: 'w1', status: 'delivered', attempts: 1, next_attempt_at: 1, lease_until: null, response_code: 200, error: null, created_at: 1, updated_at: 1 });
  await raw.insertInto('webhook_deliveries').values([delivery('d-alice', 'h-alice'), delivery('d-ghost', 'h-ghost')]).execute();
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const upgraded: Record<'sqlite' | 'postgres', () => Promise<Store>> = {
  async sqlite() {
    const folder = mkdtempSync(join(tmpdir(), 'wcs-migrate-0012-'));
    cleanups.push(async () => rmSync(folder, { recursive: true, force: true }));
    const path = join(folder, 'service.sqlite');
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new BetterSqlite3(path) }) });
    await seedVersion11(db);
    await db.destroy();
    return openSqliteStore(path);
  },
  async postgres() {
    const schema = uniqueSchemaName();
    cleanups.push(() => dropPostgresSchema(schema));
    const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 1, options: `-c search_path=${schema}` });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    await sql`create schema ${sql.id(schema)}`.execute(db);
    await seedVersion11(db);
    await db.destroy();
    return openPostgresStore({ url: TEST_DATABASE_URL, schema, maxConnections: 2 });
  },
};

const newEvent = (id: string, type: string, data: Record<string, unknown>, announcement?: string) => ({ id, type, walletId: 'w1', walletAlias: 'one', occurredAt: 2, data, ...(announcement ? { announcement } : {}) });

describe.each(['sqlite', 'postgres'] as const)('migrations 0012 and 0015 on %s', (kind) => {
  it("remove deleted users' webhooks with their logs, and give recorded transaction events their announcements", async () => {
    const store = await upgraded[kind]();
    cleanups.push(() => store.close());
    expect(await store.schemaVersion()).toBe(MIGRATIONS.at(-1)!.version);
    expect((await store.webhooks.listAll()).map((w) => w.id)).toEqual(['h-alice']);
    expect(await store.webhooks.find('h-ghost')).toBeUndefined();
    expect((await store.webhooks.deliveries('h-alice', 10)).map((d) => d.id)).toEqual(['d-alice']);
    expect(await store.webhooks.deliveries('h-ghost', 10)).toEqual([]);

    const stored = await store.events.append([
      newEvent('again-received', 'transaction.received', { txid: TXID }, `transaction.received:${TXID}`),
      newEvent('again-confirmed', 'transaction.confirmed', { txid: TXID, confirmations: 1, block_hash: BLOCK }, `transaction.confirmed:${TXID}:1:${BLOCK}`),
      newEvent('deeper', 'transaction.confirmed', { txid: TXID, confirmations: 6, block_hash: BLOCK }, `transaction.confirmed:${TXID}:6:${BLOCK}`),
      newEvent('psbt', 'psbt.created', { txid: TXID }),
    ]);
    expect(stored.map((e) => [e.id, e.seq])).toEqual([
      ['deeper', 4],
      ['psbt', 5],
    ]);
    expect(await store.events.lastSeq()).toBe(5);
  });
});
