/** The repositories over Kysely: one implementation for every SQL dialect. */
import { sql, type Kysely, type Selectable } from 'kysely';
import {
  StoreConflictError,
  type AttemptStanding,
  type AttemptTimes,
  type AuthFailureRepository,
  type Repositories,
  type ServiceSettingRepository,
  type TokenRecord,
  type TokenRepository,
  type UserRecord,
  type UserRepository,
} from './repositories.js';
import type { Database, TokensTable, UsersTable } from './schema.js';
import { KyselyEvents, KyselyWebhooks } from './kysely-events.js';
import { KyselyPsbts } from './kysely-psbts.js';
import { KyselyWallets } from './kysely-wallets.js';
import { KyselyLabels } from './kysely-labels.js';
import { KyselyWebSessions } from './kysely-web-sessions.js';
import { KyselyFollowLeases } from './kysely-follow-leases.js';
import { PreparedQuery } from './prepared-query.js';

/** Tells whether a driver error is a uniqueness violation (SQLite or PostgreSQL). */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

async function conflictAware<T>(work: Promise<T>, message: string): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (isUniqueViolation(error)) throw new StoreConflictError(message);
    throw error;
  }
}

const toUser = (row: Selectable<UsersTable>): UserRecord => ({
  name: row.name,
  passwordHash: row.password_hash,
  isAdmin: Number(row.is_admin) === 1,
  createdAt: Number(row.created_at),
});

export const toTokenRecord = (row: Selectable<TokensTable>): TokenRecord => ({
  id: row.id,
  userName: row.user_name,
  description: row.description,
  tokenHash: row.token_hash,
  lifeSeconds: Number(row.life_seconds),
  createdAt: Number(row.created_at),
  expiresAt: Number(row.expires_at),
  ...(row.permissions != null ? { permissions: JSON.parse(row.permissions) as string[] } : {}),
  ...(row.wallet_ids != null ? { walletIds: JSON.parse(row.wallet_ids) as string[] } : {}),
});

class KyselyUsers implements UserRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async count(): Promise<number> {
    const row = await this.db.selectFrom('users').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async find(name: string): Promise<UserRecord | undefined> {
    const row = await this.db.selectFrom('users').selectAll().where('name', '=', name).executeTakeFirst();
    return row && toUser(row);
  }

  async list(): Promise<UserRecord[]> {
    return (await this.db.selectFrom('users').selectAll().orderBy('name').execute()).map(toUser);
  }

  async insert(user: UserRecord): Promise<void> {
    await conflictAware(
      this.db
        .insertInto('users')
        .values({ name: user.name, password_hash: user.passwordHash, is_admin: user.isAdmin ? 1 : 0, created_at: user.createdAt })
        .execute(),
      `User ${user.name} already exists`,
    );
  }

