/**
 * Finds the Fulcrum (an Electrum server) the Electrum tests run: the FULCRUM environment variable (an explicit
 * path, which must work), else `../shared/bin/Fulcrum` next to the repository, else the first `Fulcrum` on the
 * PATH. It must start: `Fulcrum --version` fails when its libraries (Qt 5, RocksDB, ZeroMQ) are missing, and
 * the reason says which.
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe } from 'vitest';
import { executable, locateBitcoind, onPath, realNodeRequired } from './bitcoind-locate.js';

export const HOW_TO_RUN_FULCRUM = 'FULCRUM=/path/to/Fulcrum BITCOIND=/path/to/bitcoind npm test   (Fulcrum 1.9 or newer)';

export type LocatedFulcrum =
  | { ok: true; path: string; version: string }
  /** `explicit`: FULCRUM was set, so the problem is a configuration error, not an absent server. */
  | { ok: false; reason: string; explicit: boolean };

const BESIDE_REPOSITORY = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../../shared/bin/Fulcrum');

let cached: LocatedFulcrum | undefined;

export function locateFulcrum(): LocatedFulcrum {
  if (cached) return cached;
  const fromEnv = process.env.FULCRUM?.trim();
  const explicit = fromEnv !== undefined && fromEnv !== '';
  const path = explicit ? fromEnv : executable(BESIDE_REPOSITORY) ? BESIDE_REPOSITORY : onPath('Fulcrum');
  if (!path) return (cached = { ok: false, reason: `no Fulcrum: FULCRUM is not set, ${BESIDE_REPOSITORY} is absent and there is none on the PATH`, explicit });
  if (!executable(path)) return (cached = { ok: false, reason: `FULCRUM=${path} is not an executable file`, explicit });
  const run = spawnSync(path, ['--version'], { encoding: 'utf8', timeout: 10_000 });
  const match = /Fulcrum (\d+\.\d+(?:\.\d+)?)/.exec(run.stdout ?? '');
  if (run.status !== 0 || !match) {
    // The dynamic loader names the missing library on stderr ("libQt5Network.so.5: cannot open shared object file").
    const said = (run.stderr || run.stdout || run.error?.message || '').trim().split('\n')[0];
    return (cached = { ok: false, reason: `${path} --version did not report a Fulcrum version (${said}); its libraries: apt-get install -y librocksdb7.8 libzmq5 libqt5network5`, explicit });
  }
  return (cached = { ok: true, path, version: match[1]! });
}

/**
 * `describe` for the tests against a real Fulcrum over a real Bitcoin Core: skipped (with a notice) only when one
 * of them is missing and the run is not CI; under CI a missing or unusable one fails the file.
 */
export function describeWithFulcrum(name: string, body: () => void): void {
  const fulcrum = locateFulcrum();
  const bitcoind = locateBitcoind();
  const missing = [fulcrum, bitcoind].filter((l) => !l.ok).map((l) => (l as { reason: string }).reason);
  if (missing.length > 0 && (realNodeRequired() || (!fulcrum.ok && fulcrum.explicit))) {
    throw new Error(`The Electrum tests cannot run: ${missing.join('; ')}. Run them with ${HOW_TO_RUN_FULCRUM}`);
  }
  if (missing.length > 0) process.stdout.write(`\n!!! ${name}: did NOT run: ${missing.join('; ')}. Run with: ${HOW_TO_RUN_FULCRUM}\n`);
  describe.runIf(missing.length === 0)(name, body);
}
