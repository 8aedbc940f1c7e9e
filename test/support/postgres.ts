import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, inject } from 'vitest';

/** The test server's URL, or null when there is none (the suites using it are skipped). */
export const PG_URL: string | null = inject('pgUrl');

/** `describe`, skipped when there is no PostgreSQL server (pgGlobalSetup said so, once). */
export const describePg: typeof describe = (PG_URL ? describe : describe.skip) as typeof describe;

export interface TestDatabase {
  url: string;
  /** Empties reloop's tables (between tests of one file). */
  truncate(): Promise<void>;
  drop(): Promise<void>;
}

/**
 * A database of its own for one test file (`reloop_test_<random>`): other helpers and test files
 * use the same server at the same time. Dropped by `drop()`, connections and all.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  if (!PG_URL) throw new Error('no PostgreSQL server for the tests');
  const name = `reloop_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const u = new URL(PG_URL);
  u.pathname = `/${name}`;
  const url = u.toString();
  return {
    url,
    async truncate() {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        const exists = await c.query(`SELECT to_regclass('reloop.records') AS t`);
        if (exists.rows[0]?.t) await c.query('TRUNCATE reloop.records, reloop.sessions, reloop.jobs');
      } finally {
        await c.end();
      }
    },
    async drop() {
      const c = new pg.Client({ connectionString: PG_URL! });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
