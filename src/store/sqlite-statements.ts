/**
 * better-sqlite3 as Kysely's database, with prepared statements kept by their SQL text. Kysely's
 * SQLite driver prepares every query it runs; for the small reads that make up most requests,
 * preparing cost as much as running (bench/http). Kysely compiles values to `?` parameters, so
 * one SQL text serves every call of a query.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

/** Distinct query texts kept; the service has far fewer, so the bound only guards a leak. */
const STATEMENTS_KEPT = 512;

export function withPreparedStatements(database: BetterSqlite3.Database): SqliteDatabase {
  const statements = new Map<string, BetterSqlite3.Statement>();
  return {
    close: () => database.close(),
    prepare(sql: string): SqliteStatement {
      const kept = statements.get(sql);
      // A statement still being iterated (a streamed query) cannot run a second query meanwhile.
      if (kept && !kept.busy) return kept;
      const statement = database.prepare(sql);
      if (!kept) {
        if (statements.size >= STATEMENTS_KEPT) statements.delete(statements.keys().next().value as string);
        statements.set(sql, statement);
      }
      return statement;
    },
  };
}
