/**
 * Issue 18, item 6: on PostgreSQL, `run --resume <id>` while a worker held the session (its tool
 * still running) closed the worker's live run as `interrupted` and ran its own turn; two
 * `run --resume` at once ran the resumed tool twice. Now every process that drives a session
 * takes the same lease (the job row, renewed by heartbeat): `run --resume` is refused with
 * SESSION_LOCKED while a live holder renews it, and a run is closed as interrupted only once its
 * holder's lease lapsed. Real processes throughout (workers, `run --resume`, `kill -9`); every
 * tool counts itself by appending its own line to a file: no line may appear twice.
 */
import { access, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { verifyReplay } from '../../src/replay/verify.ts';
import { openPostgresStore, type PostgresEventStore } from '../../src/store/postgres/index.ts';
import { CURRENT_SCHEMA_VERSION, type LogRecord } from '../../src/store/records.ts';
import type { RunSpec } from '../../src/worker/runSpec.ts';
import { type CliResult, runCli } from '../support/cli.ts';
import { createTestDatabase, describePg, type TestDatabase } from '../support/postgres.ts';
import { startWorkerProcess } from '../support/workerProcess.ts';

let db: TestDatabase;
let store: PostgresEventStore;
let root: string;

async function until(check: () => Promise<boolean>, what: string, ms = 120_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const lines = async (file: string): Promise<string[]> =>
  (await readFile(file, 'utf8').catch(() => '')).split('\n').filter((l) => l !== '');

function bash(id: string, command: string) {
  return {
    content: [{ type: 'tool_use', id, name: 'Bash', input: { command } }],
    stop_reason: 'tool_use',
  };
}

/** A worker's job: its first tool writes `w1` and waits for the file `go`; then `w2`; then done. */
function workerSpec(dir: string, counter: string): RunSpec {
  const go = path.join(dir, 'go');
  return {
    script: {
      file: 'worker.json',
      content: {
        turns: [
          bash('toolu_w1', `echo w1 >> ${counter}; while [ ! -e ${go} ]; do sleep 0.1; done`),
          bash('toolu_w2', `echo w2 >> ${counter}`),
          { text: 'worker done', stop_reason: 'end_turn' },
        ],
      },
    },
    cwd: dir,
    permissionMode: 'bypassPermissions',
    allow: [],
    deny: [],
    stopHook: [],
    passEnv: [],
    onAsk: 'park',
    agentsDir: [],
  };
}

/** The script of one `run --resume`: one tool writing its own name, then done. */
async function resumerScript(dir: string, name: string, counter: string): Promise<string> {
  const file = path.join(dir, `${name}.json`);
  await writeFile(
    file,
    JSON.stringify({
      turns: [
        bash(`toolu_${name}`, `echo ${name} >> ${counter}`),
        { text: `${name} done`, stop_reason: 'end_turn' },
      ],
    }),
  );
  return file;
}

function resume(dir: string, session: string, script: string): Promise<CliResult> {
  return runCli(
    [
      'run',
      '--resume',
      session,
      '--store',
      db.url,
      '--script',
      script,
      '--permission-mode',
      'bypassPermissions',
    ],
    { cwd: dir, timeoutMs: 180_000 },
  );
}

async function queueSession(id: string, dir: string, counter: string): Promise<void> {
  const created = {
    v: CURRENT_SCHEMA_VERSION,
    seq: 1,
    at: Date.now(),
    session: id,
    run: null,
    type: 'session.created',
    data: { cwd: dir },
  } as LogRecord;
  await store.append(id, [created], { expectedSeq: 0 });
  await store.runQueue.enqueue(id, workerSpec(dir, counter), 'go', 1);
}

async function logOf(id: string): Promise<LogRecord[]> {
  const log: LogRecord[] = [];
  for await (const r of store.read(id)) log.push(r);
  return log;
}

/** Every tool started once per call, and the log verifies. */
async function checkLog(id: string): Promise<LogRecord[]> {
  const log = await logOf(id);
  const report = await verifyReplay(log);
  expect(report.ok, JSON.stringify(report.divergence)).toBe(true);
  const started = log.filter((r) => r.type === 'tool.started').map((r) => r.data.toolUseId);
  expect(started.length).toBe(new Set(started).size);
  return log;
}

describePg('one lease per session on PostgreSQL', () => {
  beforeAll(async () => {
    db = await createTestDatabase();
    store = await openPostgresStore(db.url);
    root = await mkdtemp(path.join(tmpdir(), 'reloop-lease-'));
  });
  beforeEach(async () => {
    await db.truncate();
  });
  afterAll(async () => {
    await store?.close();
    await db?.drop();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('run --resume ×2 while a worker holds the session: both SESSION_LOCKED, the worker finishes, no tool twice', async () => {
    const dir = await mkdtemp(path.join(root, 'live-'));
    const counter = path.join(dir, 'counter.log');
    await queueSession('held-1', dir, counter);
    const worker = startWorkerProcess([
      '--store',
      db.url,
      '--lease-seconds',
      '2',
      '--exit-when-idle',
      '--id',
      'w-a',
    ]);
    try {
      await worker.until((e) => e.type === 'claimed');
      // The worker's first tool is running (and stays so until `go` exists).
      await until(async () => (await lines(counter)).includes('w1'), 'the worker’s tool to start');
      const [r1, r2] = await Promise.all([
        resume(dir, 'held-1', await resumerScript(dir, 'R1', counter)),
        resume(dir, 'held-1', await resumerScript(dir, 'R2', counter)),
      ]);
      for (const r of [r1, r2]) {
        expect(r.code, r.stdout + r.stderr).toBe(1);
        expect(r.stderr).toMatch(/worker w-a, its lease renewed until .*\[SESSION_LOCKED\]/);
      }
      // `sessions` says who holds it.
      const listed = await runCli(['sessions', '--store', db.url], { cwd: dir });
      expect(listed.stdout).toMatch(/held-1 +running .*\[held by w-a\]/);
      await writeFile(path.join(dir, 'go'), '');
      expect(await worker.exit, worker.stderr()).toEqual({ code: 0, signal: null });
    } finally {
      await writeFile(path.join(dir, 'go'), '');
      worker.child.kill('SIGKILL');
    }
    expect(await lines(counter)).toEqual(['w1', 'w2']);
    const row = (await store.list()).find((r) => r.id === 'held-1');
    expect([row?.status, row?.job?.state]).toEqual(['completed', 'done']);
    const log = await checkLog('held-1');
    expect(log.filter((r) => r.type === 'run.ended').map((r) => r.data.reason)).toEqual(['completed']);
  }, 300_000);

  it('a worker killed mid-tool, then two workers and two run --resume racing: one takes it over, the dead run is closed once, no tool twice', async () => {
    const dir = await mkdtemp(path.join(root, 'race-'));
    const counter = path.join(dir, 'counter.log');
    await queueSession('race-1', dir, counter);
    const victim = startWorkerProcess(['--store', db.url, '--lease-seconds', '2', '--id', 'victim']);
    await victim.until((e) => e.type === 'claimed');
    await until(async () => (await lines(counter)).includes('w1'), 'the victim’s tool to start');
    victim.child.kill('SIGKILL');
    await victim.exit;
    // From here the tool may finish (its shell outlived the worker): it must not run again.
    await writeFile(path.join(dir, 'go'), '');

    const args = ['--store', db.url, '--lease-seconds', '2', '--exit-when-idle'];
    const workers = ['x1', 'x2'].map((id) => startWorkerProcess([...args, '--id', id]));
    const resumers = await Promise.all([
      resume(dir, 'race-1', await resumerScript(dir, 'R1', counter)),
      resume(dir, 'race-1', await resumerScript(dir, 'R2', counter)),
    ]);
    for (const w of workers) expect(await w.exit, w.stderr()).toEqual({ code: 0, signal: null });
    for (const r of resumers) {
      // Either it drove the session (after the dead worker's lease lapsed) or it was refused.
      if (r.code !== 0) expect(r.stderr, r.stdout).toMatch(/\[SESSION_LOCKED\]/);
    }

    const seen = await lines(counter);
    expect(seen.length, seen.join(',')).toBe(new Set(seen).size);
    expect(seen.filter((l) => l === 'w1')).toEqual(['w1']);
    const log = await checkLog('race-1');
    const ends = log.filter((r) => r.type === 'run.ended').map((r) => r.data.reason);
    expect(ends.filter((r) => r === 'interrupted')).toHaveLength(1);
    expect(ends.at(-1)).toBe('completed');
    const row = (await store.list()).find((r) => r.id === 'race-1');
    expect([row?.status, row?.job?.state]).toEqual(['completed', 'done']);
    await access(counter);
    console.log(
      `lease race: ${resumers.filter((r) => r.code === 0).length} of 2 run --resume drove the session, ${workers.filter((w) => w.events.some((e) => e.type === 'claimed')).length} of 2 workers claimed it; runs ${ends.join(', ')}`,
    );
  }, 300_000);
});
