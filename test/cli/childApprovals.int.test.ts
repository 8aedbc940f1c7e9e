/**
 * A sub-agent's approval through the CLI, on both stores: the child's Bash call needs approval
 * and nobody is attached, so the child parks and its parent parks with it (exit 3); `reloop
 * approvals` lists the child's call with its parent and root; `approve|deny <child>` answers it;
 * the tree resumes from the root — `run --resume <root>` on the file store, the worker by itself
 * on PostgreSQL — the child from its own log, and completes. The approved call runs once.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, storeLocation } from '../../src/store/openStore.ts';
import type { LogRecord } from '../../src/store/records.ts';
import { onlyJson, runCli } from '../support/cli.ts';
import { createTestDatabase, describePg, type TestDatabase } from '../support/postgres.ts';
import { startWorkerProcess } from '../support/workerProcess.ts';

const SLOW = 180_000;
let root: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'reloop-child-approvals-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A working directory with a `deployer` agent that may use Bash. */
async function project(name: string): Promise<string> {
  const cwd = await mkdtemp(path.join(root, `${name}-`));
  await mkdir(path.join(cwd, '.claude', 'agents'), { recursive: true });
  await writeFile(
    path.join(cwd, '.claude', 'agents', 'deployer.md'),
    '---\nname: deployer\ndescription: Deploys.\ntools: Bash\n---\nYou deploy.\n',
  );
  return cwd;
}

const task = {
  content: [
    {
      type: 'tool_use',
      id: 'toolu_task',
      name: 'Task',
      input: { description: 'deploy', prompt: 'Deploy it.', subagent_type: 'deployer' },
    },
  ],
  stop_reason: 'tool_use',
};
const parentEnd = { text: 'The deployer is done.', stop_reason: 'end_turn' };
const childEnd = { text: 'deployed', stop_reason: 'end_turn' };
/** The child appends a line to the marker: the number of lines is the number of times it ran. */
const childAsk = (marker: string) => ({
  content: [
    { type: 'tool_use', id: 'toolu_touch', name: 'Bash', input: { command: `echo ran >> ${marker}` } },
  ],
  stop_reason: 'tool_use',
});

/** The whole script (`both`), or what is left of it after the park (`after`, for run --resume). */
async function script(dir: string, marker: string, part: 'both' | 'after'): Promise<string> {
  const file = path.join(dir, `script-${part}.json`);
  const s =
    part === 'both'
      ? { turns: [task, parentEnd], children: { toolu_task: { turns: [childAsk(marker), childEnd] } } }
      : { turns: [parentEnd], children: { toolu_task: { turns: [childEnd] } } };
  await writeFile(file, JSON.stringify(s));
  return file;
}

const runs = (marker: string) =>
  readFile(marker, 'utf8').then(
    (t) => t.split('\n').filter(Boolean).length,
    () => 0,
  );

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

/** `run --resume <root>` with the script's turns after the park (the file store's way on). */
async function resumeRoot(cwd: string, store: string, parent: string, marker: string) {
  return runCli(
    ['run', '--resume', parent, '--script', await script(cwd, marker, 'after'), '--store', store, '--json'],
    {
      cwd,
    },
  );
}

const childOf = (log: LogRecord[]) => {
  const r = log.find((x) => x.type === 'child.started');
  return r?.type === 'child.started' ? r.data.child : '';
};

interface Row {
  session: string;
  parent: string | null;
  root: string;
  toolUseId: string;
  tool: string;
}

