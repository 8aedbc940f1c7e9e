/**
 * The interfaces issues 9–14 name, pinned as a user meets them: the real CLI in child processes,
 * against a loopback Messages API server (the real SDK on the other side). Each test pins a name
 * or a shape that no other test held exactly: the records a sub-agent leaves (`child.started`,
 * `child.finished`, `session.created.parent`) and what its requests offer; `--subagent-max-turns`
 * and `--max-attempts` against HTTP errors; the keys of `approval.requested` and of the
 * approvals commands' JSON; `submit` taking every run flag and a worker offering `Task`; and the
 * error paths of `store init`, `submit` and `worker`.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LogRecord } from '../../src/store/records.ts';
import { CLI_BIN, jsonLines, onlyJson, runCli } from '../support/cli.ts';
import { recordsOf } from '../support/logRecords.ts';
import {
  httpError,
  type MessagesServer,
  type RecordedRequest,
  type Reply,
  startMessagesServer,
  textReply,
  toolUseReply,
} from '../support/messagesServer.ts';
import { createTestDatabase, describePg, type TestDatabase } from '../support/postgres.ts';

const SLOW = 180_000;
let root: string;
let server: MessagesServer;
/** Answers for requests that offer `Task` (a parent) and for those that do not (its children). */
const parentReplies: Reply[] = [];
const childReplies: Reply[] = [];

const offersTask = (r: RecordedRequest) => (r.body.tools ?? []).some((t) => t.name === 'Task');

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'reloop-accept-'));
  server = await startMessagesServer({
    fallback: (req) => {
      const next = (offersTask(req) ? parentReplies : childReplies).shift();
      if (!next) return httpError(400, 'invalid_request_error', 'the test gave no reply for this request');
      return typeof next === 'function' ? next(req) : next;
    },
  });
});
afterAll(async () => {
  await server.close();
  await rm(root, { recursive: true, force: true });
});

const env = () => ({ ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'sk-test' });

async function freshDir(name: string): Promise<string> {
  const dir = path.join(root, name);
  await mkdir(dir, { recursive: true });
  return dir;
}

async function logOf(store: string, session: string): Promise<LogRecord[]> {
  return jsonLines<LogRecord>(await readFile(path.join(store, 'sessions', `${session}.jsonl`), 'utf8'));
}

/** One line on stderr, `reloop: … [CODE]`. */
function oneLine(r: { stderr: string }, code: string): void {
  expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(r.stderr.trimEnd()).toMatch(new RegExp(`^reloop: .*\\[${code}\\]$`));
}

/** An agent file as Claude Code writes one: only Read and Glob, and a body that is its system prompt. */
async function readerAgent(dir: string): Promise<string> {
  const agents = path.join(dir, 'agents');
  await mkdir(agents, { recursive: true });
  await writeFile(
    path.join(agents, 'reader.md'),
    '---\nname: reader\ndescription: Reads files and reports.\ntools: Read, Glob\n---\nYou are the reader agent.\n',
  );
  return agents;
}

const task = (id: string) =>
  toolUseReply(
    'Task',
    { description: 'read the notes', prompt: 'What does notes.txt say?', subagent_type: 'reader' },
    { toolUseId: id },
  );

