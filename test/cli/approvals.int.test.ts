/**
 * Durable approvals through the CLI, on both stores: a run whose policy asks with nobody to
 * answer parks (exit 3); `reloop approvals` lists it; `approve` / `deny` answer; the session
 * resumes the same batch — by `run --resume` on the file store, by a worker on PostgreSQL
 * (a worker idling while another process approves).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyReplay } from '../../src/replay/verify.ts';
import { openStore, storeLocation } from '../../src/store/openStore.ts';
import type { LogRecord } from '../../src/store/records.ts';
import { onlyJson, runCli } from '../support/cli.ts';
import { exists } from '../support/files.ts';
import { createTestDatabase, describePg, type TestDatabase } from '../support/postgres.ts';
import { startWorkerProcess } from '../support/workerProcess.ts';

const SLOW = 180_000;
let root: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'reloop-approvals-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A model that asks to run `touch <marker>` (Bash: the default policy asks), then finishes. */
async function script(dir: string, marker: string, turns: 'both' | 'after' = 'both'): Promise<string> {
  const file = path.join(dir, `script-${turns}.json`);
  const ask = {
    content: [{ type: 'tool_use', id: 'toolu_touch', name: 'Bash', input: { command: `touch ${marker}` } }],
    stop_reason: 'tool_use',
  };
  const end = { text: 'done', stop_reason: 'end_turn' };
  await writeFile(file, JSON.stringify({ turns: turns === 'both' ? [ask, end] : [end] }));
  return file;
}

async function records(store: string, session: string): Promise<LogRecord[]> {
  const s = await openStore(storeLocation(store));
  try {
    const out: LogRecord[] = [];
    for await (const r of s.read(session)) out.push(r);
    return out;
  } finally {
    await s.close();
  }
}

interface Row {
  session: string;
  toolUseId: string;
  tool: string;
  input: unknown;
  ageMs: number;
}

describe('durable approvals on the file store', () => {
  it(
    'park (exit 3) → approvals lists it → approve → run --resume runs the same call once',
    async () => {
      const cwd = await mkdtemp(path.join(root, 'file-'));
      const store = path.join(cwd, 'store');
      const marker = path.join(cwd, 'approved-ran');
      const s1 = await script(cwd, marker);
      const parked = await runCli(['run', '--script', s1, '--store', store, '--json', 'touch it'], { cwd });
      expect(parked.code).toBe(3);
      const run = onlyJson<{ sessionId: string; status: string; reason: string }>(parked);
      expect(run).toMatchObject({ status: 'paused', reason: 'awaiting_approval' });
      expect(await exists(marker)).toBe(false);

      const list = await runCli(['approvals', '--store', store, '--json'], { cwd });
      const rows = onlyJson<Row[]>(list);
      expect(rows).toMatchObject([
        {
          session: run.sessionId,
          toolUseId: 'toolu_touch',
          tool: 'Bash',
          input: { command: `touch ${marker}` },
        },
      ]);
      expect(rows[0]!.ageMs).toBeGreaterThanOrEqual(0);

      // A new prompt cannot jump the parked batch: bad usage, nothing written.
      const jump = await runCli(
        ['run', '--resume', run.sessionId, '--script', s1, '--store', store, 'other'],
        { cwd },
      );
      expect(jump.code).toBe(2);
      expect(jump.stderr).toMatch(/awaiting approval \(toolu_touch\)/);

      const approved = await runCli(
        ['approve', run.sessionId, 'toolu_touch', '--by', 'alice', '--store', store, '--json'],
        { cwd },
      );
      expect(onlyJson(approved)).toEqual({
        sessionId: run.sessionId,
        toolUseId: 'toolu_touch',
        decision: 'allow',
        by: 'alice',
        pending: [],
        queued: false,
        parent: null,
        root: run.sessionId,
        treePending: [],
      });
      const again = await runCli(['approve', run.sessionId, 'toolu_touch', '--store', store], { cwd });
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/already approved by alice/);

      const s2 = await script(cwd, marker, 'after');
      const resumed = await runCli(
        ['run', '--resume', run.sessionId, '--script', s2, '--store', store, '--json'],
        { cwd },
      );
      expect(resumed.code).toBe(0);
      expect(onlyJson(resumed)).toMatchObject({ status: 'completed' });
      expect(await exists(marker)).toBe(true);
      expect(onlyJson<Row[]>(await runCli(['approvals', '--store', store, '--json'], { cwd }))).toEqual([]);
      const log = await records(store, run.sessionId);
      expect(log.filter((r) => r.type === 'tool.started')).toHaveLength(1);
      expect((await verifyReplay(log)).ok).toBe(true);
    },
    SLOW,
  );

  it(
    'deny → the call gets an is_error result with the message, and the loop goes on',
    async () => {
      const cwd = await mkdtemp(path.join(root, 'deny-'));
      const store = path.join(cwd, 'store');
      const marker = path.join(cwd, 'must-not-exist');
      const parked = await runCli(
        ['run', '--script', await script(cwd, marker), '--store', store, '--json', 'go'],
        { cwd },
      );
      const { sessionId } = onlyJson<{ sessionId: string }>(parked);
      const denied = await runCli(
        ['deny', sessionId, 'toolu_touch', '--message', 'not here', '--store', store],
        { cwd },
      );
      expect(denied.code).toBe(0);
      expect(denied.stdout).toMatch(/denied toolu_touch/);
      const resumed = await runCli(
        [
          'run',
          '--resume',
          sessionId,
          '--script',
          await script(cwd, marker, 'after'),
          '--store',
          store,
          '--json',
        ],
        { cwd },
      );
      expect(onlyJson(resumed)).toMatchObject({ status: 'completed' });
      expect(await exists(marker)).toBe(false);
      const log = await records(store, sessionId);
      const finished = log.find((r) => r.type === 'tool.finished');
      expect(finished?.type === 'tool.finished' && finished.data).toMatchObject({
        outcome: 'denied',
        result: { content: 'Permission to use Bash was denied: not here', isError: true },
      });
      expect((await verifyReplay(log)).ok).toBe(true);
    },
    SLOW,
  );
});

