/**
 * Issue 21: a worker resuming a session whose recorded setup differs from what the run spec offers
 * refuses (SETUP_CHANGED, visible in `sessions`), unless the run was submitted with
 * `--accept-setup-change`. The real CLI throughout: submit, worker, submit --resume, sessions.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { openPostgresStore, type PostgresEventStore } from '../../src/store/postgres/index.ts';
import { jsonLines, onlyJson, runCli } from '../support/cli.ts';
import { createTestDatabase, describePg, type TestDatabase } from '../support/postgres.ts';

let db: TestDatabase;
let store: PostgresEventStore;
let root: string;

describePg('a worker resuming a session recorded with another setup', () => {
  beforeAll(async () => {
    db = await createTestDatabase();
    store = await openPostgresStore(db.url);
    root = await mkdtemp(path.join(tmpdir(), 'reloop-setup-'));
  });
  beforeEach(async () => {
    await db.truncate();
  });
  afterAll(async () => {
    await store?.close();
    await db?.drop();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('is refused with SETUP_CHANGED; with submit --accept-setup-change it runs', async () => {
    const cwd = await mkdtemp(path.join(root, 'p-'));
    const script = path.join(cwd, 'script.json');
    const text = (t: string) => ({ text: t, stop_reason: 'end_turn' });
    await writeFile(script, JSON.stringify({ turns: [text('one'), text('two'), text('three')] }));
    const worker = () =>
      runCli(['worker', '--store', db.url, '--exit-when-idle', '--json'], { cwd, timeoutMs: 120_000 });
    const base = ['--store', db.url, '--script', script, '--setting-sources', '', '--json'];

    const first = await runCli(['submit', ...base, 'First.'], { cwd });
    expect(first.code, first.stderr).toBe(0);
    const { sessionId } = onlyJson<{ sessionId: string }>(first);
    expect((await worker()).code).toBe(0);
    const runs = async () => {
      let n = 0;
      for await (const r of store.read(sessionId)) if (r.type === 'run.ended') n++;
      return n;
    };
    expect(await runs()).toBe(1);

    // Another tool set than the session recorded: the worker does not run it.
    const changed = await runCli(['submit', ...base, '--tools', 'Read', '--resume', sessionId, 'Second.'], {
      cwd,
    });
    expect(changed.code, changed.stderr).toBe(0);
    const refused = await worker();
    const failed = jsonLines<{ type: string; message?: string }>(refused.stdout).find(
      (e) => e.type === 'failed',
    );
    expect(failed?.message, refused.stdout + refused.stderr).toMatch(
      /tools: .*missing.*\[?SETUP_CHANGED|SETUP_CHANGED|recorded with another setup/,
    );
    expect(await runs()).toBe(1);

    const accepted = await runCli(
      ['submit', ...base, '--tools', 'Read', '--accept-setup-change', '--resume', sessionId, 'Third.'],
      { cwd },
    );
    expect(accepted.code, accepted.stderr).toBe(0);
    expect((await worker()).code).toBe(0);
    expect(await runs()).toBe(2);
  }, 300_000);
});
