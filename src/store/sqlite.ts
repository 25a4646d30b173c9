/** SQLite store (the embedded default): better-sqlite3 in WAL mode with foreign keys on. */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { kyselyStore } from './kysely-store.js';
import { MIGRATIONS } from './migrations/index.js';
import { migrate } from './migrator.js';
import type { Store } from './repositories.js';
import type { Database } from './schema.js';

export async function openSqliteStore(path: string): Promise<Store> {
  mkdirSync(dirname(path), { recursive: true });
  const database = new BetterSqlite3(path);
  database.pragma('journal_mode = WAL');
  database.pragma('foreign_keys = ON');
  // Several processes (the server and a CLI command) may share the file.
  database.pragma('busy_timeout = 5000');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
  try {
    await migrate(db, MIGRATIONS);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return kyselyStore('sqlite', db);
}
