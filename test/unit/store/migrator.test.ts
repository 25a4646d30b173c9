import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../../src/store/migrations/index.js';
import { migrate } from '../../../src/store/migrator.js';
import type { Database } from '../../../src/store/schema.js';
import { openSqliteStore } from '../../../src/store/sqlite.js';

let folder: string;
beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'wcs-migrate-'));
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

describe('migrations', () => {
  it('are numbered from 1, increasing', () => {
    // Increasing from 1; a number may stay free for a migration of another line of work.
    expect(MIGRATIONS[0]?.version).toBe(1);
    expect(MIGRATIONS.every((m, i) => i === 0 || m.version > MIGRATIONS[i - 1]!.version)).toBe(true);
  });

  it('apply once: reopening a database keeps its version and data', async () => {
    const path = join(folder, 'service.sqlite');
    const first = await openSqliteStore(path);
    await first.users.insert({ name: 'a', passwordHash: 'h', isAdmin: true, createdAt: 1 });
    await first.close();
    const second = await openSqliteStore(path);
    expect(await second.schemaVersion()).toBe(MIGRATIONS.at(-1)!.version);
    expect(await second.users.count()).toBe(1);
    await second.close();
    const raw = new BetterSqlite3(path, { readonly: true });
    expect(raw.prepare('select version, name from schema_version order by version').all()).toEqual(MIGRATIONS.map((m) => ({ version: m.version, name: m.name })));
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    raw.close();
  });

  it('refuse a database from a newer program', async () => {
    const path = join(folder, 'service.sqlite');
    await (await openSqliteStore(path)).close();
    const raw = new BetterSqlite3(path);
    raw.prepare('insert into schema_version (version, name, applied_at) values (?, ?, ?)').run(MIGRATIONS.at(-1)!.version + 1, 'future', 0);
    raw.close();
    await expect(openSqliteStore(path)).rejects.toThrow(/newer than this program knows/);
  });

  it('refuse a list with a gap', async () => {
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new BetterSqlite3(':memory:') }) });
    await expect(migrate(db, [{ ...MIGRATIONS[0]!, version: 2 }])).rejects.toThrow(/expected 1/);
    await db.destroy();
  });

  it('roll a failing migration back with its version row', async () => {
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new BetterSqlite3(join(folder, 'x.sqlite')) }) });
    const broken = { version: 2, name: 'broken', up: async (k: Kysely<any>) => { await k.schema.createTable('half').addColumn('a', 'text').execute(); throw new Error('step failed'); } };
    await expect(migrate(db, [MIGRATIONS[0]!, broken])).rejects.toThrow('step failed');
    const versions = await db.selectFrom('schema_version').select('version').execute();
    expect(versions.map((v) => v.version)).toEqual([1]);
    const tables = await db.introspection.getTables();
    expect(tables.map((t) => t.name)).not.toContain('half');
    await db.destroy();
  });
});
