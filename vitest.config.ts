import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    // One test file per core. Vitest's default leaves a core free (one file at a time on two cores), but most
    // files spend their time waiting for the processes they start (services, CLI commands, bitcoind, Chromium).
    // Files share nothing: each has its own folders, ports, PostgreSQL schema and node.
    maxWorkers: availableParallelism(),
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Says whether the real-node tests (test/integration/bitcoind/) run, and fails CI without a bitcoind.
    globalSetup: ['test/support/bitcoind-global-setup.ts'],
  },
});