let db: TestDatabase | undefined;
describePg('durable approvals on PostgreSQL, answered while a worker idles', () => {
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it(
    'park → list → approve (another process) → the idle worker resumes and completes; deny → is_error, the loop goes on',
    async () => {
      const url = db!.url;
      const cwd = await mkdtemp(path.join(root, 'pg-'));
      const marker = path.join(cwd, 'approved-ran');
      const denied = path.join(cwd, 'denied-ran');
      const worker = startWorkerProcess(['--store', url, '--lease-seconds', '5', '--concurrency', '2']);
      try {
        const a = onlyJson<{ sessionId: string; status: string }>(
          await runCli(
            ['submit', '--script', await script(cwd, marker), '--store', url, '--json', 'touch it'],
            { cwd },
          ),
        );
        expect(a.status).toBe('queued');
        const b = onlyJson<{ sessionId: string }>(
          await runCli(
            ['submit', '--script', await script(cwd, denied), '--store', url, '--json', 'touch the other'],
            { cwd },
          ),
        );
        for (const s of [a.sessionId, b.sessionId]) {
          await worker.until((e) => e.type === 'finished' && e.session === s && e.status === 'paused');
        }
        const rows = onlyJson<Row[]>(await runCli(['approvals', '--store', url, '--json'], { cwd }));
        expect(rows.map((r) => r.session).sort()).toEqual([a.sessionId, b.sessionId].sort());
        const sessions = onlyJson<{ id: string; status: string; job?: { state: string } }[]>(
          await runCli(['sessions', '--store', url, '--json'], { cwd }),
        );
        expect(sessions.find((s) => s.id === a.sessionId)).toMatchObject({
          status: 'paused',
          job: { state: 'parked' },
        });

        // The worker is idle now; the answers come from other processes.
        const ok = onlyJson<{ queued: boolean }>(
          await runCli(['approve', a.sessionId, 'toolu_touch', '--store', url, '--json'], { cwd }),
        );
        expect(ok.queued).toBe(true);
        await runCli(['deny', b.sessionId, 'toolu_touch', '--message', 'no', '--store', url], { cwd });
        for (const s of [a.sessionId, b.sessionId]) {
          await worker.until((e) => e.type === 'finished' && e.session === s && e.status === 'completed');
        }
        expect(await exists(marker)).toBe(true);
        expect(await exists(denied)).toBe(false);
        const logA = await records(url, a.sessionId);
        const logB = await records(url, b.sessionId);
        expect(logA.filter((r) => r.type === 'tool.started')).toHaveLength(1);
        expect(logB.find((r) => r.type === 'tool.finished')).toMatchObject({
          data: { outcome: 'denied', result: { isError: true } },
        });
        for (const log of [logA, logB]) expect((await verifyReplay(log)).ok).toBe(true);
      } finally {
        worker.child.kill('SIGTERM');
        expect(await worker.exit).toEqual({ code: 0, signal: null });
      }
    },
    SLOW,
  );
});
