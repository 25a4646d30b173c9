/**
 * The HS256 signing key: the operator's (SERVICE_JWT_KEY), or 32 random bytes created on first
 * start in `<data_folder>/jwt-signing-key` with mode 0600 and reused on every later start.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const SIGNING_KEY_FILE = 'jwt-signing-key';

export function loadSigningKey(dataFolder: string, operatorKey: string | undefined): Uint8Array {
  if (operatorKey !== undefined) return new Uint8Array(Buffer.from(operatorKey, 'utf8'));
  const path = join(dataFolder, SIGNING_KEY_FILE);
  mkdirSync(dataFolder, { recursive: true, mode: 0o700 });
  try {
    // 'wx': never overwrite a key another process created a moment ago.
    writeFileSync(path, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return readKeyFile(path);
}

/**
 * The key `loadSigningKey` would give, creating nothing: undefined while the file does not exist. For
 * commands that issue and check no token: they leave the data folder as they found it.
 */
export function findSigningKey(dataFolder: string, operatorKey: string | undefined): Uint8Array | undefined {
  if (operatorKey !== undefined) return new Uint8Array(Buffer.from(operatorKey, 'utf8'));
  const path = join(dataFolder, SIGNING_KEY_FILE);
  return existsSync(path) ? readKeyFile(path) : undefined;
}

function readKeyFile(path: string): Uint8Array {
  const text = readFileSync(path, 'utf8').trim();
  if (!/^[0-9a-f]{64,}$/.test(text)) throw new Error(`The signing key file ${path} is damaged (expected at least 64 hex characters)`);
  return new Uint8Array(Buffer.from(text, 'hex'));
}
