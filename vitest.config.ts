import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    // Is there a PostgreSQL server for the PostgreSQL suites? Checked once per run.
    globalSetup: ['test/support/pgGlobalSetup.ts'],
  },
});
