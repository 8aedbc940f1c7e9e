/**
 * Sub-agents through the CLI as a user runs it: a scripted run whose Task call starts a child,
 * then `sessions`, `log`, `replay --verify [--tree]`, `fork` and `coverage` on the tree, a
 * tampered child log caught by `--tree` at its seq, and a bad agent file refused at start-up.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LogRecord } from '../../src/store/records.ts';
import type { SessionInfo } from '../../src/store/types.ts';
import { jsonLines, onlyJson, runCli } from '../support/cli.ts';

const SLOW = 180_000;

let cwd: string;
let store: string;
let parent: string;
let child: string;

const script = {
  turns: [
    {
      content: [
        {
          type: 'tool_use',
          id: 'toolu_task_1',
          name: 'Task',
          input: {
            description: 'find the notes',
            prompt: 'Which .txt files are there?',
            subagent_type: 'finder',
          },
        },
      ],
      stop_reason: 'tool_use',
      usage: { input_tokens: 500, output_tokens: 40 },
    },
    { text: 'The finder says: notes.txt.', usage: { input_tokens: 600, output_tokens: 20 } },
  ],
  children: {
    toolu_task_1: {
      turns: [
        {
          content: [{ type: 'tool_use', id: 'tu_glob', name: 'Glob', input: { pattern: '*.txt' } }],
          stop_reason: 'tool_use',
          usage: { input_tokens: 300, output_tokens: 30 },
        },
        { text: 'One file: notes.txt.', usage: { input_tokens: 350, output_tokens: 10 } },
      ],
    },
  },
};

beforeAll(async () => {
  cwd = await mkdtemp(path.join(tmpdir(), 'reloop-cli-tree-'));
  store = path.join(cwd, 'store');
  await writeFile(path.join(cwd, 'notes.txt'), 'milk\n');
  await mkdir(path.join(cwd, '.claude', 'agents'), { recursive: true });
  await writeFile(
    path.join(cwd, '.claude', 'agents', 'finder.md'),
    '---\nname: finder\ndescription: Finds files.\ntools: Glob, Grep\n---\nYou find files and list them.\n',
  );
  await writeFile(path.join(cwd, 's.json'), JSON.stringify(script));
  const r = await runCli(['run', '--script', 's.json', '--store', store, '--json', 'What notes are there?'], {
    cwd,
  });
  expect(r.code, r.stderr).toBe(0);
  parent = onlyJson<{ sessionId: string }>(r).sessionId;
  const log = await readFile(path.join(store, 'sessions', `${parent}.jsonl`), 'utf8');
  const started = jsonLines<LogRecord>(log).find((x) => x.type === 'child.started');
  child = started?.type === 'child.started' ? started.data.child : '';
}, SLOW);
afterAll(async () => {
  await rm(cwd, { recursive: true, force: true });
});

describe('reloop and a tree of sessions', () => {
  it(
    'sessions shows the child under its parent; --json rows carry parent or null',
    async () => {
      const j = await runCli(['sessions', '--json', '--store', store], { cwd });
      expect(j.code, j.stderr).toBe(0);
      const rows = onlyJson<SessionInfo[]>(j);
      const kid = rows.find((r) => r.id === child)!;
      expect(kid.parent).toEqual({ session: parent, toolUseId: 'toolu_task_1', agent: 'finder' });
      expect(rows.find((r) => r.id === parent)?.parent).toBeNull();
      const t = await runCli(['sessions', '--store', store], { cwd });
      const lines = t.stdout.trim().split('\n');
      expect(lines[0]).toMatch(new RegExp(`^${parent}  completed`));
      expect(lines[1]).toMatch(new RegExp(`^└ ${child}  completed .*\\[finder\\] find the notes$`));
    },
    SLOW,
  );

  it(
    'log, replay --verify and replay --verify --tree work on any session of the tree',
    async () => {
      const log = await runCli(['log', child, '--json', '--store', store], { cwd });
      expect(log.code, log.stderr).toBe(0);
      const records = jsonLines<LogRecord>(log.stdout);
      expect(records[0]).toMatchObject({
        type: 'session.created',
        data: { parent: { session: parent, agent: 'finder' } },
      });
      const text = await runCli(['log', parent, '--store', store], { cwd });
      expect(text.stdout).toContain(`sub-agent finder started: session ${child} (for toolu_task_1)`);
      expect(text.stdout).toMatch(
        new RegExp(`sub-agent ${child} completed \\(completed\\), 2 turns, 650 in / 40 out`),
      );

      for (const id of [parent, child]) {
        const v = await runCli(['replay', id, '--verify', '--store', store], { cwd });
        expect(v.code, v.stdout + v.stderr).toBe(0);
      }
      const tree = await runCli(['replay', parent, '--verify', '--tree', '--json', '--store', store], {
        cwd,
      });
      expect(tree.code, tree.stderr).toBe(0);
      const report = onlyJson<{
        ok: boolean;
        sessions: { session: string; parent: string | null; ok: boolean }[];
      }>(tree);
      expect(report.ok).toBe(true);
      expect(report.sessions.map((s) => [s.session, s.parent, s.ok])).toEqual([
        [parent, null, true],
        [child, parent, true],
      ]);
      const bad = await runCli(['replay', parent, '--tree', '--store', store], { cwd });
      expect([bad.code, bad.stderr.trim()]).toEqual([2, 'reloop: --tree goes with --verify [USAGE]']);
    },
    SLOW,
  );

  it(
    'fork works on a child; coverage counts the children, from the store or from a log file',
    async () => {
      const f = await runCli(['fork', child, '--at', '3', '--json', '--store', store], { cwd });
      expect(f.code, f.stderr).toBe(0);
      const fork = onlyJson<{ sessionId: string }>(f).sessionId;
      const rows = onlyJson<SessionInfo[]>(await runCli(['sessions', '--json', '--store', store], { cwd }));
      // A fork is its own root: it is no Task call's child.
      expect(rows.find((r) => r.id === fork)).toMatchObject({
        forkedFrom: { session: child, seq: 3 },
        parent: null,
      });

      const file = path.join(store, 'sessions', `${parent}.jsonl`);
      const c = await runCli(['coverage', file], { cwd });
      expect(c.code, c.stderr).toBe(0);
      const transitions = (id: string) =>
        readFile(path.join(store, 'sessions', `${id}.jsonl`), 'utf8').then(
          (t) => t.split('\n').filter((l) => l.includes('"type":"transition"')).length,
        );
      const expected = (await transitions(parent)) + (await transitions(child));
      expect(c.stdout.split('\n')[0]).toBe(`2 session(s), ${expected} transition(s)`);
    },
    SLOW,
  );

  it(
    'viz --format html of the parent holds its sub-agents, linked to the Task call that started them',
    async () => {
      const file = path.join(cwd, 'tree.html');
      const r = await runCli(['viz', parent, '--format', 'html', '--out', file, '--store', store], { cwd });
      expect(r.code, r.stderr).toBe(0);
      const html = await readFile(file, 'utf8');
      const data = /<script type="application\/json" id="reloop-data">(.*?)<\/script>/s.exec(html)![1]!;
      const manifest = JSON.parse(data) as {
        sessions: { id: string; role: string; parent: { session: string; toolUseId: string } | null }[];
      };
      expect(
        manifest.sessions.map((s) => [s.id, s.role, s.parent?.session ?? null, s.parent?.toolUseId ?? null]),
      ).toEqual([
        [parent, 'main', null, null],
        [child, 'child', parent, 'toolu_task_1'],
      ]);
    },
    SLOW,
  );

  it(
    'a tampered child log is caught by replay --verify --tree, at its seq, naming the child',
    async () => {
      const copy = path.join(cwd, 'tampered');
      await mkdir(path.join(copy, 'sessions'), { recursive: true });
      for (const id of [parent, child]) {
        await writeFile(
          path.join(copy, 'sessions', `${id}.jsonl`),
          await readFile(path.join(store, 'sessions', `${id}.jsonl`), 'utf8'),
        );
      }
      const file = path.join(copy, 'sessions', `${child}.jsonl`);
      const lines = (await readFile(file, 'utf8')).split('\n');
      const at = lines.findIndex((l) => l.includes('"reason":"tool_result_continuation"'));
      const seq = (JSON.parse(lines[at]!) as LogRecord).seq;
      lines[at] = lines[at]!.replace('"to":"building"', '"to":"compacting"').replace(
        'tool_result_continuation',
        'auto_compact',
      );
      await writeFile(file, lines.join('\n'));

      const plain = await runCli(['replay', parent, '--verify', '--store', copy], { cwd });
      expect(plain.code, plain.stdout).toBe(0); // the parent's own log is intact
      const tree = await runCli(['replay', parent, '--verify', '--tree', '--store', copy], { cwd });
      expect(tree.code).toBe(1);
      expect(tree.stdout).toContain(
        `DIVERGED in session ${child} at seq ${seq}: logged dispatchingTools → compacting (auto_compact), replay took dispatchingTools → building (tool_result_continuation)`,
      );
      const json = await runCli(['replay', parent, '--verify', '--tree', '--json', '--store', copy], { cwd });
      expect(onlyJson<{ divergence: { session: string; seq: number } }>(json).divergence).toMatchObject({
        session: child,
        seq,
      });
    },
    SLOW,
  );

  it(
    "agent files as real projects have them: a public one with other runtimes' tools, a broken one, a README and the user's — warnings naming each file, and the run goes on",
    async () => {
      const dir = path.join(cwd, 'collected-agents');
      await mkdir(dir);
      // The finder of this --agents-dir replaces the project's: its Glob call below must still work.
      await writeFile(
        path.join(dir, 'finder.md'),
        '---\nname: finder\ndescription: Use this agent when: files must be found.\ntools: Glob, Grep, LS, Read, NotebookRead, WebFetch, TodoWrite, WebSearch, KillShell, BashOutput\ncolor: blue\n---\nYou find files.\n',
      );
      await writeFile(path.join(dir, 'broken.md'), '---\nname: broken\ndescription: [oops\n---\nbody\n');
      await writeFile(path.join(dir, 'README.md'), '# Our agents\n');
      const home = path.join(cwd, 'home');
      await mkdir(path.join(home, '.claude', 'agents'), { recursive: true });
      await writeFile(
        path.join(home, '.claude', 'agents', 'mine.md'),
        "---\nname: mine\ndescription: The user's own agent.\ntools: [Read]\n---\nYou are mine.\n",
      );
      const fresh = path.join(cwd, 'agents-store');
      const r = await runCli(
        ['run', '--script', 's.json', '--agents-dir', dir, '--store', fresh, '--json', 'hi'],
        {
          cwd,
          env: { RELOOP_HOME: home },
        },
      );
      expect(r.code, r.stderr).toBe(0);
      const warnings = r.stderr.trim().split('\n');
      expect(warnings).toHaveLength(2);
      expect(warnings[0]).toMatch(
        new RegExp(
          `^warning: agent definition ${esc(path.join(dir, 'broken.md'))}: line 3: the front matter is not valid YAML: .*; skipped$`,
        ),
      );
      expect(warnings[1]).toBe(
        `warning: agent definition ${path.join(dir, 'finder.md')}, field "tools": tools this runtime does not have left out: LS, NotebookRead, WebSearch; the agent gets Glob, Grep, Read, WebFetch, TodoWrite, KillShell, BashOutput`,
      );
      const id = onlyJson<{ sessionId: string }>(r).sessionId;
      const records = jsonLines<LogRecord>(
        await readFile(path.join(fresh, 'sessions', `${id}.jsonl`), 'utf8'),
      );
      // The child of the --agents-dir finder still has Glob: its call ran.
      const started = records.find((x) => x.type === 'child.started');
      const kid = started?.type === 'child.started' ? started.data.child : '';
      const kidLog = jsonLines<LogRecord>(
        await readFile(path.join(fresh, 'sessions', `${kid}.jsonl`), 'utf8'),
      );
      const glob = kidLog.find((x) => x.type === 'tool.finished');
      expect(glob?.type === 'tool.finished' && glob.data.outcome).toBe('ok');
    },
    SLOW,
  );
});

function esc(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
