/**
 * Migration 0019 on a store that already holds wallets (schema version 18). On PostgreSQL the listing index keeps the
 * lists' order without the revision, so a tip-only sync write changes no indexed column of `wallets` and is then
 * heap-only (counted by PostgreSQL within the writing transaction), where at version 18 none was. SQLite keeps its
 * index with the revision (the listing answered from it alone). On both, the listing, the revisions and the conflict
 * on a stale revision stay as they were.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { KyselyWallets } from '../../../src/store/kysely-wallets.js';
import { MIGRATIONS } from '../../../src/store/migrations/index.js';
import { migrate } from '../../../src/store/migrator.js';
import { openPostgresStore } from '../../../src/store/postgres.js';
import { StoreConflictError, type Store } from '../../../src/store/repositories.js';
import type { Database } from '../../../src/store/schema.js';
import { openSqliteStore } from '../../../src/store/sqlite.js';
import { TEST_DATABASE_URL, dropPostgresSchema, uniqueSchemaName } from '../../support/stores.js';

const VERSION_BEFORE = 18;
/** Five wallets created in this order (w-4 first; w-1 and w-2 at the same time, so by alias), at the revisions given. */
const WALLETS = [
  { id: 'w-4', alias: 'delta', createdAt: 1, revision: 3 },
  { id: 'w-1', alias: 'alpha', createdAt: 2, revision: 0 },
  { id: 'w-2', alias: 'bravo', createdAt: 2, revision: 7 },
  { id: 'w-3', alias: 'charlie', createdAt: 3, revision: 1 },
  { id: 'w-5', alias: 'echo', createdAt: 4, revision: 2 },
];

async function seedVersion18(db: Kysely<Database>): Promise<void> {
  await migrate(db, MIGRATIONS.filter((m) => m.version <= VERSION_BEFORE));
  const raw = db as unknown as Kysely<any>;
  await raw.insertInto('users').values({ name: 'alice', password_hash: 'x', is_admin: 0, created_at: 1 }).execute();
  for (const w of WALLETS) {
    await raw
      .insertInto('wallets')
      .values({
        id: w.id, alias: w.alias, name: w.alias, description: '', owner_name: 'alice', network: 'regtest',
        receive_descriptor: `wpkh(tpub-${w.id}/0/*)#aaaaaaaa`, change_descriptor: `wpkh(tpub-${w.id}/1/*)#bbbbbbbb`, address_type: 'bech32',
        sigs_required: 1, sigs_total: 1, keys_json: '[]', gap_limit: 20, birthday: 0, created_at: w.createdAt, revision: w.revision,
        tip_height: 100, tip_hash: 'aa'.repeat(32), last_used_receive: -1, last_used_change: -1, last_revealed_receive: -1, shown_receive: -1, chain_base_revision: 0,
      })
      .execute();
  }
}

