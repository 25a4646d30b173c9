/** Web interface sessions over Kysely (SQLite and PostgreSQL). */
import type { Kysely, Selectable } from 'kysely';
import type { WebSessionRecord, WebSessionRepository } from './repositories.js';
import type { Database, WebSessionsTable } from './schema.js';

const toSession = (row: Selectable<WebSessionsTable>): WebSessionRecord => ({
  idHash: row.id_hash,
  userName: row.user_name,
  csrfToken: row.csrf_token,
  createdAt: Number(row.created_at),
  expiresAt: Number(row.expires_at),
});

export class KyselyWebSessions implements WebSessionRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(session: WebSessionRecord): Promise<void> {
    await this.db
      .insertInto('web_sessions')
      .values({
        id_hash: session.idHash,
        user_name: session.userName,
        csrf_token: session.csrfToken,
        created_at: session.createdAt,
        expires_at: session.expiresAt,
      })
      .execute();
  }

  async findValid(idHash: string, now: number): Promise<{ session: WebSessionRecord; userIsAdmin: boolean } | undefined> {
    const row = await this.db
      .selectFrom('web_sessions')
      .innerJoin('users', 'users.name', 'web_sessions.user_name')
      .selectAll('web_sessions')
      .select('users.is_admin')
      .where('web_sessions.id_hash', '=', idHash)
      .where('web_sessions.expires_at', '>', now)
      .executeTakeFirst();
    return row && { session: toSession(row), userIsAdmin: Number(row.is_admin) === 1 };
  }

  async delete(idHash: string): Promise<boolean> {
    const result = await this.db.deleteFrom('web_sessions').where('id_hash', '=', idHash).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async deleteAllForUser(userName: string): Promise<number> {
    const result = await this.db.deleteFrom('web_sessions').where('user_name', '=', userName).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async pruneExpired(now: number): Promise<number> {
    const result = await this.db.deleteFrom('web_sessions').where('expires_at', '<=', now).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
