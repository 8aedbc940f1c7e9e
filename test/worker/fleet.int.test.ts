/**
 * The fleet: three worker processes drain thirty queued sessions of several tool rounds each
 * from one PostgreSQL store, and one worker is killed with SIGKILL while it holds runs. Every
 * session must complete, every log must verify, and no tool that started may run twice —
 * counted by the tool itself: each call appends its own line to a file.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyReplay } from '../../src/replay/verify.ts';
import { openPostgresStore, type PostgresEventStore } from '../../src/store/postgres/index.ts';
import { CURRENT_SCHEMA_VERSION, type LogRecord } from '../../src/store/records.ts';
import type { RunSpec } from '../../src/worker/runSpec.ts';
import { createTestDatabase, describePg, type TestDatabase } from '../support/postgres.ts';
import { startWorkerProcess } from '../support/workerProcess.ts';

const SESSIONS = 30;
const ROUNDS = 3;

let db: TestDatabase;
let store: PostgresEventStore;
let dir: string;

/** Job n: ROUNDS Bash calls, each appending `job<n>-r<i>` to the counter (and taking a moment), then done. */
function spec(n: number, counter: string): RunSpec {
  const turns = [
    ...Array.from({ length: ROUNDS }, (_, i) => ({
      content: [
        {
          type: 'tool_use',
          id: `toolu_${i + 1}`,
          name: 'Bash',
          input: { command: `echo job${n}-r${i + 1} >> ${counter} && sleep 0.2` },
        },
      ],
      stop_reason: 'tool_use',
    })),
    { text: `job ${n} done`, stop_reason: 'end_turn' },
  ];
  return {
    script: { file: `job${n}.json`, content: { turns } },
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

describePg('workers on PostgreSQL', () => {
  beforeAll(async () => {
    db = await createTestDatabase();
    store = await openPostgresStore(db.url);
    dir = await mkdtemp(path.join(tmpdir(), 'reloop-fleet-'));
  });
  afterAll(async () => {
    await store?.close();
    await db?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  describe('a fleet of workers', () => {
    it('3 workers, 30 sessions, one worker SIGKILLed mid-run: all complete, all verify, no tool ran twice', async () => {
      const counter = path.join(dir, 'counter.log');
      const ids: string[] = [];
      for (let n = 0; n < SESSIONS; n++) {
        const id = `fleet-${n}`;
        ids.push(id);
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
        await store.runQueue.enqueue(id, spec(n, counter), `job ${n}`, 1);
      }
      const args = ['--store', db.url, '--concurrency', '4', '--lease-seconds', '2', '--exit-when-idle'];
      const workers = ['w1', 'w2', 'w3'].map((name) => startWorkerProcess([...args, '--id', name]));
      const victim = workers[0]!;
      // Killed while it holds runs: after its third claim, with at least one run finished.
      await victim.until(
        (e) => e.type === 'claimed' && victim.events.filter((x) => x.type === 'claimed').length >= 3,
      );
      await victim.until((e) => e.type === 'finished');
      const held =
        victim.events.filter((e) => e.type === 'claimed').length -
        victim.events.filter((e) => e.type === 'finished').length;
      victim.child.kill('SIGKILL');
      expect((await victim.exit).signal).toBe('SIGKILL');
      for (const w of workers.slice(1)) {
        const exit = await w.exit;
        expect(exit, w.stderr()).toEqual({ code: 0, signal: null });
      }
      expect(held).toBeGreaterThan(0);

      const rows = await store.list();
      expect(rows.filter((r) => ids.includes(r.id)).map((r) => [r.id, r.status, r.job?.state])).toEqual(
        expect.arrayContaining(ids.map((id) => [id, 'completed', 'done'])),
      );
      let interrupted = 0;
      let synthetic = 0;
      const started = new Map<string, number>();
      for (const id of ids) {
        const log: LogRecord[] = [];
        for await (const r of store.read(id)) log.push(r);
        const report = await verifyReplay(log);
        expect(report.ok, `${id}: ${JSON.stringify(report.divergence)}`).toBe(true);
        for (const r of log) {
          if (r.type === 'run.ended' && r.data.reason === 'interrupted') interrupted++;
          if (r.type === 'tool.finished' && r.data.outcome === 'interrupted') synthetic++;
          if (r.type === 'tool.started') {
            const key = `${id}/${r.data.toolUseId}`;
            started.set(key, (started.get(key) ?? 0) + 1);
          }
        }
      }
      console.log(
        `fleet: the victim held ${held} runs when killed; ${interrupted} runs closed as interrupted; ${synthetic} tool calls in flight reported interrupted, not run again`,
      );
      // The kill landed mid-run: the sessions it held were closed as interrupted and resumed.
      expect(interrupted).toBeGreaterThan(0);
      expect([...started.values()].every((n) => n === 1)).toBe(true);
      // The tools' own count: every line at most once.
      const lines = (await readFile(counter, 'utf8')).trim().split('\n');
      const seen = new Map<string, number>();
      for (const l of lines) seen.set(l, (seen.get(l) ?? 0) + 1);
      expect([...seen.entries()].filter(([, n]) => n > 1)).toEqual([]);
      expect(seen.size).toBeGreaterThanOrEqual(SESSIONS * ROUNDS - held * ROUNDS);
      expect(seen.size).toBeLessThanOrEqual(SESSIONS * ROUNDS);
    }, 300_000);
  });

  describe('a worker told to stop', () => {
    it('SIGTERM drains: the runs it holds finish, nothing more is claimed, it exits 0', async () => {
      const counter = path.join(dir, 'drain.log');
      const slow = (n: number): RunSpec => ({
        ...spec(n, counter),
        script: {
          file: `slow${n}.json`,
          content: {
            turns: [
              {
                content: [
                  {
                    type: 'tool_use',
                    id: 'toolu_1',
                    name: 'Bash',
                    input: { command: `sleep 1 && echo slow${n} >> ${counter}` },
                  },
                ],
                stop_reason: 'tool_use',
              },
              { text: 'done', stop_reason: 'end_turn' },
            ],
          },
        },
      });
      for (const n of [1, 2, 3]) {
        const id = `drain-${n}`;
        await store.append(
          id,
          [
            {
              v: CURRENT_SCHEMA_VERSION,
              seq: 1,
              at: Date.now(),
              session: id,
              run: null,
              type: 'session.created',
              data: {},
            } as LogRecord,
          ],
          { expectedSeq: 0 },
        );
        await store.runQueue.enqueue(id, slow(n), 'go', 1);
      }
      const w = startWorkerProcess([
        '--store',
        db.url,
        '--concurrency',
        '2',
        '--lease-seconds',
        '5',
        '--id',
        'drainer',
      ]);
      const claimed = () => w.events.filter((e) => e.type === 'claimed').length;
      await w.until(() => claimed() === 2);
      // `reloop sessions` shows who holds what.
      const held = (await store.list()).filter((r) => r.id.startsWith('drain-'));
      expect(held.filter((r) => r.job?.state === 'claimed').map((r) => r.job?.worker)).toEqual([
        'drainer',
        'drainer',
      ]);
      expect(held.filter((r) => r.job?.state === 'queued')).toHaveLength(1);
      w.child.kill('SIGTERM');
      expect(await w.exit, w.stderr()).toEqual({ code: 0, signal: null });
      expect(w.events.some((e) => e.type === 'draining')).toBe(true);
      const finished = w.events.filter((e) => e.type === 'finished');
      expect(finished.map((e) => e.status)).toEqual(['completed', 'completed']);
      const jobs = await Promise.all([1, 2, 3].map((n) => store.runQueue.get(`drain-${n}`)));
      expect(jobs.map((j) => j?.state).sort()).toEqual(['done', 'done', 'queued']);
    }, 120_000);
  });
});