describe('sub-agents (issue 10) through reloop run and the Messages API', () => {
  it(
    'child.started / child.finished / session.created.parent have exactly the named fields; the child is offered its agent’s tools and prompt',
    async () => {
      const cwd = await freshDir('task');
      await writeFile(path.join(cwd, 'notes.txt'), 'buy milk\n');
      const agents = await readerAgent(cwd);
      const before = server.requests.length;
      parentReplies.push(task('toolu_task_a'), textReply('The notes say: buy milk.'));
      childReplies.push(
        toolUseReply('Read', { file_path: 'notes.txt' }, { toolUseId: 'toolu_read_a' }),
        textReply('notes.txt says "buy milk".'),
      );
      const r = await runCli(['run', '--agents-dir', agents, '--store', 'st', '--json', 'What is noted?'], {
        cwd,
        env: env(),
        timeoutMs: SLOW,
      });
      expect(r.code, r.stderr).toBe(0);
      const { sessionId } = onlyJson<{ sessionId: string }>(r);
      const store = path.join(cwd, 'st');
      const parent = await logOf(store, sessionId);

      const started = recordsOf(parent, 'child.started');
      expect(started).toHaveLength(1);
      expect(Object.keys(started[0]!.data).sort()).toEqual(['agent', 'child', 'toolUseId']);
      const child = started[0]!.data.child;
      expect(started[0]!.data).toEqual({ toolUseId: 'toolu_task_a', child, agent: 'reader' });
      const finished = recordsOf(parent, 'child.finished');
      expect(Object.keys(finished[0]!.data).sort()).toEqual([
        'child',
        'reason',
        'status',
        'toolUseId',
        'turns',
        'usage',
      ]);
      expect(finished[0]!.data).toMatchObject({
        toolUseId: 'toolu_task_a',
        child,
        status: 'completed',
        reason: 'completed',
        turns: 2,
      });
      // The child's last text is the Task result.
      const result = recordsOf(parent, 'tool.finished').find((t) => t.data.toolUseId === 'toolu_task_a');
      expect(result?.data.result).toEqual({ content: 'notes.txt says "buy milk".', isError: false });

      const childLog = await logOf(store, child);
      const created = recordsOf(childLog, 'session.created')[0]!;
      expect(created.data.parent).toEqual({
        session: sessionId,
        run: parent.find((x) => x.type === 'run.started')!.run,
        toolUseId: 'toolu_task_a',
        agent: 'reader',
      });

      // What the requests offered: the parent gets Task (the agent listed, Claude Code's input
      // schema); the child gets its agent's tools only, and the agent's body as its system prompt.
      const requests = server.requests.slice(before);
      const parentRequest = requests.find(offersTask)!;
      const taskTool = parentRequest.body.tools!.find((t) => t.name === 'Task')!;
      expect(taskTool.description).toContain('- reader: Reads files and reports. (Tools: Read, Glob)');
      const schema = taskTool.input_schema as { properties: Record<string, unknown>; required: string[] };
      expect(Object.keys(schema.properties).sort()).toEqual([
        'description',
        'model',
        'prompt',
        'subagent_type',
      ]);
      expect(schema.required.sort()).toEqual(['description', 'prompt', 'subagent_type']);
      const childRequests = requests.filter((q) => !offersTask(q));
      expect(childRequests).toHaveLength(2);
      expect(childRequests[0]!.body.tools!.map((t) => t.name)).toEqual(['Read', 'Glob']);
      expect(JSON.stringify(childRequests[0]!.body.system)).toContain('You are the reader agent.');

      // sessions --json: the child's row names its parent, the parent's is null.
      const rows = onlyJson<{ id: string; parent: unknown }[]>(
        await runCli(['sessions', '--store', 'st', '--json'], { cwd }),
      );
      expect(rows.find((x) => x.id === sessionId)!.parent).toBeNull();
      expect(rows.find((x) => x.id === child)!.parent).toEqual({
        session: sessionId,
        toolUseId: 'toolu_task_a',
        agent: 'reader',
      });
    },
    SLOW,
  );

  it(
    '--subagent-max-turns ends a child max_turns_reached: the parent gets an is_error result naming its status and reason, and goes on',
    async () => {
      const cwd = await freshDir('task-turns');
      await writeFile(path.join(cwd, 'notes.txt'), 'buy milk\n');
      const agents = await readerAgent(cwd);
      parentReplies.push(task('toolu_task_b'), textReply('The reader ran out of turns.'));
      // One tool round, then the child stops max_turns_reached: its second request is never sent.
      childReplies.push(toolUseReply('Read', { file_path: 'notes.txt' }, { toolUseId: 'toolu_read_b' }));
      const r = await runCli(
        ['run', '--agents-dir', agents, '--subagent-max-turns', '1', '--store', 'st', '--json', 'Go.'],
        { cwd, env: env(), timeoutMs: SLOW },
      );
      expect(r.code, r.stderr).toBe(0);
      const parent = await logOf(path.join(cwd, 'st'), onlyJson<{ sessionId: string }>(r).sessionId);
      expect(recordsOf(parent, 'child.finished')[0]!.data).toMatchObject({
        status: 'failed',
        reason: 'max_turns_reached',
      });
      const result = recordsOf(parent, 'tool.finished').find((t) => t.data.toolUseId === 'toolu_task_b')!;
      expect(result.data.result.isError).toBe(true);
      expect(result.data.result.content).toContain('max_turns_reached');
      expect(childReplies).toEqual([]);
    },
    SLOW,
  );
});

