/**
 * `reloop copy` between a file store and PostgreSQL, with the golden logs: every copy verifies,
 * and a log that went file → PostgreSQL → file comes back byte for byte (jsonb never touches
 * the text that is read back).
 */
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { jsonLines, runCli } from '../support/cli.ts';
import { createTestDatabase, describePg, type TestDatabase } from '../support/postgres.ts';

const GOLDEN = path.join(import.meta.dirname, '../fixtures/logs');
const SLOW = 180_000;

let db: TestDatabase;
let root: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'reloop-copy-'));
});
afterAll(async () => {
  await db?.drop();
  await rm(root, { recursive: true, force: true });
});

describePg('reloop copy', () => {
  beforeAll(async () => {
    db = await createTestDatabase();
  });

  it(
    'file → PostgreSQL → file: every golden log verifies in both stores and comes back byte for byte',
    async () => {
      const goldens = (await readdir(GOLDEN)).filter((f) => f.endsWith('.jsonl'));
      expect(goldens.length).toBeGreaterThanOrEqual(4);
      for (const golden of goldens) {
        await db.truncate();
        const text = await readFile(path.join(GOLDEN, golden), 'utf8');
        const session = (JSON.parse(text.slice(0, text.indexOf('\n'))) as { session: string }).session;
        const from = path.join(root, `${golden}-from`);
        const back = path.join(root, `${golden}-back`);
        await mkdir(path.join(from, 'sessions'), { recursive: true });
        await copyFile(path.join(GOLDEN, golden), path.join(from, 'sessions', `${session}.jsonl`));

        const there = await runCli(['copy', '--from', from, '--to', db.url, '--json'], { cwd: root });
        expect(there.code, there.stderr).toBe(0);
        const lines = text.trim().split('\n').length;
        expect(jsonLines(there.stdout)).toEqual([
          { session, outcome: 'copied', records: lines, appended: lines, verified: true },
        ]);
        const again = await runCli(['copy', '--from', from, '--to', db.url, '--json'], { cwd: root });
        expect(jsonLines(again.stdout)).toMatchObject([{ outcome: 'present', appended: 0, verified: true }]);

        const home = await runCli(['copy', '--from', db.url, '--to', back, '--json'], { cwd: root });
        expect(home.code, home.stderr).toBe(0);
        expect(jsonLines(home.stdout)).toMatchObject([{ session, outcome: 'copied', verified: true }]);
        expect(await readFile(path.join(back, 'sessions', `${session}.jsonl`), 'utf8')).toBe(text);
      }
    },
    SLOW,
  );

  it(
    'refuses a target whose log differs, and says which seq',
    async () => {
      await db.truncate();
      const golden = 'v1-demo.jsonl';
      const text = await readFile(path.join(GOLDEN, golden), 'utf8');
      const session = (JSON.parse(text.slice(0, text.indexOf('\n'))) as { session: string }).session;
      const a = path.join(root, 'differs-a');
      await mkdir(path.join(a, 'sessions'), { recursive: true });
      // The target gets a log whose first record differs (another title), the source the golden.
      const first = JSON.parse(text.slice(0, text.indexOf('\n'))) as { data: { title: string } };
      first.data.title = 'something else';
      await mkdir(path.join(root, 'differs-b', 'sessions'), { recursive: true });
      await writeFile(
        path.join(root, 'differs-b', 'sessions', `${session}.jsonl`),
        `${JSON.stringify(first)}\n`,
      );
      await copyFile(path.join(GOLDEN, golden), path.join(a, 'sessions', `${session}.jsonl`));
      const seed = await runCli(['copy', '--from', path.join(root, 'differs-b'), '--to', db.url], {
        cwd: root,
      });
      expect(seed.code, seed.stderr).toBe(0);
      const r = await runCli(['copy', '--from', a, '--to', db.url, '--json'], { cwd: root });
      expect(r.code).toBe(1);
      expect(jsonLines(r.stdout)).toMatchObject([
        { session, outcome: 'failed', error: "the target's log differs at seq 1" },
      ]);
    },
    SLOW,
  );
});
