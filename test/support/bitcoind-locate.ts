/**
 * Finds the Bitcoin Core `bitcoind` the real-node tests run: the BITCOIND environment variable
 * (an explicit path, which must work), else the first `bitcoind` on the PATH. Version 28 or newer.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

export const MIN_BITCOIND_MAJOR = 28;

export const HOW_TO_RUN = `BITCOIND=/path/to/bitcoind npm test   (Bitcoin Core v${MIN_BITCOIND_MAJOR} or newer)`;

export type Located =
  | { ok: true; path: string; version: string; major: number }
  /** `explicit`: BITCOIND was set, so the problem is a configuration error, not an absent node. */
  | { ok: false; reason: string; explicit: boolean };

export function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first executable `name` in the PATH's folders. */
export function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    if (executable(candidate)) return candidate;
  }
  return undefined;
}

let cached: Located | undefined;

export function locateBitcoind(): Located {
  if (cached) return cached;
  const fromEnv = process.env.BITCOIND?.trim();
  const explicit = fromEnv !== undefined && fromEnv !== '';
  const path = explicit ? fromEnv : onPath('bitcoind');
  if (!path) return (cached = { ok: false, reason: 'no bitcoind: BITCOIND is not set and there is none on the PATH', explicit });
  if (!executable(path)) return (cached = { ok: false, reason: `BITCOIND=${path} is not an executable file`, explicit });
  // A folder of its own: `-version` writes the data folder's settings.json, and test files starting at once all asked
  // in ~/.bitcoin ("Settings file could not be written").
  const dataFolder = mkdtempSync(join(tmpdir(), 'wcs-bitcoind-version-'));
  const run = spawnSync(path, ['-version', `-datadir=${dataFolder}`], { encoding: 'utf8', timeout: 10_000 });
  rmSync(dataFolder, { recursive: true, force: true });
  const firstLine = (run.stdout ?? '').split('\n')[0] ?? '';
  const match = /v(\d+)\.(\d+)/.exec(firstLine);
  if (run.status !== 0 || !match) {
    return (cached = { ok: false, reason: `${path} -version did not report a Bitcoin Core version (${firstLine || run.stderr || run.error?.message})`, explicit });
  }
  const major = Number(match[1]);
  if (major < MIN_BITCOIND_MAJOR) {
    return (cached = { ok: false, reason: `${path} is Bitcoin Core ${match[0]}; the real-node tests need v${MIN_BITCOIND_MAJOR} or newer`, explicit });
  }
  return (cached = { ok: true, path, version: match[0], major });
}

/** True when the run must fail rather than leave the real-node suite out. */
export function realNodeRequired(): boolean {
  const ci = (process.env.CI ?? '').toLowerCase();
  return ci === 'true' || ci === '1';
}