describe('--max-attempts (issue 14) against HTTP errors', () => {
  it(
    'bounds the attempts of an overloaded API: N requests, then model_error (exit 1)',
    async () => {
      const cwd = await freshDir('attempts');
      const overloaded = httpError(529, 'overloaded_error', 'Overloaded', { 'retry-after-ms': '1' });
      // `run` always offers Task, so a top-level session's requests take the parent's answers.
      parentReplies.push(overloaded, overloaded, textReply('never asked for'));
      const r = await runCli(['run', '--max-attempts', '2', '--store', 'st', '--json', 'hi'], {
        cwd,
        env: env(),
        timeoutMs: SLOW,
      });
      expect(r.code, r.stderr).toBe(1);
      const run = onlyJson<{ sessionId: string; status: string; reason: string }>(r);
      expect(run).toMatchObject({ status: 'failed', reason: 'model_error' });
      const log = await logOf(path.join(cwd, 'st'), run.sessionId);
      expect(recordsOf(log, 'model.requested')).toHaveLength(2);
      expect(parentReplies.splice(0)).toEqual([textReply('never asked for')]);
    },
    SLOW,
  );
});

describe('durable approvals (issue 11): the JSON the commands and records carry', () => {
  it(
    'approval.requested { toolUseId, tool, input, message }; approvals --json rows; approve --json',
    async () => {
      const cwd = await freshDir('approvals');
      parentReplies.push(
        toolUseReply('Bash', { command: 'touch approved' }, { toolUseId: 'toolu_bash_1' }),
        textReply('Touched.'),
      );
      const run = await runCli(['run', '--store', 'st', '--json', 'touch it'], {
        cwd,
        env: env(),
        timeoutMs: SLOW,
      });
      expect(run.code, run.stderr).toBe(3);
      const { sessionId, status, reason } = onlyJson<{ sessionId: string; status: string; reason: string }>(
        run,
      );
      expect({ status, reason }).toEqual({ status: 'paused', reason: 'awaiting_approval' });
      const requested = recordsOf(await logOf(path.join(cwd, 'st'), sessionId), 'approval.requested');
      expect(requested.map((x) => x.data)).toEqual([
        {
          toolUseId: 'toolu_bash_1',
          tool: 'Bash',
          input: { command: 'touch approved' },
          message: expect.stringContaining('touch approved'),
        },
      ]);

      const rows = onlyJson<Record<string, unknown>[]>(
        await runCli(['approvals', '--store', 'st', '--json'], { cwd }),
      );
      expect(rows).toHaveLength(1);
      // The fields docs/cli.md names (a sub-agent's request adds where it sits in the tree).
      expect(Object.keys(rows[0]!)).toEqual(
        expect.arrayContaining(['session', 'toolUseId', 'tool', 'input', 'message', 'requestedAt', 'ageMs']),
      );
      expect(rows[0]).toMatchObject({ session: sessionId, toolUseId: 'toolu_bash_1', tool: 'Bash' });

      const approved = await runCli(
        ['approve', sessionId, 'toolu_bash_1', '--by', 'alice', '--store', 'st', '--json'],
        { cwd },
      );
      expect(approved.code, approved.stderr).toBe(0);
      expect(onlyJson(approved)).toMatchObject({
        sessionId,
        toolUseId: 'toolu_bash_1',
        decision: 'allow',
        by: 'alice',
        pending: [],
        queued: false,
      });
      const resumed = await runCli(['run', '--resume', sessionId, '--store', 'st', '--json'], {
        cwd,
        env: env(),
        timeoutMs: SLOW,
      });
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(await readdir(cwd)).toContain('approved');
    },
    SLOW,
  );
});