describe('a sub-agent parked on an approval, on the file store', () => {
  it(
    'child parks → parent paused (exit 3) → approvals lists it → approve → run --resume <root> → the tree completes, the call ran once',
    async () => {
      const cwd = await project('file');
      const store = path.join(cwd, 'store');
      const marker = path.join(cwd, 'ran');
      const parked = await runCli(
        ['run', '--script', await script(cwd, marker, 'both'), '--store', store, '--json', 'deploy'],
        { cwd },
      );
      expect(parked.code, parked.stderr).toBe(3);
      const run = onlyJson<{ sessionId: string; status: string; reason: string }>(parked);
      expect(run).toMatchObject({ status: 'paused', reason: 'awaiting_approval' });
      const parent = run.sessionId;
      let log = await records(store, parent);
      const child = childOf(log);
      // The Task call is left open: started, its child announced, no result.
      expect(log.some((r) => r.type === 'child.finished' || r.type === 'tool.finished')).toBe(false);
      expect(await runs(marker)).toBe(0);
      const shown = await runCli(['log', parent, '--store', store], { cwd });
      expect(shown.stdout).toContain(`waits for sub-agent ${child}, parked on approvals (toolu_task)`);

      const rows = onlyJson<Row[]>(await runCli(['approvals', '--store', store, '--json'], { cwd }));
      expect(rows).toMatchObject([
        { session: child, parent, root: parent, toolUseId: 'toolu_touch', tool: 'Bash' },
      ]);
      const text = await runCli(['approvals', '--store', store], { cwd });
      expect(text.stdout).toContain(`${child}  toolu_touch`);
      expect(text.stdout).toContain(`(sub-agent of ${parent}, root ${parent})`);

      // Resuming before the child's call is answered: bad usage naming the child and its call.
      const early = await runCli(
        ['run', '--resume', parent, '--script', await script(cwd, marker, 'after'), '--store', store],
        { cwd },
      );
      expect(early.code).toBe(2);
      expect(early.stderr).toContain(`toolu_touch of session ${child}`);
      expect(early.stderr).toContain('[AWAITING_APPROVAL]');

      const approved = onlyJson(
        await runCli(['approve', child, 'toolu_touch', '--by', 'alice', '--store', store, '--json'], { cwd }),
      );
      expect(approved).toEqual({
        sessionId: child,
        toolUseId: 'toolu_touch',
        decision: 'allow',
        by: 'alice',
        pending: [],
        queued: false,
        parent,
        root: parent,
        treePending: [],
      });

      const resumed = await resumeRoot(cwd, store, parent, marker);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(onlyJson(resumed)).toMatchObject({ status: 'completed', reason: 'completed' });
      expect(await runs(marker)).toBe(1);
      expect(onlyJson<Row[]>(await runCli(['approvals', '--store', store, '--json'], { cwd }))).toEqual([]);
      log = await records(store, parent);
      expect(log.find((r) => r.type === 'child.finished')).toMatchObject({
        data: { child, status: 'completed', reason: 'completed' },
      });
      expect(log.filter((r) => r.type === 'child.started')).toHaveLength(1);
      const childLog = await records(store, child);
      expect(childLog.filter((r) => r.type === 'tool.started')).toHaveLength(1);
      const tree = await runCli(['replay', parent, '--verify', '--tree', '--store', store], { cwd });
      expect(tree.code, tree.stdout + tree.stderr).toBe(0);
    },
    SLOW,
  );

  it(
    'deny → the child gets an is_error result for its call and goes on; the parent completes',
    async () => {
      const cwd = await project('deny');
      const store = path.join(cwd, 'store');
      const marker = path.join(cwd, 'must-not-run');
      const parked = await runCli(
        ['run', '--script', await script(cwd, marker, 'both'), '--store', store, '--json', 'deploy'],
        { cwd },
      );
      const parent = onlyJson<{ sessionId: string }>(parked).sessionId;
      const child = childOf(await records(store, parent));
      const denied = await runCli(['deny', child, 'toolu_touch', '--message', 'not now', '--store', store], {
        cwd,
      });
      expect(denied.code, denied.stderr).toBe(0);
      expect(denied.stdout).toContain(`resume it: `);
      expect(denied.stdout).toContain(`run --resume ${parent}`);
      const resumed = await resumeRoot(cwd, store, parent, marker);
      expect(onlyJson(resumed)).toMatchObject({ status: 'completed' });
      expect(await runs(marker)).toBe(0);
      const finished = (await records(store, child)).find((r) => r.type === 'tool.finished');
      expect(finished).toMatchObject({
        data: {
          outcome: 'denied',
          result: { content: 'Permission to use Bash was denied: not now', isError: true },
        },
      });
      const tree = await runCli(['replay', parent, '--verify', '--tree', '--store', store], { cwd });
      expect(tree.code, tree.stdout + tree.stderr).toBe(0);
    },
    SLOW,
  );
});

let db: TestDatabase | undefined;
describePg('a sub-agent parked on an approval, on PostgreSQL with a worker', () => {
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it(
    'the worker parks the tree; approve the child → the root is queued again and the worker completes it; deny → is_error, completes',
    async () => {
      const url = db!.url;
      const cwd = await project('pg');
      const marker = path.join(cwd, 'approved-ran');
      const deniedMarker = path.join(cwd, 'denied-ran');
      const worker = startWorkerProcess(['--store', url, '--lease-seconds', '5', '--concurrency', '2']);
      try {
        const submit = async (m: string) =>
          onlyJson<{ sessionId: string }>(
            await runCli(
              ['submit', '--script', await script(cwd, m, 'both'), '--store', url, '--json', 'deploy'],
              {
                cwd,
              },
            ),
          ).sessionId;
        const a = await submit(marker);
        const b = await submit(deniedMarker);
        for (const s of [a, b]) {
          await worker.until((e) => e.type === 'finished' && e.session === s && e.status === 'paused');
        }
        const childA = childOf(await records(url, a));
        const childB = childOf(await records(url, b));
        const rows = onlyJson<Row[]>(await runCli(['approvals', '--store', url, '--json'], { cwd }));
        expect(rows.map((r) => [r.session, r.parent, r.root]).sort()).toEqual(
          [
            [childA, a, a],
            [childB, b, b],
          ].sort(),
        );

        // The worker idles; the answers come from other processes.
        const ok = onlyJson<{ queued: boolean; root: string }>(
          await runCli(['approve', childA, 'toolu_touch', '--store', url, '--json'], { cwd }),
        );
        expect(ok).toMatchObject({ queued: true, root: a });
        await runCli(['deny', childB, 'toolu_touch', '--message', 'no', '--store', url], { cwd });
        for (const s of [a, b]) {
          await worker.until((e) => e.type === 'finished' && e.session === s && e.status === 'completed');
        }
        expect(await runs(marker)).toBe(1);
        expect(await runs(deniedMarker)).toBe(0);
        expect((await records(url, childB)).find((r) => r.type === 'tool.finished')).toMatchObject({
          data: { outcome: 'denied', result: { isError: true } },
        });
        for (const s of [a, b]) {
          const tree = await runCli(['replay', s, '--verify', '--tree', '--store', url], { cwd });
          expect(tree.code, tree.stdout + tree.stderr).toBe(0);
        }
      } finally {
        worker.child.kill('SIGTERM');
        expect(await worker.exit).toEqual({ code: 0, signal: null });
      }
    },
    SLOW,
  );
});
