/**
 * Migration 0004 on a store that already holds a wallet (schema version 3): the wallet keeps working,
 * has revealed nothing, and reveals from the index after its last used one. SQLite and PostgreSQL.
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

/** A database at schema version 3 holding one user and one wallet whose receive index 7 was used. */
async function seedVersion3(db: Kysely<Database>): Promise<void> {
  await migrate(db, MIGRATIONS.slice(0, 3));
  const raw = db as unknown as Kysely<any>;
  await raw.insertInto('users').values({ name: 'alice', password_hash: 'x', is_admin: 0, created_at: 1 }).execute();
  await raw
    .insertInto('wallets')
    .values({
      id: 'w-old',
      alias: 'old',
      name: 'Old',
      description: '',
      owner_name: 'alice',
      network: 'regtest',
      receive_descriptor: 'wpkh(tpub/0/*)#aaaaaaaa',
      change_descriptor: 'wpkh(tpub/1/*)#bbbbbbbb',
      address_type: 'bech32',
      sigs_required: 1,
      sigs_total: 1,
      keys_json: '[]',
      gap_limit: 20,
      birthday: 0,
      created_at: 1,
      revision: 4,
      tip_height: null,
      tip_hash: null,
      last_used_receive: 7,
      last_used_change: -1,
    })
    .execute();
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const upgraded: Record<'sqlite' | 'postgres', () => Promise<Store>> = {
  async sqlite() {
    const folder = mkdtempSync(join(tmpdir(), 'wcs-migrate-0004-'));
    cleanups.push(async () => rmSync(folder, { recursive: true, force: true }));
    const path = join(folder, 'service.sqlite');
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new BetterSqlite3(path) }) });
    await seedVersion3(db);
    await db.destroy();
    return openSqliteStore(path);
  },
  async postgres() {
    const schema = uniqueSchemaName();
    cleanups.push(() => dropPostgresSchema(schema));
    const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 1, options: `-c search_path=${schema}` });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    await sql`create schema ${sql.id(schema)}`.execute(db);
    await seedVersion3(db);
    await db.destroy();
    return openPostgresStore({ url: TEST_DATABASE_URL, schema, maxConnections: 2 });
  },
};

describe.each(['sqlite', 'postgres'] as const)('migration 0004 on %s', (kind) => {
  it('adds the revealed index to existing wallets at -1; revealing continues after the last used index', async () => {
    const store = await upgraded[kind]();
    cleanups.push(() => store.close());
    expect(await store.schemaVersion()).toBe(MIGRATIONS.at(-1)!.version);
    expect(await store.wallets.revealedReceiveIndexes()).toEqual(new Map()); // none revealed: absent
    expect(await store.wallets.chainRows('w-old')).toMatchObject({ revision: 4, lastRevealedReceive: -1, sync: { lastUsedReceive: 7 } });
    // Migration 0013: the details show 8, the first unused, which is then never handed out.
    expect(await store.wallets.receiveIndexes('w-old')).toEqual({ shown: 8, lastRevealed: -1, lastUsed: 7 });
    expect(await store.wallets.revealNextReceive('w-old')).toEqual({ index: 9 });
    expect(await store.wallets.findByAlias('old')).toMatchObject({ id: 'w-old', revision: 4 });
  });
});