describe('error paths: one line with a code, the documented exit status, nothing written', () => {
  it(
    'store init on a directory that cannot be made fails at once (STORE_UNUSABLE, exit 1)',
    async () => {
      const cwd = await freshDir('init');
      await writeFile(path.join(cwd, 'a-file'), '');
      const targets = [path.join(cwd, 'a-file', 'store')];
      // Node's recursive mkdir loops forever under /proc: the case issue 14 found hanging.
      if (process.platform === 'linux') targets.push('/proc/reloop-acceptance/store');
      for (const store of targets) {
        const r = await runCli(['store', 'init', '--store', store], { cwd, timeoutMs: 30_000 });
        expect(r.code, store).toBe(1);
        oneLine(r, 'STORE_UNUSABLE');
      }
      const made = await runCli(['store', 'init', '--store', 'ok', '--json'], { cwd });
      expect(onlyJson(made)).toEqual({ kind: 'file', dir: path.join(cwd, 'ok') });
      expect(await readdir(path.join(cwd, 'ok'))).toContain('sessions');
    },
    SLOW,
  );

  it(
    'copy names the flag that pointed at the bad store (--from, --to), not --store',
    async () => {
      const cwd = await freshDir('copyflags');
      await mkdir(path.join(cwd, 'not-a-store'));
      await writeFile(path.join(cwd, 'a-file'), '');
      const from = await runCli(['copy', '--from', 'not-a-store', '--to', 'there'], { cwd });
      expect(from.code).toBe(1);
      oneLine(from, 'NO_STORE');
      expect(from.stderr).toContain('pass --from <dir>');
      expect(from.stderr).not.toContain('--store');
      await mkdir(path.join(cwd, 'src', 'sessions'), { recursive: true });
      const to = await runCli(['copy', '--from', 'src', '--to', path.join('a-file', 'store')], { cwd });
      expect(to.code).toBe(1);
      oneLine(to, 'STORE_UNUSABLE');
      expect(to.stderr).toMatch(/^reloop: --to /);
      expect(await readdir(cwd)).not.toContain('there');
    },
    SLOW,
  );

  it(
    'submit and worker on a file store: NO_RUN_QUEUE, exit 1; a worker flag out of range is USAGE, exit 2',
    async () => {
      const cwd = await freshDir('no-queue');
      await runCli(['store', 'init', '--store', 'st'], { cwd });
      const before = await readdir(path.join(cwd, 'st'), { recursive: true });
      const submit = await runCli(['submit', '--store', 'st', '--json', 'hi'], { cwd });
      expect(submit.code).toBe(1);
      expect(submit.stdout).toBe('');
      oneLine(submit, 'NO_RUN_QUEUE');
      const worker = await runCli(['worker', '--store', 'st', '--exit-when-idle'], { cwd });
      expect(worker.code).toBe(1);
      oneLine(worker, 'NO_RUN_QUEUE');
      const zero = await runCli(['worker', '--store', 'st', '--concurrency', '0'], { cwd });
      expect(zero.code).toBe(2);
      oneLine(zero, 'USAGE');
      expect(await readdir(path.join(cwd, 'st'), { recursive: true })).toEqual(before);
    },
    SLOW,
  );
});

describe('copy (issue 11): a session the target holds differently', () => {
  it(
    'is refused for that session: its JSON line says failed, and the command exits 1 with COPY_FAILED',
    async () => {
      const cwd = await freshDir('copy');
      await writeFile(path.join(cwd, 's.json'), JSON.stringify({ turns: [{ text: 'Hi.' }] }));
      const run = await runCli(['run', '--script', 's.json', '--store', 'a', '--json', 'hi'], { cwd });
      const { sessionId } = onlyJson<{ sessionId: string }>(run);
      expect((await runCli(['copy', '--from', 'a', '--to', 'b'], { cwd })).code).toBe(0);
      // The target's copy goes on by itself: it is no longer a prefix of the source.
      const more = await runCli(
        ['run', '--resume', sessionId, '--script', 's.json', '--store', 'b', 'more'],
        { cwd },
      );
      expect(more.code, more.stderr).toBe(0);
      const again = await runCli(['copy', '--from', 'a', '--to', 'b', '--json'], { cwd });
      expect(again.code).toBe(1);
      expect(jsonLines(again.stdout)).toEqual([
        expect.objectContaining({ session: sessionId, outcome: 'failed', verified: false }),
      ]);
      oneLine(again, 'COPY_FAILED');
    },
    SLOW,
  );
});

describe('submit checks its run flags as run does, before anything is queued', () => {
  it(
    'a bad rule, settings file, script, --pass-env or --cwd: exit 2 with run’s code, nothing written',
    async () => {
      const cwd = await freshDir('submit-flags');
      await runCli(['store', 'init', '--store', 'st'], { cwd });
      const before = await readdir(path.join(cwd, 'st'), { recursive: true });
      const cases: [string[], string][] = [
        [['--allow', 'Bash('], 'INVALID_PERMISSION_RULE'],
        [['--settings', 'nope.json'], 'SETTINGS_INVALID'],
        [['--script', 'nope.json'], 'SCRIPT_UNREADABLE'],
        [['--pass-env', 'A-B'], 'USAGE'],
        [['--cwd', 'nope'], 'CWD_INVALID'],
        [['--max-attempts', '0'], 'USAGE'],
      ];
      for (const [flags, code] of cases) {
        const r = await runCli(['submit', ...flags, '--store', 'st', '--json', 'hi'], { cwd });
        expect(r.code, flags.join(' ')).toBe(2);
        expect(r.stdout).toBe('');
        oneLine(r, code);
      }
      expect(await readdir(path.join(cwd, 'st'), { recursive: true })).toEqual(before);
    },
    SLOW,
  );
});