/** Every wallet moved to `height` in one tip-only write; on PostgreSQL, how many of its row updates were heap-only. */
async function moveTips(db: Kysely<Database>, revisions: Map<string, number>, height: number, postgres = true): Promise<{ updated: number; heapOnly: number }> {
  // The counters include the backend's earlier transactions not yet reported: this one's are the difference.
  const counted = async (trx: Kysely<Database>) => {
    if (!postgres) return { rows: [{ updated: '0', hot: '0' }] };
    return sql<{ updated: string; hot: string }>`select pg_stat_get_xact_tuples_updated('wallets'::regclass) as updated, pg_stat_get_xact_tuples_hot_updated('wallets'::regclass) as hot`.execute(trx);
  };
  return db.transaction().execute(async (trx) => {
    const before = (await counted(trx)).rows[0]!;
    const tip = { height, hash: height.toString(16).padStart(64, '0') };
    const moved = await new KyselyWallets(trx).applySyncRows(WALLETS.map((w) => ({ sync: { walletId: w.id, tip, lastUsedReceive: -1, lastUsedChange: -1 }, expectedRevision: revisions.get(w.id)! })));
    for (const [id, revision] of moved) revisions.set(id, revision);
    const after = (await counted(trx)).rows[0]!;
    return { updated: Number(after.updated) - Number(before.updated), heapOnly: Number(after.hot) - Number(before.hot) };
  });
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function expectListingAndConflicts(store: Store, revisions: Map<string, number>): Promise<void> {
  expect(await store.schemaVersion()).toBe(MIGRATIONS.at(-1)!.version);
  expect(await store.wallets.listRevisions()).toEqual(['w-4', 'w-1', 'w-2', 'w-3', 'w-5'].map((id) => ({ id, revision: revisions.get(id) })));
  const tip = { height: 300, hash: 'bb'.repeat(32) };
  const stale = { sync: { walletId: 'w-2', tip, lastUsedReceive: -1, lastUsedChange: -1 }, expectedRevision: revisions.get('w-2')! - 1 };
  await expect(store.transaction((repos) => repos.wallets.applySyncRows([stale]))).rejects.toBeInstanceOf(StoreConflictError);
  const moved = await store.transaction((repos) => repos.wallets.applySyncRows([{ ...stale, expectedRevision: revisions.get('w-2')! }]));
  expect(moved).toEqual(new Map([['w-2', revisions.get('w-2')! + 1]]));
  expect(await store.wallets.findById('w-2')).toMatchObject({ revision: revisions.get('w-2')! + 1, tip });
}

describe('migration 0019 on sqlite', () => {
  it('keeps the listing answered from its index alone; tip-only writes and their conflicts unchanged', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'wcs-migrate-0019-'));
    cleanups.push(async () => rmSync(folder, { recursive: true, force: true }));
    const path = join(folder, 'service.sqlite');
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new BetterSqlite3(path) }) });
    await seedVersion18(db);
    const revisions = new Map(WALLETS.map((w) => [w.id, w.revision]));
    await moveTips(db, revisions, 101, false); // SQLite has no such counters: the write alone
    await migrate(db, MIGRATIONS);
    const columns = await sql<{ name: string }>`select name from pragma_index_info('wallets_listing') order by seqno`.execute(db);
    expect(columns.rows.map((c) => c.name)).toEqual(['created_at', 'alias', 'id', 'revision']);
    // The listing walks the index for its order (no sort of every wallet) and reads nothing else.
    const plan = await sql<{ detail: string }>`explain query plan select id, revision from wallets order by created_at, alias`.execute(db);
    expect(plan.rows.map((r) => r.detail).join('; ')).toMatch(/USING COVERING INDEX wallets_listing/);
    expect(plan.rows.map((r) => r.detail).join('; ')).not.toMatch(/TEMP B-TREE/);
    await db.destroy();
    const store = await openSqliteStore(path);
    cleanups.push(() => store.close());
    expect(await store.wallets.listRevisions()).toEqual(WALLETS.toSorted((a, b) => a.createdAt - b.createdAt || a.alias.localeCompare(b.alias)).map((w) => ({ id: w.id, revision: w.revision + 1 })));
    await expectListingAndConflicts(store, new Map(WALLETS.map((w) => [w.id, w.revision + 1])));
  });
});

describe('migration 0019 on postgres', () => {
  it('makes tip-only writes heap-only (none were at version 18) and keeps the listing, revisions and conflicts', async () => {
    const schema = uniqueSchemaName();
    cleanups.push(() => dropPostgresSchema(schema));
    const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 1, options: `-c search_path=${schema}` });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    cleanups.push(() => db.destroy());
    await sql`create schema ${sql.id(schema)}`.execute(db);
    await seedVersion18(db);
    const revisions = new Map(WALLETS.map((w) => [w.id, w.revision]));
    // At version 18 the revision is in the listing index: every row update writes every index of `wallets`.
    expect(await moveTips(db, revisions, 101)).toEqual({ updated: 5, heapOnly: 0 });
    await migrate(db, MIGRATIONS);
    const index = await sql<{ indexdef: string }>`select indexdef from pg_indexes where schemaname = ${schema} and indexname = 'wallets_listing'`.execute(db);
    expect(index.rows[0]!.indexdef).toMatch(/\(created_at, alias, id\)$/);
    const options = await sql<{ reloptions: string[] }>`select reloptions from pg_class where oid = 'wallets'::regclass`.execute(db);
    expect(options.rows[0]!.reloptions).toEqual(['fillfactor=70']);
    expect(await moveTips(db, revisions, 102)).toEqual({ updated: 5, heapOnly: 5 });
    expect(await moveTips(db, revisions, 103)).toEqual({ updated: 5, heapOnly: 5 });
    const store = await openPostgresStore({ url: TEST_DATABASE_URL, schema, maxConnections: 2 });
    cleanups.push(() => store.close());
    await expectListingAndConflicts(store, revisions);
  });
});
