/**
 * The Bearer path's token read on SQLite. Through Kysely it cost ~10x a prepared statement, so it
 * runs from a read-only connection with the statement prepared once; that connection sees only
 * committed data, as the main one's readers do.
 *
 * Tokens read are kept while nothing may have changed them (docs/adr/0008-request-path-caches.md):
 * - a commit of this process's writer drops them before the next request (the writer counts its
 *   commits, synchronously, in `sqlite-statements.ts`);
 * - a commit of another process (a CLI command) moves `pragma data_version` on this connection; that
 *   pragma opens a read transaction, as costly as the token read itself, so it is looked at once per
 *   millisecond at most: such a revocation applies within a millisecond.
 */
import BetterSqlite3 from 'better-sqlite3';
import { toTokenRecord } from './kysely-repositories.js';
import type { Store, TokenRepository } from './repositories.js';
import type { TokensTable } from './schema.js';

/** Commits of this process's writer connection. */
export class CommitCounter {
  value = 0;

  count(): void {
    this.value += 1;
  }
}

type TokenWithAdminRow = TokensTable & { is_admin: number };
type TokenWithUser = NonNullable<Awaited<ReturnType<TokenRepository['findWithUser']>>>;
/** Tokens in use at once on a busy service; past it, the oldest read is dropped (and read again when used). */
const TOKENS_KEPT = 10_000;
const OTHER_PROCESSES_LOOKED_AT_MS = 1;

export function withFastTokenLookup(store: Store, path: string, commits: CommitCounter): Store {
  const reader = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
  reader.pragma('busy_timeout = 5000');
  const statement = reader.prepare<[string], TokenWithAdminRow>(
    'select t.id, t.user_name, t.description, t.token_hash, t.life_seconds, t.created_at, t.expires_at, t.permissions, t.wallet_ids, u.is_admin ' +
      'from tokens t join users u on u.name = t.user_name where t.id = ?',
  );
  const dataVersion = reader.prepare<[], number>('pragma data_version').pluck();
  const kept = new Map<string, TokenWithUser>();
  let keptAtCommit = commits.value;
  let keptAtVersion: number | undefined;
  let versionLookedAt = -Infinity;

  const dropIfChanged = () => {
    if (commits.value !== keptAtCommit) {
      kept.clear();
      keptAtCommit = commits.value;
    }
    const now = performance.now();
    if (now - versionLookedAt < OTHER_PROCESSES_LOOKED_AT_MS) return;
    versionLookedAt = now;
    const version = dataVersion.get();
    if (version !== keptAtVersion) {
      kept.clear();
      keptAtVersion = version;
    }
  };

  const base = store.tokens;
  const tokens: TokenRepository = {
    insert: (token) => base.insert(token),
    findForUser: (userName, id) => base.findForUser(userName, id),
    listForUser: (userName) => base.listForUser(userName),
    deleteForUser: (userName, id) => base.deleteForUser(userName, id),
    deleteAllForUser: (userName) => base.deleteAllForUser(userName),
    findWithUser: async (id) => {
      dropIfChanged();
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
