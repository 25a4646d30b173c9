/**
 * better-sqlite3 as Kysely's database, with prepared statements kept by their SQL text, and a
 * signal after every commit of this connection.
 *
 * Kysely's SQLite driver prepares every query it runs; for the small reads that make up most
 * requests, preparing cost as much as running (bench/http). Kysely compiles values to `?`
 * parameters, so one SQL text serves every call of a query.
 *
 * Kept statements are also what lets the service run on Node.js 24.19 and newer: there better-sqlite3 12
 * aborts the process when the garbage collector finalizes a statement outside JavaScript (an idle
 * collection). A statement is dropped only past STATEMENTS_KEPT or while a kept one is being iterated.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

/** Distinct query texts kept; the service has far fewer, so the bound only guards a leak. */
const STATEMENTS_KEPT = 512;
const ENDS_TRANSACTION = /^\s*(commit|end|rollback|release)\b/i;

/** `committed` runs right after a statement that may write ends outside a transaction (a `commit`, or a write in autocommit). */
export function withPreparedStatements(database: BetterSqlite3.Database, committed: () => void): SqliteDatabase {
  const statements = new Map<string, SqliteStatement>();
  const signalling = (sql: string, statement: BetterSqlite3.Statement): SqliteStatement => {
    // SQLite counts transaction control (COMMIT among it) as read-only: it writes nothing itself.
    if (statement.readonly && !ENDS_TRANSACTION.test(sql)) return statement;
    const after = <T>(result: T): T => {
      if (!database.inTransaction) committed();
      return result;
    };
    return {
      reader: statement.reader,
      all: (parameters) => after(statement.all(parameters)),
      run: (parameters) => after(statement.run(parameters)),
      // A write's rows are read at once, so that the signal follows the write.
      iterate: (parameters) => after(statement.all(parameters))[Symbol.iterator](),
    };
  };
  const busy = (statement: SqliteStatement): boolean => (statement as Partial<BetterSqlite3.Statement>).busy === true;
  return {
    close: () => database.close(),
    prepare(sql: string): SqliteStatement {
      const kept = statements.get(sql);
      // A statement still being iterated (a streamed query) cannot run a second query meanwhile.
      if (kept && !busy(kept)) return kept;
      const statement = signalling(sql, database.prepare(sql));
      if (!kept) {
        if (statements.size >= STATEMENTS_KEPT) statements.delete(statements.keys().next().value as string);
        statements.set(sql, statement);
      }
      return statement;
    },
  };
}
