/**
 * Applies numbered migrations in order, each in its own transaction together with its row in
 * `schema_version`, so a crash leaves the schema at a known version.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Migration } from './migrations/index.js';
import type { Database } from './schema.js';

export interface MigratorOptions {
  /** Serialises migrations of several processes on one database (PostgreSQL advisory lock). */
  lock?: (trx: Transaction<Database>) => Promise<void>;
  now?: () => number;
}

export async function currentSchemaVersion(db: Kysely<Database>): Promise<number> {
  const row = await db.selectFrom('schema_version').select((eb) => eb.fn.max('version').as('version')).executeTakeFirst();
  return row?.version == null ? 0 : Number(row.version);
}

export async function migrate(db: Kysely<Database>, migrations: readonly Migration[], options: MigratorOptions = {}): Promise<number> {
  // Versions increase; a number may be left free for a migration another line of work adds (each is
  // applied when absent from schema_version, so one merged later still runs).
  migrations.forEach((m, i) => {
    if (i === 0 && m.version !== 1) throw new Error(`Migration ${m.name} has version ${m.version}; expected 1`);
    const previous = i === 0 ? 0 : migrations[i - 1]!.version;
    if (!Number.isInteger(m.version) || m.version <= previous) throw new Error(`Migration ${m.name} has version ${m.version}; expected more than ${previous}`);
  });
  const newest = migrations.at(-1)?.version ?? 0;
  // Under the lock too: two PostgreSQL instances creating it at once collide on the catalog
  // ("type schema_version already exists") even with IF NOT EXISTS.
  await db.transaction().execute(async (trx) => {
    await options.lock?.(trx);
    await trx.schema
      .createTable('schema_version')
      .ifNotExists()
      .addColumn('version', 'integer', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('applied_at', 'bigint', (c) => c.notNull())
      .execute();
  });
  const now = options.now ?? Date.now;
  for (const migration of migrations) {
    await db.transaction().execute(async (trx) => {
      await options.lock?.(trx);
      // Re-read inside the transaction: another instance may have applied it meanwhile.
      const applied = await trx.selectFrom('schema_version').select('version').where('version', '=', migration.version).executeTakeFirst();
      if (applied) return;
      await migration.up(trx);
      await trx.insertInto('schema_version').values({ version: migration.version, name: migration.name, applied_at: now() }).execute();
    });
  }
  const version = await currentSchemaVersion(db);
  if (version > newest) {
    throw new Error(`The database has schema version ${version}, newer than this program knows (${newest}); upgrade the program`);
  }
  return version;
}

/** A trivial query that proves the connection answers. */
export async function ping(db: Kysely<Database>): Promise<void> {
  await sql`select 1`.execute(db);
}
