/** PostgreSQL store: the same repositories and migrations over a `pg` pool. */
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { kyselyStore } from './kysely-store.js';
import { MIGRATIONS } from './migrations/index.js';
import { migrate } from './migrator.js';
import type { Store } from './repositories.js';
import type { Database } from './schema.js';

const INT8_OID = 20;
/** Arbitrary constant naming the migration advisory lock. */
const MIGRATION_LOCK_ID = 25_441_001;

/** int8 (bigint, count(*)) arrives as text; the values the store keeps fit in a safe integer. */
function parseInt8(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new Error(`bigint value ${text} exceeds the safe integer range`);
  return value;
}

export interface PostgresStoreOptions {
  url: string;
  /** Schema to work in (created when missing); default: the server's search_path. */
  schema?: string;
  maxConnections?: number;
}

export async function openPostgresStore(options: PostgresStoreOptions): Promise<Store> {
  const { schema } = options;
  if (schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`Invalid schema name ${schema}`);
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.maxConnections ?? 10,
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID ? parseInt8 : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // An idle client losing its connection must not crash the process; the next query reports it.
  pool.on('error', () => {});
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  try {
    if (schema) await sql`create schema if not exists ${sql.id(schema)}`.execute(db);
    await migrate(db, MIGRATIONS, { lock: async (trx) => void (await sql`select pg_advisory_xact_lock(${MIGRATION_LOCK_ID})`.execute(trx)) });
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return kyselyStore('postgres', db);
}