  async updatePasswordHash(name: string, passwordHash: string): Promise<boolean> {
    const result = await this.db.updateTable('users').set({ password_hash: passwordHash }).where('name', '=', name).executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async lockAdmins(): Promise<number> {
    // A no-op update: a row lock per admin on PostgreSQL (a waiting update skips rows no longer admin once the
    // other transaction commits), the write lock on SQLite.
    const result = await this.db.updateTable('users').set((eb) => ({ is_admin: eb.ref('is_admin') })).where('is_admin', '=', 1).executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async setAdmin(name: string, isAdmin: boolean): Promise<boolean> {
    const result = await this.db.updateTable('users').set({ is_admin: isAdmin ? 1 : 0 }).where('name', '=', name).executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async delete(name: string): Promise<boolean> {
    // Tokens go with the user (foreign key cascade); deleted explicitly too, so it never
    // depends on the connection's foreign-key setting.
    await this.db.deleteFrom('tokens').where('user_name', '=', name).execute();
    await this.db.deleteFrom('web_sessions').where('user_name', '=', name).execute();
    const result = await this.db.deleteFrom('users').where('name', '=', name).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}

class KyselyTokens implements TokenRepository {
  /** Prepared: it runs on every Bearer request. */
  private readonly tokenWithUser: PreparedQuery<[string], TokensTable & { is_admin: number | boolean }>;

  constructor(private readonly db: Kysely<Database>) {
    this.tokenWithUser = new PreparedQuery(db, (db: Kysely<Database>, id: string) =>
      db.selectFrom('tokens').innerJoin('users', 'users.name', 'tokens.user_name').selectAll('tokens').select('users.is_admin').where('tokens.id', '=', id),
    );
  }

  async insert(token: TokenRecord): Promise<void> {
    await conflictAware(
      this.db
        .insertInto('tokens')
        .values({
          id: token.id,
          user_name: token.userName,
          description: token.description,
          token_hash: token.tokenHash,
          life_seconds: token.lifeSeconds,
          created_at: token.createdAt,
          expires_at: token.expiresAt,
          permissions: token.permissions ? JSON.stringify(token.permissions) : null,
          wallet_ids: token.walletIds ? JSON.stringify(token.walletIds) : null,
        })
        .execute(),
      'A token with this description already exists',
    );
  }

  async findForUser(userName: string, id: string): Promise<TokenRecord | undefined> {
    const row = await this.db.selectFrom('tokens').selectAll().where('id', '=', id).where('user_name', '=', userName).executeTakeFirst();
    return row && toTokenRecord(row);
  }

  async listForUser(userName: string): Promise<TokenRecord[]> {
    const rows = await this.db.selectFrom('tokens').selectAll().where('user_name', '=', userName).orderBy('created_at').orderBy('id').execute();
    return rows.map(toTokenRecord);
  }

  async findWithUser(id: string): Promise<{ token: TokenRecord; userIsAdmin: boolean } | undefined> {
    const [row] = await this.tokenWithUser.run(id);
    return row && { token: toTokenRecord(row), userIsAdmin: Number(row.is_admin) === 1 };
  }



  async deleteForUser(userName: string, id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('tokens').where('id', '=', id).where('user_name', '=', userName).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async deleteAllForUser(userName: string): Promise<number> {
    const result = await this.db.deleteFrom('tokens').where('user_name', '=', userName).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

class KyselyAuthFailures implements AuthFailureRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async begin(scopeKeys: readonly string[], at: number): Promise<number[]> {
    if (scopeKeys.length === 0) return [];
    const write = async (trx: Kysely<Database>) => {
      // The row lock taken here is held until commit: numbers are handed out in commit order.
      const row = await trx
        .updateTable('login_attempt_sequence')
        .set((eb) => ({ last_seq: eb('last_seq', '+', scopeKeys.length) }))
        .where('name', '=', 'login_attempts')
        .returning('last_seq')
        .executeTakeFirstOrThrow();
      const first = Number(row.last_seq) - scopeKeys.length + 1;
      const rows = scopeKeys.map((scope_key, i) => ({ seq: first + i, scope_key, state: 'pending' as const, at }));
      await trx.insertInto('login_attempts').values(rows).execute();
      return rows.map((r) => r.seq);
    };
    return this.db.isTransaction ? write(this.db) : this.db.transaction().execute(write);
  }

  async fail(seqs: readonly number[], at: number): Promise<void> {
    if (seqs.length === 0) return;
    await this.db.updateTable('login_attempts').set({ state: 'failed', at }).where('seq', 'in', [...seqs]).execute();
  }

  async remove(seqs: readonly number[]): Promise<void> {
    if (seqs.length === 0) return;
    await this.db.deleteFrom('login_attempts').where('seq', 'in', [...seqs]).execute();
  }

  async standing(scopeKey: string, seq: number, { since, staleBefore }: AttemptTimes): Promise<AttemptStanding> {
    const failed = sql<boolean>`(state = 'failed' or at < ${staleBefore})`;
    const row = await this.db
      .selectFrom('login_attempts')
      .select([
        sql<number>`sum(case when ${failed} then 1 else 0 end)`.as('failed'),
        sql<number | null>`min(case when ${failed} then at end)`.as('oldest'),
        sql<number>`sum(case when not ${failed} and seq < ${seq} then 1 else 0 end)`.as('pending_before'),
      ])
      .where('scope_key', '=', scopeKey)
      .where('at', '>=', since)
      .executeTakeFirstOrThrow();
    return { failed: Number(row.failed ?? 0), oldestFailed: row.oldest == null ? undefined : Number(row.oldest), pendingBefore: Number(row.pending_before ?? 0) };
  }

  async pruneBefore(before: number): Promise<void> {
    await this.db.deleteFrom('login_attempts').where('at', '<', before).execute();
  }
}

class KyselyServiceSettings implements ServiceSettingRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async get(name: string): Promise<string | undefined> {
    return (await this.db.selectFrom('service_settings').select('value').where('name', '=', name).executeTakeFirst())?.value;
  }

  async setIfAbsent(name: string, value: string, at: number): Promise<string> {
    await this.db
      .insertInto('service_settings')
      .values({ name, value, updated_at: at })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
    return (await this.get(name)) ?? value;
  }

  async set(name: string, value: string, at: number): Promise<void> {
    await this.db
      .insertInto('service_settings')
      .values({ name, value, updated_at: at })
      .onConflict((oc) => oc.column('name').doUpdateSet({ value, updated_at: at }))
      .execute();
  }
}

export function kyselyRepositories(db: Kysely<Database>): Repositories {
  return {
    users: new KyselyUsers(db),
    tokens: new KyselyTokens(db),
    authFailures: new KyselyAuthFailures(db),
    psbts: new KyselyPsbts(db),
    wallets: new KyselyWallets(db),
    settings: new KyselyServiceSettings(db),
    labels: new KyselyLabels(db),
    webSessions: new KyselyWebSessions(db),
    events: new KyselyEvents(db),
    webhooks: new KyselyWebhooks(db),
    followLeases: new KyselyFollowLeases(db),
  };
}
