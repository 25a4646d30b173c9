/** SQLite store (the embedded default): better-sqlite3 in WAL mode with foreign keys on. */
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { kyselyStore } from './kysely-store.js';
import { MIGRATIONS } from './migrations/index.js';
import { migrate } from './migrator.js';
import { toTokenRecord } from './kysely-repositories.js';
import { ensurePrivateDatabaseFile, ensurePrivateFolder } from './private-files.js';
import { withPreparedStatements } from './sqlite-statements.js';
import type { Store, TokenRepository } from './repositories.js';
import type { Database, TokensTable } from './schema.js';

export async function openSqliteStore(path: string): Promise<Store> {
  ensurePrivateFolder(dirname(path));
  ensurePrivateDatabaseFile(path);
  const database = new BetterSqlite3(path);
  database.pragma('journal_mode = WAL');
  // An acknowledged write must survive a power cut too, not only a killed process: sync the WAL at
  // every commit (FULL is this build's default; said here so no build setting can weaken it).
  database.pragma('synchronous = FULL');
  database.pragma('foreign_keys = ON');
  // Several processes (the server and a CLI command) may share the file.
  database.pragma('busy_timeout = 5000');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withPreparedStatements(database) }) });
  try {
    await migrate(db, MIGRATIONS);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  const store = kyselyStore('sqlite', db);
  return withFastTokenLookup(store, path);
}

/**
 * The Bearer path reads one token per request. Through Kysely that costs ~10x a prepared
 * statement, so SQLite answers it from a read-only connection with the statement prepared once
 * (bench/http). A separate connection sees only committed data, as the main one's readers do.
 *
 * Tokens read are kept until the database changes: `pragma data_version` on this connection moves
 * whenever any other connection commits (this process's writer, a CLI command, another process),
 * so a token deleted anywhere is refused by the next request, as without the cache.
 */
function withFastTokenLookup(store: Store, path: string): Store {
  const reader = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
  reader.pragma('busy_timeout = 5000');
  const statement = reader.prepare<[string], TokenWithAdminRow>(
    'select t.id, t.user_name, t.description, t.token_hash, t.life_seconds, t.created_at, t.expires_at, t.permissions, t.wallet_ids, u.is_admin ' +
      'from tokens t join users u on u.name = t.user_name where t.id = ?',
  );
  const dataVersion = reader.prepare<[], number>('pragma data_version').pluck();
  const kept = new Map<string, TokenWithUser>();
  let keptAtVersion = -1;
  const base = store.tokens;
  const tokens: TokenRepository = {
    insert: (token) => base.insert(token),
    findForUser: (userName, id) => base.findForUser(userName, id),
    listForUser: (userName) => base.listForUser(userName),
    deleteForUser: (userName, id) => base.deleteForUser(userName, id),
    deleteAllForUser: (userName) => base.deleteAllForUser(userName),
    findWithUser: async (id) => {
      const version = dataVersion.get();
      if (version !== keptAtVersion) {
        kept.clear();
        keptAtVersion = version ?? -1;
      }
      const known = kept.get(id);
      if (known) return known;
      const row = statement.get(id);
      if (!row) return undefined;
      const found: TokenWithUser = Object.freeze({ token: Object.freeze(toTokenRecord(row)), userIsAdmin: Number(row.is_admin) === 1 });
      if (kept.size >= TOKENS_KEPT) kept.delete(kept.keys().next().value as string);
      kept.set(id, found);
      return found;
    },
  };
  return {
    ...store,
    tokens,
    close: async () => {
      if (reader.open) reader.close();
      await store.close();
    },
  };
}

type TokenWithAdminRow = TokensTable & { is_admin: number };
type TokenWithUser = NonNullable<Awaited<ReturnType<TokenRepository['findWithUser']>>>;
/** Tokens in use at once on a busy service; past it, the oldest read is dropped (and read again when used). */
const TOKENS_KEPT = 10_000;
