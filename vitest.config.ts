import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (file: string) => fileURLToPath(new URL(`./src/${file}`, import.meta.url));

export default defineConfig({
  resolve: {
    // Tests written as a user writes them (`from 'reloop/testing'`) run against the source.
    alias: [
      { find: /^reloop\/testing$/, replacement: src('testing/index.ts') },
      { find: /^reloop\/otel$/, replacement: src('otel/index.ts') },
      { find: /^reloop$/, replacement: src('index.ts') },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    // The CLI tests spawn bin/reloop.js, which runs dist/: built once here from src/. Then: is
    // there a PostgreSQL server for the PostgreSQL suites? Checked once per run. And a scratch
    // home: no test reads the real ~/.claude (scratchHome.ts).
    globalSetup: [
      'test/support/buildDist.ts',
      'test/support/pgGlobalSetup.ts',
      'test/support/scratchHome.ts',
    ],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
  },
});
