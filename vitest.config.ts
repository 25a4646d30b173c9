import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Says whether the real-node tests (test/integration/bitcoind/) run, and fails CI without a bitcoind.
    globalSetup: ['test/support/bitcoind-global-setup.ts'],
  },
});
