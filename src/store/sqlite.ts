/** SQLite store (the embedded default): better-sqlite3 in WAL mode with foreign keys on. */
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { kyselyStore } from './kysely-store.js';
import { MIGRATIONS } from './migrations/index.js';
import { migrate } from './migrator.js';
import { ensurePrivateDatabaseFile, ensurePrivateFolder } from './private-files.js';
import { withPreparedStatements } from './sqlite-statements.js';
import type { Store } from './repositories.js';
import type { Database } from './schema.js';
import { SqliteChanges, withKeptReads } from './sqlite-kept-reads.js';

/** `now` (milliseconds) paces the look at other processes' commits (sqlite-kept-reads.ts); tests set it. */
export async function openSqliteStore(path: string, options: { now?: () => number } = {}): Promise<Store> {
  ensurePrivateFolder(dirname(path));
  ensurePrivateDatabaseFile(path);
  const database = new BetterSqlite3(path);
  // `exec`, not `pragma()`: each `pragma()` prepares a statement and leaves it to the garbage collector, and on
  // Node.js 24.19 and newer better-sqlite3 12 aborts the process when the collector finalizes one outside
  // JavaScript. The store's own statements are kept (sqlite-statements.ts).
  database.exec('PRAGMA journal_mode = WAL');
  // An acknowledged write must survive a power cut too, not only a killed process: sync the WAL at
  // every commit (FULL is this build's default; said here so no build setting can weaken it).
  database.exec('PRAGMA synchronous = FULL');
  database.exec('PRAGMA foreign_keys = ON');
  // Several processes (the server and a CLI command) may share the file.
  database.exec('PRAGMA busy_timeout = 5000');
  const changes = new SqliteChanges(options.now);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withPreparedStatements(database, () => changes.count()) }) });
  try {
    await migrate(db, MIGRATIONS);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  const store = kyselyStore('sqlite', db);
  return withKeptReads(store, path, changes);
}
