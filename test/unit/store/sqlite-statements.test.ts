import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { withPreparedStatements } from '../../../src/store/sqlite-statements.js';

interface Things {
  things: { id: number; name: string };
}

describe('SQLite statements under Kysely', () => {
  const database = new BetterSqlite3(':memory:');
  const prepared: string[] = [];
  const prepare = database.prepare.bind(database);
  database.prepare = ((sql: string) => {
    prepared.push(sql);
    return prepare(sql);
  }) as typeof database.prepare;
  let commits = 0;
  const db = new Kysely<Things>({ dialect: new SqliteDialect({ database: withPreparedStatements(database, () => (commits += 1)) }) });
  afterAll(() => db.destroy());

  it('signals each commit of a write, in a transaction or alone, and nothing for reads or inside a transaction', async () => {
    await db.schema.createTable('things').addColumn('id', 'integer', (c) => c.primaryKey()).addColumn('name', 'text').execute();
    const start = commits;
    await db.insertInto('things').values({ id: 1, name: 'a' }).execute();
    expect(commits - start).toBe(1);
    await db.insertInto('things').values({ id: 2, name: 'b' }).returning('id').execute();
    expect(commits - start).toBe(2);
    await db.selectFrom('things').selectAll().execute();
    expect(commits - start).toBe(2);
    let inside = -1;
    await db.transaction().execute(async (trx) => {
      await trx.updateTable('things').set({ name: 'c' }).where('id', '=', 1).execute();
      await trx.deleteFrom('things').where('id', '=', 2).returning('id').execute();
      inside = commits - start;
    });
    expect(inside).toBe(2);
    expect(commits - start).toBe(3);
    await expect(
      db.transaction().execute(async (trx) => {
        await trx.insertInto('things').values({ id: 3, name: 'd' }).execute();
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect((await db.selectFrom('things').select('id').execute()).map((r) => r.id)).toEqual([1]);
  });

  it('prepares each query text once', async () => {
    const before = prepared.length;
    for (const id of [1, 2, 3]) await db.selectFrom('things').selectAll().where('id', '=', id).execute();
    expect(prepared.length - before).toBe(1);
  });
});
