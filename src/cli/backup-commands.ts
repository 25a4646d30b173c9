/** `wcs backup FILE` and `wcs restore FILE`: snapshots of the SQLite store (PostgreSQL: pg_dump). */
import { resolve } from 'node:path';
import type { Config } from '../config.js';
import { backupSqliteStore, restoreSqliteStore, type SnapshotInfo } from '../store/backup.js';
import { BackupUsageError } from './errors.js';

const POSTGRES_HINT =
  'the store is PostgreSQL: back it up with pg_dump and restore it with pg_restore (see docs/operations.md)';

function summary(info: SnapshotInfo): string {
  const rows = Object.entries(info.rows)
    .map(([table, n]) => `${table} ${n}`)
    .join(', ');
  return `schema version ${info.schemaVersion}, ${info.bytes} bytes; rows: ${rows || 'none'}`;
}

/** Runs `backup` or `restore`; returns the line to print. Throws BackupError for refused operations. */
export async function runBackupCommand(command: 'backup' | 'restore', config: Config, fileName: string, force: boolean): Promise<string> {
  const file = resolve(fileName);
  if (config.database.kind !== 'sqlite') throw new BackupUsageError(`wcs ${command}: ${POSTGRES_HINT}`);
  const store = config.database.path;
  if (command === 'backup') {
    const info = await backupSqliteStore(store, file, { force });
    return `Backed up ${store} to ${file} (${summary(info)})`;
  }
  const info = await restoreSqliteStore(file, store, { force });
  return `Restored ${store} from ${file} (${summary(info)})`;
}
