import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onlyJson, runCli } from '../support/cli.ts';
import { createTestDatabase, describePg, type TestDatabase } from '../support/postgres.ts';

const SLOW = 120_000;
let root: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'reloop-store-init-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('reloop store init', () => {
  it(
    'creates a file store directory',
    async () => {
      const dir = path.join(root, 'files');
      const r = await runCli(['store', 'init', '--store', dir, '--json'], { cwd: root });
      expect(onlyJson(r)).toEqual({ kind: 'file', dir });
      expect((await stat(path.join(dir, 'sessions'))).isDirectory()).toBe(true);
    },
    SLOW,
  );
});

let db: TestDatabase | undefined;
describePg('reloop store init on PostgreSQL', () => {
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it(
    'creates the schema once, then finds it up to date; an unreachable server is one clear line',
    async () => {
      const first = await runCli(['store', 'init', '--store', db!.url, '--json'], { cwd: root });
      expect(onlyJson(first)).toMatchObject({ kind: 'postgres', from: 0, to: 2 });
      const again = await runCli(['store', 'init', '--store', db!.url], { cwd: root });
      expect(again.stdout).toMatch(/schema version 2, up to date/);
      const down = await runCli(['sessions', '--store', 'postgres://me:pw@127.0.0.1:1/none'], { cwd: root });
      expect(down.code).toBe(1);
      expect(down.stderr.trim().split('\n')).toHaveLength(1);
      expect(down.stderr).toMatch(
        /cannot use the PostgreSQL store postgres:\/\/me:\*\*\*@127\.0\.0\.1:1\/none.*\[STORE_UNAVAILABLE\]/,
      );
    },
    SLOW,
  );
});
