import pg from 'pg';
import type { TestProject } from 'vitest/node';

/**
 * Once per `vitest run`: is there a PostgreSQL server for the PostgreSQL suites? Its URL comes
 * from $RELOOP_TEST_PG (.ci/run sets it) or the machine's default cluster. Without one, those
 * suites are skipped, and this says so in one line; nothing else is skipped.
 */
export const DEFAULT_TEST_PG = 'postgres://postgres@127.0.0.1:5432/postgres';

declare module 'vitest' {
  export interface ProvidedContext {
    pgUrl: string | null;
  }
}

export default async function setup(project: TestProject): Promise<void> {
  const url = process.env.RELOOP_TEST_PG || DEFAULT_TEST_PG;
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    project.provide('pgUrl', url);
  } catch (e) {
    console.warn(
      `\n!!! PostgreSQL not reachable at ${url} (${(e as Error).message}): the PostgreSQL suites are SKIPPED (set RELOOP_TEST_PG or run .ci/run) !!!\n`,
    );
    project.provide('pgUrl', null);
  } finally {
    await client.end().catch(() => undefined);
  }
}
