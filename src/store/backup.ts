/**
 * Consistent snapshots of the SQLite store and their restore.
 *
 * A backup goes through SQLite's online backup API (better-sqlite3 `backup`), so it is a
 * transaction-consistent copy even while the service writes; it lands under a temporary name and
 * is renamed into place only after it passed the same checks a restore makes. A restore checks the
 * snapshot first (it opens, `PRAGMA integrity_check` says ok, no foreign key is broken, its schema
 * version is one this program knows), refuses a store that a running process holds open, and a
 * store with data unless forced, then swaps the file in with a rename. PostgreSQL stores are
 * backed up with pg_dump (docs/operations.md).
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import BetterSqlite3 from 'better-sqlite3';
import { MIGRATIONS } from './migrations/index.js';

const NEWEST_SCHEMA_VERSION = MIGRATIONS.at(-1)?.version ?? 0;
import { ensurePrivateDatabaseFile } from './private-files.js';

export type BackupErrorCode =
  | 'source_missing'
  | 'destination_exists'
  | 'snapshot_missing'
  | 'snapshot_unreadable'
  | 'snapshot_corrupt'
  | 'snapshot_unknown_schema'
  | 'store_in_use'
  | 'target_not_empty';

export class BackupError extends Error {
  constructor(
    readonly code: BackupErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'BackupError';
  }
}

export interface SnapshotInfo {
  path: string;
  /** Highest applied migration in the snapshot. */
  schemaVersion: number;
  bytes: number;
  /** Rows per table (schema_version excluded). */
  rows: Record<string, number>;
}

function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function temporarySibling(path: string, purpose: string): string {
  return join(dirname(path), `.${basename(path)}.${purpose}-${randomBytes(4).toString('hex')}`);
}

function removeDatabaseFiles(path: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${path}${suffix}`, { force: true });
}

function rowCounts(db: BetterSqlite3.Database): Record<string, number> {
  const tables = db
    .prepare<[], { name: string }>("select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and name <> 'schema_version' order by name")
    .all();
  const rows: Record<string, number> = {};
  for (const { name } of tables) {
    rows[name] = db.prepare<[], { n: number }>(`select count(*) as n from "${name.replaceAll('"', '""')}"`).get()?.n ?? 0;
  }
  return rows;
}

/** Opens a snapshot read-only and checks it can be served by this program; throws BackupError. */
export function inspectSnapshot(path: string): SnapshotInfo {
  if (!existsSync(path)) throw new BackupError('snapshot_missing', `Snapshot ${path} does not exist`);
  let db: BetterSqlite3.Database;
  try {
    db = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw new BackupError('snapshot_unreadable', `Snapshot ${path} cannot be opened: ${(error as Error).message}`);
  }
  try {
    let integrity: string[];
    try {
      integrity = db.prepare<[], { integrity_check: string }>('pragma integrity_check').all().map((r) => r.integrity_check);
    } catch (error) {
      if ((error as { code?: string }).code === 'SQLITE_NOTADB') throw new BackupError('snapshot_unreadable', `Snapshot ${path} is not a SQLite database`);
      throw new BackupError('snapshot_corrupt', `Snapshot ${path} fails the integrity check: ${(error as Error).message}`);
    }
    if (integrity.length !== 1 || integrity[0] !== 'ok') {
      throw new BackupError('snapshot_corrupt', `Snapshot ${path} fails the integrity check: ${integrity.slice(0, 3).join('; ')}`);
    }
    const brokenKeys = db.prepare('pragma foreign_key_check').all();
    if (brokenKeys.length > 0) throw new BackupError('snapshot_corrupt', `Snapshot ${path} has ${brokenKeys.length} broken foreign key reference(s)`);
    const hasVersionTable = db.prepare("select 1 from sqlite_master where type = 'table' and name = 'schema_version'").get() !== undefined;
    const version = hasVersionTable ? (db.prepare<[], { v: number | null }>('select max(version) as v from schema_version').get()?.v ?? 0) : 0;
    if (version < 1 || version > NEWEST_SCHEMA_VERSION) {
      throw new BackupError(
        'snapshot_unknown_schema',
        version < 1
          ? `Snapshot ${path} is not a store of this service (no schema version)`
          : `Snapshot ${path} has schema version ${version}, newer than this program knows (${NEWEST_SCHEMA_VERSION}); upgrade the program`,
      );
    }
    return { path, schemaVersion: version, bytes: statSync(path).size, rows: rowCounts(db) };
  } finally {
    db.close();
  }
}

export interface BackupOptions {
  /** Replace an existing file at the destination. */
  force?: boolean;
}

