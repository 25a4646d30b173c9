import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { PreparedQuery } from '../../../src/store/prepared-query.js';

interface People {
  people: { name: string; city: string };
}

describe('PreparedQuery', () => {
  const db = new Kysely<People>({ dialect: new SqliteDialect({ database: new BetterSqlite3(':memory:') }) });
  afterAll(() => db.destroy());

  it('compiles once and runs with each call\'s parameters, constants of the query kept', async () => {
    await db.schema.createTable('people').addColumn('name', 'text').addColumn('city', 'text').execute();
    await db.insertInto('people').values([{ name: 'ann', city: 'oslo' }, { name: 'bo', city: 'oslo' }, { name: 'cy', city: 'rome' }, { name: 'di', city: 'rome' }]).execute();
    let builds = 0;
    const query = new PreparedQuery(db, (db: Kysely<People>, city: string, other: string) => {
      builds += 1;
      return db.selectFrom('people').select('name').where((eb) => eb.or([eb('city', '=', city), eb('name', '=', other)])).where('name', '<>', 'di').orderBy('name');
    });
    expect((await query.run('oslo', 'cy')).map((r) => r.name)).toEqual(['ann', 'bo', 'cy']);
    expect((await query.run('rome', 'ann')).map((r) => r.name)).toEqual(['ann', 'cy']);
    expect(builds).toBe(1);
  });

  it('refuses a query that puts a parameter into its text instead of passing it as a value', async () => {
    const query = new PreparedQuery(db, (db: Kysely<People>, city: string) => db.selectFrom('people').select(sql.lit(city).as('x')));
    await expect(query.run('oslo')).rejects.toThrow('parameter 0 is not passed as a value');
  });
});
