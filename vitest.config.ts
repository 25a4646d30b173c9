import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

/**
 * The files that hold the service to a time bound (a liveness probe answered within 100 ms while a large request
 * runs). They run after the rest, one at a time: beside another test file on two cores, a run measures the other
 * file's load as much as the service's.
 */
const TIME_BOUND_FILES = ['test/integration/request-isolation.test.ts', 'test/integration/derivation-isolation.test.ts'];

export default defineConfig({
  test: {
    pool: 'forks',
    // One test file per core. Vitest's default leaves a core free (one file at a time on two cores), but most
    // files spend their time waiting for the processes they start (services, CLI commands, bitcoind, Chromium).
    // Files share nothing: each has its own folders, ports, PostgreSQL schema and node.
    maxWorkers: availableParallelism(),
    testTimeout: 60_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'suite',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...TIME_BOUND_FILES],
          // Say whether the real-node and Electrum tests run, and fail CI without a bitcoind or a Fulcrum.
          globalSetup: ['test/support/bitcoind-global-setup.ts', 'test/support/fulcrum-global-setup.ts'],
          sequence: { groupOrder: 0 },
        },
      },
      ...TIME_BOUND_FILES.map((file, i) => ({ extends: true as const, test: { name: `time-bound-${i + 1}`, include: [file], sequence: { groupOrder: i + 1 } } })),
    ],
  },
});
