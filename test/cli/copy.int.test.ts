/**
 * `reloop copy` between a file store and PostgreSQL, with the golden logs: every copy verifies,
 * and a log that went file → PostgreSQL → file comes back byte for byte (jsonb never touches
 * the text that is read back).
 */
import { spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { importTranscripts } from '../../src/import/index.ts';
import { openFileStore } from '../../src/store/fileStore.ts';
import { Transcript, text, toolUse } from '../support/claudeCodeTranscript.ts';
import { CLI_BIN, jsonLines, runCli } from '../support/cli.ts';
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

/**
 * Issue 18, item 17: a copy killed with -9 half-way left a prefix in the target, which listed as
 * `interrupted` until copied again. Now each session lands whole or not at all (file target: a
 * temporary file linked into place; PostgreSQL: one transaction).
 */
describePg('a copy killed with -9 leaves the target as it was', () => {
  let source: string;
  let session: string;
  let records: number;
  beforeAll(async () => {
    db ??= await createTestDatabase();
    source = path.join(root, 'kill-source');
    const t = new Transcript({ sessionId: 'big' });
    t.prompt('read them all');
    for (let i = 0; i < 1_000; i++) {
      t.assistant([toolUse(`toolu_${i}`, 'Read', { file_path: `f${i}.txt` })]);
      t.toolResult(`toolu_${i}`, `${i}:${'x'.repeat(1_500)}`);
    }
    t.assistant([text('done')]);
    const file = path.join(root, 'big.jsonl');
    await writeFile(file, t.jsonl());
    const store = await openFileStore(source);
    try {
      const report = await importTranscripts(store, [file]);
      session = report.sessions[0]!.sessionId;
      records = report.sessions[0]!.records;
    } finally {
      await store.close();
    }
  }, SLOW);

  /** Starts `reloop copy` and SIGKILLs it as soon as `writing()` says the target is being written. */
  async function killWhileWriting(to: string, writing: () => Promise<boolean>): Promise<boolean> {
    const child = spawn(process.execPath, [CLI_BIN, 'copy', '--from', source, '--to', to], {
      cwd: root,
      stdio: 'ignore',
    });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    let caught = false;
    while (child.exitCode === null) {
      if (await writing()) {
        child.kill('SIGKILL');
        caught = true;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await exited;
    return caught;
  }

  /** The target's sessions: none, or the whole log (never a prefix, never `interrupted`). */
  async function expectAbsentOrWhole(to: string): Promise<void> {
    const rows = jsonLinesOf<{ id: string; status: string; lastSeq: number }[]>(
      await runCli(['sessions', '--store', to, '--json'], { cwd: root }),
    );
    for (const row of rows) expect(row).toMatchObject({ id: session, lastSeq: records, status: 'completed' });
    const again = await runCli(['copy', '--from', source, '--to', to, '--json'], { cwd: root });
    expect(again.code, again.stderr).toBe(0);
    expect(jsonLines(again.stdout)).toMatchObject([{ session, records, verified: true }]);
  }

  it(
    'into a file store',
    async () => {
      const to = path.join(root, 'kill-target');
      const dir = path.join(to, 'sessions');
      const caught = await killWhileWriting(to, async () => {
        const names = await readdir(dir).catch(() => [] as string[]);
        if (names.some((f) => f.endsWith('.tmp'))) return true;
        // A stream appended to in pieces (what a copy did before) is caught after its first one.
        return ((await stat(path.join(dir, `${session}.jsonl`)).catch(() => null))?.size ?? 0) > 0;
      });
      expect(caught).toBe(true);
      await expectAbsentOrWhole(to);
    },
    SLOW,
  );

  it(
    'into PostgreSQL',
    async () => {
      await db.truncate();
      const dbName = new URL(db.url).pathname.slice(1);
      const pgc = new pg.Client({ connectionString: db.url });
      await pgc.connect();
      try {
        const caught = await killWhileWriting(db.url, async () => {
          const res = await pgc
            .query<{ n: string }>(
              `SELECT (SELECT count(*) FROM pg_stat_activity
                      WHERE datname = $1 AND state = 'active' AND query LIKE '%append_group%'
                        AND pid <> pg_backend_pid())
                  + (SELECT count(*) FROM reloop.sessions WHERE last_seq > 0) AS n`,
              [dbName],
            )
            .catch(() => ({ rows: [{ n: '0' }] }));
          return Number(res.rows[0]?.n ?? 0) > 0;
        });
        expect(caught).toBe(true);
      } finally {
        await pgc.end();
      }
      await expectAbsentOrWhole(db.url);
    },
    SLOW,
  );
});

function jsonLinesOf<T>(r: { stdout: string }): T {
  return JSON.parse(r.stdout) as T;
}
