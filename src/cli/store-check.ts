/**
 * Commands other than `serve` (and `restore`) work on an existing store: finding none, they say where
 * they looked and how to point elsewhere, instead of creating an empty store without an admin.
 */
import { existsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import pg from 'pg';
import type { Config } from '../config.js';
import { NoStoreError } from './errors.js';

const HOW_TO_POINT =
  'start the service once to create it (npm start, or npx wcs serve), or point at another data folder with --data-folder DIR ' +
  '(or SERVICE_DATA_FOLDER), or at another database with --database (or SERVICE_DATABASE_URL)';

export async function requireExistingStore(config: Config): Promise<void> {
  if (config.database.kind === 'sqlite') {
    const { path } = config.database;
    if (existsSync(path) && statSync(path).isFile() && statSync(path).size > 0) return;
    const where = dirname(path) === config.dataFolder ? `in the data folder ${config.dataFolder}` : `at ${path} (data folder ${config.dataFolder})`;
    throw new NoStoreError(`No store ${where}: ${HOW_TO_POINT}`);
  }
  const client = new pg.Client({ connectionString: config.database.url });
  // A connection that fails later must not crash the process; the query below reports it.
  client.on('error', () => {});
  let present: boolean;
  try {
    await client.connect();
    const result = await client.query<{ present: boolean }>("select to_regclass('schema_version') is not null as present");
    present = result.rows[0]?.present === true;
  } catch (error) {
    throw new NoStoreError(`Cannot reach the PostgreSQL database of SERVICE_DATABASE_URL (--database): ${(error as Error).message}`);
  } finally {
    await client.end().catch(() => {});
  }
  if (!present) throw new NoStoreError(`No store in the PostgreSQL database of SERVICE_DATABASE_URL (--database), which has no service tables yet: ${HOW_TO_POINT}`);
}
