/**
 * Reads made on (nearly) every request, kept in memory on SQLite while nothing may have changed
 * them (docs/adr/0008-request-path-caches.md): the Bearer path's token with its user, and a user's
 * wallets (listings and service details).
 *
 * What may have changed is known from two signals:
 * - every commit of this process's writer, counted synchronously as it commits
 *   (`sqlite-statements.ts`): kept reads are dropped before the next request;
 * - commits of other processes (CLI commands): they move `pragma data_version` on the read-only
 *   connection. That pragma opens a read transaction, as costly as the token read itself, so it is
 *   looked at once per millisecond at most: such a change is seen within a millisecond.
 *
 * The token is read from its own read-only connection with a statement prepared once (through Kysely
 * it cost ~10x); that connection sees only committed data, as the main one's readers do.
 */
import BetterSqlite3 from 'better-sqlite3';
import { toTokenRecord } from './kysely-repositories.js';
import type { Store, TokenRepository, WalletRepository } from './repositories.js';
import type { TokensTable } from './schema.js';

const OTHER_PROCESSES_LOOKED_AT_MS = 1;

/** Whether the database may have changed: this process's commits, and other processes' (data_version). */
export class SqliteChanges {
  private commits = 0;
  private othersSeen = 0;
  private version: number | undefined;
  private versionLookedAt = -Infinity;
  private dataVersion: BetterSqlite3.Statement<[], number> | undefined;

  /** `now`: milliseconds, for the once-per-millisecond look at other processes' commits. */
  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Called by the writer right after each of its commits. */
  count(): void {
    this.commits += 1;
  }

  /** The connection whose data_version tells other processes' commits (not the writer's own). */
  watch(reader: BetterSqlite3.Database): void {
    this.dataVersion = reader.prepare<[], number>('pragma data_version').pluck();
  }

  /** Moves whenever the database may have changed since the last call. */
  generation(): number {
    const now = this.now();
    if (this.dataVersion && now - this.versionLookedAt >= OTHER_PROCESSES_LOOKED_AT_MS) {
      this.versionLookedAt = now;
      const version = this.dataVersion.get();
      if (version !== this.version) {
        this.version = version;
        this.othersSeen += 1;
      }
    }
    return this.commits + this.othersSeen;
  }
}

/** Values kept by key until the database may have changed; bounded (the oldest goes first). */
class KeptWhileUnchanged<V> {
  private readonly values = new Map<string, V>();
  private keptAt = -1;

  constructor(
    private readonly changes: SqliteChanges,
    private readonly limit: number,
  ) {}

  async get(key: string, read: () => Promise<V | undefined>): Promise<V | undefined> {
    const generation = this.changes.generation();
    if (generation !== this.keptAt) {
      this.values.clear();
      this.keptAt = generation;
    }
    const known = this.values.get(key);
    if (known !== undefined) return known;
    const value = await read();
    // A commit while reading (another request's, during an await) makes the value's age unknown.
    if (value === undefined || this.changes.generation() !== generation) return value;
    if (this.values.size >= this.limit) this.values.delete(this.values.keys().next().value as string);
    this.values.set(key, value);
    return value;
  }
}

type TokenWithAdminRow = TokensTable & { is_admin: number };
type TokenWithUser = NonNullable<Awaited<ReturnType<TokenRepository['findWithUser']>>>;
type AccessibleWallets = Awaited<ReturnType<WalletRepository['listAccessible']>>;
/** Tokens and users active at once on a busy service; past it, the oldest is read again when used. */
const KEPT_PER_KIND = 10_000;

export function withKeptReads(store: Store, path: string, changes: SqliteChanges): Store {
  const reader = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
  reader.exec('PRAGMA busy_timeout = 5000'); // not pragma(): see sqlite.ts
  changes.watch(reader);
  const tokenStatement = reader.prepare<[string], TokenWithAdminRow>(
    'select t.id, t.user_name, t.description, t.token_hash, t.life_seconds, t.created_at, t.expires_at, t.permissions, t.wallet_ids, u.is_admin ' +
      'from tokens t join users u on u.name = t.user_name where t.id = ?',
  );
  const keptTokens = new KeptWhileUnchanged<TokenWithUser>(changes, KEPT_PER_KIND);
  const keptWallets = new KeptWhileUnchanged<AccessibleWallets>(changes, KEPT_PER_KIND);

  const tokens = withOverrides<TokenRepository>(store.tokens, {
    findWithUser: (id) =>
      keptTokens.get(id, async () => {
        const row = tokenStatement.get(id);
        return row && Object.freeze({ token: Object.freeze(toTokenRecord(row)), userIsAdmin: Number(row.is_admin) === 1 });
      }),
  });
  const wallets = withOverrides<WalletRepository>(store.wallets, {
    listAccessible: async (userName) =>
      (await keptWallets.get(userName, async () => deepFreeze(await store.wallets.listAccessible(userName)))) ?? [],
  });
  return {
    ...store,
    tokens,
    wallets,
    close: async () => {
      if (reader.open) reader.close();
      await store.close();
    },
  };
}

/** The repository with some methods replaced; the others are its own (reached through the prototype, `this` intact). */
function withOverrides<R extends object>(repository: R, overrides: Partial<R>): R {
  return Object.assign(Object.create(repository) as R, overrides);
}

/** Kept values are shared by every caller: frozen, so that none can change them for the others. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}
