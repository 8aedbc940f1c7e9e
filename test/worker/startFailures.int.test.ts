/**
 * Issue 18, item 11: a worker started without model credentials (`reloop worker --exit-when-idle`
 * with no ANTHROPIC_API_KEY) claimed a queued run, printed `failed …: No Anthropic API key`, exited
 * 0 and left a blank idle session whose prompt was gone (the error only in the jobs table). Now the
 * worker checks its model before it claims: the run stays queued, the worker says why and exits 1.
 * A run that cannot start for another reason is done with its error shown by `sessions` and `log`,
 * and its prompt is kept. The real CLI throughout: submit, worker, sessions, log.
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

describePg('a worker that cannot start a run', () => {
  beforeAll(async () => {
    db = await createTestDatabase();
    store = await openPostgresStore(db.url);
    root = await mkdtemp(path.join(tmpdir(), 'reloop-start-'));
  });
  beforeEach(async () => {
    await db.truncate();
  });
  afterAll(async () => {
    await store?.close();
    await db?.drop();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('no ANTHROPIC_API_KEY: the worker claims nothing, the run stays queued with its prompt, exit 1 [NO_MODEL]', async () => {
    const cwd = await mkdtemp(path.join(root, 'nokey-'));
    const submit = await runCli(['submit', '--store', db.url, '--json', 'Say hello.'], { cwd });
    expect(submit.code, submit.stderr).toBe(0);
    const { sessionId } = onlyJson<{ sessionId: string }>(submit);

    // runCli's environment has no ANTHROPIC_* at all.
    const worker = await runCli(['worker', '--store', db.url, '--exit-when-idle', '--json'], {
      cwd,
      timeoutMs: 120_000,
    });
    expect(worker.code, worker.stdout + worker.stderr).toBe(1);
    expect(worker.stderr).toMatch(/1 queued run needs a model.*they stay queued \[NO_MODEL\]/);
    const events = jsonLines<{ type: string; queued?: number }>(worker.stdout);
    expect(events.map((e) => e.type)).toEqual(['no-model', 'left']);
    expect(events[1]!.queued).toBe(1);

    const job = await store.runQueue.get(sessionId);
    expect(job).toMatchObject({ state: 'queued', prompt: 'Say hello.', attempts: 0 });
    const rows = onlyJson<{ id: string; status: string; job?: { state: string } }[]>(
      await runCli(['sessions', '--store', db.url, '--json'], { cwd }),
    );
    expect(rows.find((r) => r.id === sessionId)?.job?.state).toBe('queued');
    // Nothing was written to the session: it is the one record submit wrote.
    expect(await store.lastSeq(sessionId)).toBe(1);
  }, 180_000);

  it('a scripted run that cannot start (its settings file went bad after submit): done, the error in `sessions` and `log`, the prompt kept', async () => {
    const cwd = await mkdtemp(path.join(root, 'nostart-'));
    const script = path.join(cwd, 'script.json');
    await writeFile(script, JSON.stringify({ turns: [{ text: 'hi', stop_reason: 'end_turn' }] }));
    const settings = path.join(cwd, 'settings.json');
    await writeFile(settings, '{}');
    const submit = await runCli(
      ['submit', '--store', db.url, '--script', script, '--settings', settings, '--json', 'Go on.'],
      { cwd },
    );
    expect(submit.code, submit.stderr).toBe(0);
    const { sessionId } = onlyJson<{ sessionId: string }>(submit);
    // Between submit and the worker the settings file is broken: the worker cannot build the run.
    await writeFile(settings, '{ not json');

    const worker = await runCli(['worker', '--store', db.url, '--exit-when-idle', '--json'], {
      cwd,
      timeoutMs: 120_000,
    });
    expect(worker.code, worker.stdout + worker.stderr).toBe(0);
    const failed = jsonLines<{ type: string; session?: string; started?: boolean; message?: string }>(
      worker.stdout,
    ).find((e) => e.type === 'failed');
    expect(failed).toMatchObject({ session: sessionId, started: false });

    const sessions = await runCli(['sessions', '--store', db.url], { cwd });
    const line = sessions.stdout.split('\n').find((l) => l.startsWith(sessionId)) ?? '';
    expect(line).toContain('[failed to start: ');
    expect(line).toContain(failed!.message!.slice(0, 40));
    const rows = onlyJson<{ id: string; job?: { state: string; startError?: string } }[]>(
      await runCli(['sessions', '--store', db.url, '--json'], { cwd }),
    );
    expect(rows.find((r) => r.id === sessionId)?.job).toMatchObject({
      state: 'done',
      startError: failed!.message,
    });

    const log = await runCli(['log', sessionId, '--store', db.url], { cwd });
    expect(log.code, log.stderr).toBe(0);
    expect(log.stdout).toContain(`the queued run could not start: ${failed!.message}`);
    expect(log.stdout).toContain('its prompt was never given: "Go on."');
    expect((await store.runQueue.get(sessionId))?.prompt).toBe('Go on.');
  }, 180_000);
});
