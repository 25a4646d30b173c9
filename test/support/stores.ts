/**
 * Opens real stores for tests: a SQLite file in a fresh temporary folder, or a fresh schema in the
 * test PostgreSQL (WCS_TEST_DATABASE_URL). A PostgreSQL that does not answer fails the test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openPostgresStore } from '../../src/store/postgres.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import type { Store } from '../../src/store/repositories.js';

export const TEST_DATABASE_URL = process.env.WCS_TEST_DATABASE_URL ?? 'postgres://wcs_test:wcs_test@127.0.0.1:5432/wcs_test';

export interface OpenedStore {
  store: Store;
  /** Closes the store and removes its file or schema. */
  dispose(): Promise<void>;
}

/** A unique schema name for one test (lower-case, safe as an identifier). */
export function uniqueSchemaName(): string {
  return `t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

export async function dropPostgresSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(`drop schema if exists "${schema}" cascade`);
  } finally {
    await client.end();
  }
}

export async function openTestSqlite(): Promise<OpenedStore> {
  const folder = mkdtempSync(join(tmpdir(), 'wcs-store-'));
  const store = await openSqliteStore(join(folder, 'service.sqlite'));
  return {
    store,
    async dispose() {
      await store.close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

export async function openTestPostgres(): Promise<OpenedStore> {
  const schema = uniqueSchemaName();
  const store = await openPostgresStore({ url: TEST_DATABASE_URL, schema, maxConnections: 4 });
  return {
    store,
    async dispose() {
      await store.close();
      await dropPostgresSchema(schema);
    },
  };
}

export const STORE_KINDS = [
  { kind: 'sqlite', open: openTestSqlite },
  { kind: 'postgres', open: openTestPostgres },
] as const;
