/**
 * Issue 18, item 7 (the worker's part): a run that threw with its run still open in the log (a
 * commit of `run.ended` failed) made the worker mark the job `done` while `sessions` showed the
 * session `running` forever. Now the job is queued again and the next claim closes the run as
 * interrupted and resumes it; a run that keeps failing open is closed by the worker after three
 * claims. A real PostgreSQL store and the real worker loop; the fault is in the store's append
 * (the database refusing one commit), not a stand-in for the database.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { verifyReplay } from '../../src/replay/verify.ts';
import { openPostgresStore, type PostgresEventStore } from '../../src/store/postgres/index.ts';
import { CURRENT_SCHEMA_VERSION, type LogRecord } from '../../src/store/records.ts';
import type { EventStore } from '../../src/store/types.ts';
import type { RunSpec } from '../../src/worker/runSpec.ts';
import { runWorker, type WorkerEvent } from '../../src/worker/worker.ts';
import { createTestDatabase, describePg, type TestDatabase } from '../support/postgres.ts';

let db: TestDatabase;
let store: PostgresEventStore;
let dir: string;

/** The store, except that the first `times` appends holding a run's own end (not an interrupted close) fail. */
function runEndFails(inner: PostgresEventStore, times: number): { store: EventStore; failed: () => number } {
  let failed = 0;
  const store = new Proxy(inner, {
    get(target, key) {
      if (key === 'append') {
        return async (session: string, records: readonly LogRecord[], options: { expectedSeq: number }) => {
          const ends = records.some((r) => r.type === 'run.ended' && r.data.reason !== 'interrupted');
          if (ends && failed < times) {
            failed++;
            throw new Error('injected: the commit of run.ended failed');
          }
          return target.append(session, records, options);
        };
      }
      const v = Reflect.get(target, key, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { store, failed: () => failed };
}

async function queue(id: string): Promise<void> {
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
  const spec: RunSpec = {
    script: {
      file: 'two.json',
      content: {
        turns: [
          { text: 'first answer', stop_reason: 'end_turn' },
          { text: 'answer after the resume', stop_reason: 'end_turn' },
        ],
      },
    },
    cwd: dir,
    permissionMode: 'default',
    allow: [],
    deny: [],
    stopHook: [],
    passEnv: [],
    onAsk: 'park',
    agentsDir: [],
  };
  await store.runQueue.enqueue(id, spec, 'hello', 1);
}

async function work(s: EventStore): Promise<WorkerEvent[]> {
  const events: WorkerEvent[] = [];
  await runWorker({
    store: s,
    queue: store.runQueue,
    id: 'w-open',
    leaseMs: 30_000,
    exitWhenIdle: true,
    modelAvailable: true,
    drain: new AbortController().signal,
    onEvent: (e) => events.push(e),
  });
  return events;
}

async function logOf(id: string): Promise<LogRecord[]> {
  const log: LogRecord[] = [];
  for await (const r of store.read(id)) log.push(r);
  return log;
}

describePg('a worker whose run fails while open', () => {
  beforeAll(async () => {
    db = await createTestDatabase();
    store = await openPostgresStore(db.url);
    dir = await mkdtemp(path.join(tmpdir(), 'reloop-openrun-'));
  });
  beforeEach(async () => {
    await db.truncate();
  });
  afterAll(async () => {
    await store?.close();
    await db?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('one failed commit of run.ended: the job is queued again, not done; the run is closed and resumed', async () => {
    await queue('open-1');
    const faulty = runEndFails(store, 1);
    const events = await work(faulty.store);
    expect(faulty.failed()).toBe(1);
    expect(events.map((e) => e.type)).toEqual(['claimed', 'failed', 'requeued', 'claimed', 'finished']);

    const row = (await store.list()).find((r) => r.id === 'open-1');
    expect(row?.status).toBe('completed');
    expect(row?.job?.state).toBe('done');
    const log = await logOf('open-1');
    const ends = log.filter((r) => r.type === 'run.ended').map((r) => r.data.reason);
    expect(ends).toEqual(['interrupted', 'completed']);
    expect((await verifyReplay(log)).ok).toBe(true);
  }, 120_000);

  it('a run that keeps failing open: after three claims the worker closes it, then the job is done', async () => {
    await queue('open-2');
    const faulty = runEndFails(store, 1_000);
    const events = await work(faulty.store);
    expect(events.filter((e) => e.type === 'claimed')).toHaveLength(3);
    expect(events.filter((e) => e.type === 'requeued')).toHaveLength(2);

    const row = (await store.list()).find((r) => r.id === 'open-2');
    expect(row?.job?.state).toBe('done');
    // Never `running` with nobody driving it: the last run is closed in the log.
    expect(row?.status).not.toBe('running');
    const log = await logOf('open-2');
    expect(log.at(-1)?.type).toBe('run.ended');
    expect((await verifyReplay(log)).ok).toBe(true);
  }, 120_000);
});
