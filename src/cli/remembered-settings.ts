/**
 * `wcs serve` records in `<data_folder>/config.json` the settings it was started with by flag or environment
 * variable, so that later commands (`wcs user list`, `wcs wallet rescan`, ...) find the same network, node and
 * store without being given them again. Secrets are never written there: a password, key or address with
 * credentials stays where the operator put it.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chainSettingsReplaced } from '../config/chain-settings.js';
import { CONFIG_FILE_NAME, configFileObject, urlHasCredentials, type GivenSetting } from '../config.js';

export interface RecordedSettings {
  path: string;
  /** Keys written (new or changed). */
  written: string[];
  /** Keys given but left out: secrets, and the settings that would be unusable without them. */
  leftOut: string[];
  /** Keys removed: the other chain source's, replaced by the one given. */
  removed: string[];
}

/** A database address without a password (a SQLite path, or a PostgreSQL URL that names none) is no secret. */
function databaseWithoutPassword(text: string): boolean {
  if (!/^postgres(ql)?:\/\//i.test(text.trim())) return true;
  try {
    return new URL(text.trim()).password === '';
  } catch {
    return false;
  }
}

function recordable(setting: GivenSetting): boolean {
  if (setting.key === 'database_url') return databaseWithoutPassword(setting.text);
  if (setting.key === 'bitcoind_url') return !urlHasCredentials(setting.text);
  return !setting.secret;
}

/** Merges the recordable `given` settings into config.json (mode 0600); writes nothing when none changes. */
export function recordGivenSettings(dataFolder: string, given: readonly GivenSetting[]): RecordedSettings {
  const path = join(dataFolder, CONFIG_FILE_NAME);
  const file = configFileObject(dataFolder);
  const merged: Record<string, unknown> = { ...file };
  const leftOut = given.filter((s) => !recordable(s)).map((s) => s.key);
  for (const setting of given) if (recordable(setting)) merged[setting.key] = setting.text;
  // A node user without its password in the file, or a node address without credentials there, would stop
  // every later command: such settings stay unrecorded, as their secret does.
  const hasPassword = typeof file.bitcoind_password === 'string' && file.bitcoind_password !== '';
  if (merged.bitcoind_user !== undefined && !hasPassword && file.bitcoind_user === undefined) {
    delete merged.bitcoind_user;
    leftOut.push('bitcoind_user');
  }
  const nodeUsable = merged.bitcoind_cookie !== undefined || merged.bitcoind_user !== undefined;
  if (merged.bitcoind_url !== undefined && file.bitcoind_url === undefined && !nodeUsable) {
    delete merged.bitcoind_url;
    if (!leftOut.includes('bitcoind_url')) leftOut.push('bitcoind_url');
  }
  // Started with the other chain source: the file's one would conflict with it in every later command.
  const removed: string[] = [];
  const givenKeys = given.filter((s) => s.text.trim() !== '').map((s) => s.key);
  for (const key of chainSettingsReplaced(givenKeys)) {
    if (key in merged && !givenKeys.includes(key)) {
      delete merged[key];
      removed.push(key);
    }
  }
  const written = Object.keys(merged).filter((key) => String(merged[key]) !== (key in file ? String(file[key] as string) : undefined));
  if (written.length > 0 || removed.length > 0) {
    // Written beside and renamed over: a reader never sees half a file, and the file is the owner's alone.
    const temporary = `${path}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(merged, null, 2)}\n`, { mode: 0o600 });
    renameSync(temporary, path);
  }
  return { path, written, leftOut: [...new Set(leftOut)], removed };
}

/** The one line `serve` prints when it recorded settings; undefined when it wrote nothing. */
export function recordedLine(recorded: RecordedSettings): string | undefined {
  if (recorded.written.length === 0 && recorded.removed.length === 0) return undefined;
  const leftOut = recorded.leftOut.length === 0 ? '' : `; not recorded (secrets, or what needs one): ${recorded.leftOut.join(', ')}`;
  const removed = recorded.removed.length === 0 ? '' : `; removed (the other chain source): ${recorded.removed.join(', ')}`;
  return `wcs: recorded the settings given to serve in ${recorded.path} (${recorded.written.join(', ')}), so that later commands use them${leftOut}${removed}`;
}