describePg('submit takes the run flags; a worker runs with them (issue 11 with 10 and 14)', () => {
  let db: TestDatabase | undefined;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it(
    'submit --agents-dir --subagent-max-turns --max-attempts: the worker offers Task with that agent, and the tree verifies',
    async () => {
      const url = db!.url;
      const cwd = await freshDir('pg-task');
      await writeFile(path.join(cwd, 'notes.txt'), 'buy milk\n');
      const agents = await readerAgent(cwd);
      const bad = await runCli(
        ['submit', '--store', url, '--agents-dir', path.join(cwd, 'nope'), '--json', 'hi'],
        { cwd },
      );
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('[AGENT_DEFINITION_INVALID]');

      parentReplies.push(task('toolu_task_pg'), textReply('The notes say: buy milk.'));
      childReplies.push(
        toolUseReply('Read', { file_path: 'notes.txt' }, { toolUseId: 'toolu_read_pg' }),
        textReply('notes.txt says "buy milk".'),
      );
      const submitted = await runCli(
        [
          ...['submit', '--store', url, '--agents-dir', agents],
          ...['--subagent-max-turns', '3', '--max-attempts', '2', '--json', 'What is noted?'],
        ],
        { cwd },
      );
      expect(submitted.code, submitted.stderr).toBe(0);
      const { sessionId, status } = onlyJson<{ sessionId: string; status: string }>(submitted);
      expect(status).toBe('queued');

      const worker = await runCli(['worker', '--store', url, '--exit-when-idle', '--json'], {
        cwd,
        env: env(),
        timeoutMs: SLOW,
      });
      expect(worker.code, worker.stderr).toBe(0);
      expect(jsonLines<{ type: string; status?: string }>(worker.stdout).at(-1)).toMatchObject({
        type: 'finished',
        status: 'completed',
      });

      const rows = onlyJson<{ id: string; parent: { session: string; agent: string } | null }[]>(
        await runCli(['sessions', '--store', url, '--json'], { cwd }),
      );
      const child = rows.find((x) => x.parent?.session === sessionId);
      expect(child?.parent).toMatchObject({ agent: 'reader', toolUseId: 'toolu_task_pg' });
      const log = jsonLines<LogRecord>(
        (await runCli(['log', child!.id, '--store', url, '--json'], { cwd })).stdout,
      );
      const config = recordsOf(log, 'run.started')[0]!.data.config;
      expect(config).toMatchObject({ maxTurns: 3, maxTransportAttempts: 2 });
      const tree = await runCli(['replay', sessionId, '--verify', '--tree', '--store', url, '--json'], {
        cwd,
      });
      expect(tree.code, tree.stdout).toBe(0);
      expect(onlyJson<{ ok: boolean; sessions: unknown[] }>(tree)).toMatchObject({ ok: true });
      expect(onlyJson<{ sessions: unknown[] }>(tree).sessions).toHaveLength(2);
    },
    SLOW,
  );

  it(
    'log --follow of a submitted run waits for the worker to run it and exits 0 at its run.ended',
    async () => {
      const url = db!.url;
      const cwd = await freshDir('pg-follow');
      parentReplies.push(textReply('Hello from the worker.'));
      const { sessionId } = onlyJson<{ sessionId: string }>(
        await runCli(['submit', '--store', url, '--json', 'Say hello.'], { cwd }),
      );
      const follow = spawn(
        process.execPath,
        [CLI_BIN, 'log', sessionId, '--follow', '--json', '--store', url],
        {
          cwd,
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      const lines: string[] = [];
      const exited = once(follow, 'close');
      const firstLine = new Promise<void>((resolve) => {
        createInterface({ input: follow.stdout! }).on('line', (l) => {
          lines.push(l);
          resolve();
        });
      });
      try {
        // It has printed what is there (the session.created of the queued session) and waits.
        await firstLine;
        const worker = await runCli(['worker', '--store', url, '--exit-when-idle'], {
          cwd,
          env: env(),
          timeoutMs: SLOW,
        });
        expect(worker.code, worker.stderr).toBe(0);
        const [code] = await exited;
        expect(code).toBe(0);
      } finally {
        follow.kill('SIGKILL');
      }
      const records = lines.map((l) => JSON.parse(l) as LogRecord);
      expect(records.map((r) => r.seq)).toEqual(records.map((_, i) => i + 1));
      expect(records.at(-1)).toMatchObject({ type: 'run.ended', data: { status: 'completed' } });
    },
    SLOW,
  );
});