/** Writes a consistent snapshot of the SQLite store at `sourcePath` to `destinationPath`. */
export async function backupSqliteStore(sourcePath: string, destinationPath: string, options: BackupOptions = {}): Promise<SnapshotInfo> {
  if (!existsSync(sourcePath)) throw new BackupError('source_missing', `Store ${sourcePath} does not exist`);
  if (existsSync(destinationPath) && !options.force) {
    throw new BackupError('destination_exists', `${destinationPath} exists; choose another name or pass --force to replace it`);
  }
  const temporary = temporarySibling(destinationPath, 'backup');
  const source = new BetterSqlite3(sourcePath, { readonly: true, fileMustExist: true });
  try {
    source.exec('PRAGMA busy_timeout = 5000');
    // Created 0600 first: the snapshot holds password and token hashes like the store.
    ensurePrivateDatabaseFile(temporary);
    // The backup API restarts by itself when another connection writes meanwhile: the copy is one snapshot.
    await source.backup(temporary);
    ensurePrivateDatabaseFile(temporary);
  } catch (error) {
    removeDatabaseFiles(temporary);
    throw error;
  } finally {
    source.close();
  }
  try {
    // A snapshot is one self-contained file: no write-ahead log beside it.
    const copy = new BetterSqlite3(temporary, { fileMustExist: true });
    try {
      copy.exec('PRAGMA journal_mode = DELETE');
    } finally {
      copy.close();
    }
    inspectSnapshot(temporary);
    fsyncPath(temporary);
    renameSync(temporary, destinationPath);
    fsyncPath(dirname(destinationPath));
  } catch (error) {
    removeDatabaseFiles(temporary);
    throw error;
  }
  return inspectSnapshot(destinationPath);
}

/**
 * Holds an exclusive lock on the store at `path` while `work` runs, or throws `store_in_use` when
 * another connection (a running service, a CLI command) has it open: every WAL-mode connection
 * keeps a shared lock for as long as it is open.
 */
function withExclusiveStore<T>(path: string, work: (db: BetterSqlite3.Database) => T): T {
  const db = new BetterSqlite3(path, { fileMustExist: true });
  try {
    db.exec('PRAGMA busy_timeout = 0');
    db.exec('PRAGMA locking_mode = EXCLUSIVE');
    try {
      db.exec('begin exclusive');
    } catch (error) {
      if ((error as { code?: string }).code?.startsWith('SQLITE_BUSY')) {
        throw new BackupError('store_in_use', `Store ${path} is in use by a running process; stop the service first`);
      }
      throw error;
    }
    try {
      return work(db);
    } finally {
      db.exec('commit');
    }
  } finally {
    db.close();
  }
}

export interface RestoreOptions {
  /** Replace a store that holds data. A store in use is refused regardless. */
  force?: boolean;
}

/** Replaces the SQLite store at `targetPath` with the snapshot at `snapshotPath`. */
export async function restoreSqliteStore(snapshotPath: string, targetPath: string, options: RestoreOptions = {}): Promise<SnapshotInfo> {
  const snapshot = inspectSnapshot(snapshotPath);
  mkdirSync(dirname(targetPath), { recursive: true, mode: 0o700 });
  if (existsSync(targetPath)) {
    withExclusiveStore(targetPath, (db) => {
      const rows = Object.values(rowCounts(db)).reduce((a, b) => a + b, 0);
      if (rows > 0 && !options.force) {
        throw new BackupError('target_not_empty', `Store ${targetPath} holds data (${rows} rows); pass --force to replace it`);
      }
    });
  }
  // Copy through the backup API into a sibling file, so the swap is one rename on one file system.
  const temporary = temporarySibling(targetPath, 'restore');
  const source = new BetterSqlite3(snapshotPath, { readonly: true, fileMustExist: true });
  try {
    ensurePrivateDatabaseFile(temporary);
    await source.backup(temporary);
    ensurePrivateDatabaseFile(temporary);
    inspectSnapshot(temporary);
    fsyncPath(temporary);
    // Checked again right before the swap: a service started meanwhile keeps the old file.
    if (existsSync(targetPath)) withExclusiveStore(targetPath, () => undefined);
    // A log left beside the old file would be replayed into the new one.
    for (const suffix of ['-wal', '-shm', '-journal']) rmSync(`${targetPath}${suffix}`, { force: true });
    renameSync(temporary, targetPath);
    fsyncPath(dirname(targetPath));
  } catch (error) {
    removeDatabaseFiles(temporary);
    throw error;
  } finally {
    source.close();
  }
  return { ...inspectSnapshot(targetPath), path: targetPath, schemaVersion: snapshot.schemaVersion };
}
