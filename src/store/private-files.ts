/**
 * The store's files hold password and token hashes: readable by the service's user only (0600),
 * in a folder of its own (0700) when the service creates it. SQLite gives its -wal, -shm and
 * -journal files the mode of the database file, so creating that one 0600 covers them.
 */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';

export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_FOLDER_MODE = 0o700;

/** Creates the folder (and missing parents) 0700; an existing folder is left as it is. */
export function ensurePrivateFolder(path: string): void {
  mkdirSync(path, { recursive: true, mode: PRIVATE_FOLDER_MODE });
}

/** Creates an empty file with mode 0600, or narrows an existing one (and its SQLite side files) to 0600. */
export function ensurePrivateDatabaseFile(path: string): void {
  if (!existsSync(path)) closeSync(openSync(path, 'a', PRIVATE_FILE_MODE));
  for (const suffix of ['', '-wal', '-shm', '-journal']) {
    try {
      chmodSync(`${path}${suffix}`, PRIVATE_FILE_MODE);
    } catch (error) {
      // Absent side files are fine; a file of another owner keeps its mode (the open reports real problems).
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'EPERM') throw error;
    }
  }
}
