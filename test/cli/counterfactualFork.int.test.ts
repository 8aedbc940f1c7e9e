/**
 * `reloop fork <id> --at <seq> --response <file.json>` and `--tool-result <toolUseId>=<file>`:
 * the real CLI forks a recorded session with one record replaced, `run --resume` of the fork with a
 * script continues from it (the new response's tool calls run first), and `replay --verify` of the
 * fork passes. Bad files and flags are refused with one line naming the file and the problem.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LogRecord } from '../../src/store/records.ts';
import { jsonLines, onlyJson, runCli } from '../support/cli.ts';

const SLOW = 180_000;
let cwd: string;
let store: string;
let source: string;
let sourceRecords: LogRecord[];

async function writeJson(name: string, value: unknown): Promise<string> {
  const file = path.join(cwd, name);
  await writeFile(file, JSON.stringify(value));
  return file;
}

async function logOf(id: string): Promise<LogRecord[]> {
  const r = await runCli(['log', id, '--json', '--store', store], { cwd });
  expect(r.code, r.stderr).toBe(0);
  return jsonLines<LogRecord>(r.stdout);
}

beforeAll(async () => {
  cwd = await mkdtemp(path.join(tmpdir(), 'reloop-cf-fork-'));
  store = path.join(cwd, 'store');
  await writeFile(path.join(cwd, 'notes.txt'), 'remember the milk\n');
  await writeFile(path.join(cwd, 'plan.md'), '# plan\n');
  const script = await writeJson('s1.json', {
    turns: [
      {
        content: [{ type: 'tool_use', id: 'tu_glob', name: 'Glob', input: { pattern: '*.txt' } }],
        stop_reason: 'tool_use',
      },
      { text: 'There is one note: notes.txt.' },
    ],
  });
  const r = await runCli(['run', '--script', script, '--store', store, '--json', 'What notes are there?'], {
    cwd,
  });
  expect(r.code, r.stderr).toBe(0);
  source = onlyJson<{ sessionId: string }>(r).sessionId;
  sourceRecords = await logOf(source);
}, SLOW);

afterAll(async () => {
  if (cwd) await rm(cwd, { recursive: true, force: true });
});

const responseSeq = () => sourceRecords.find((r) => r.type === 'model.responded')!.seq;

describe('reloop fork --response / --tool-result', () => {
  it(
    'a replaced response: the fork runs its tool call on run --resume with a script, and replays identically',
    async () => {
      const at = responseSeq();
      const sourceFile = path.join(store, 'sessions', `${source}.jsonl`);
      const before = await readFile(sourceFile);
      const response = await writeJson('markdown.json', {
        content: [{ type: 'tool_use', id: 'tu_md', name: 'Glob', input: { pattern: '*.md' } }],
        stop_reason: 'tool_use',
      });
      const f = await runCli(
        ['fork', source, '--at', String(at), '--response', response, '--json', '--store', store],
        {
          cwd,
        },
      );
      expect(f.code, f.stderr).toBe(0);
      const fork = onlyJson<{
        sessionId: string;
        replacedSeq: number;
        type: string;
        state: string;
        toolsPending: boolean;
      }>(f);
      expect(fork).toMatchObject({
        replacedSeq: at,
        type: 'model.responded',
        state: 'dispatchingTools',
        toolsPending: true,
      });
      expect(await readFile(sourceFile)).toEqual(before);

      const s2 = await writeJson('s2.json', { turns: [{ text: 'There is a plan: plan.md.' }] });
      const r = await runCli(
        ['run', '--resume', fork.sessionId, '--script', s2, '--store', store, '--json'],
        { cwd },
      );
      expect(r.code, r.stderr).toBe(0);
      expect(onlyJson(r)).toMatchObject({ sessionId: fork.sessionId, status: 'completed' });

      const log = await logOf(fork.sessionId);
      const glob = log.find((x) => x.type === 'tool.finished');
      expect(glob?.data).toMatchObject({ toolUseId: 'tu_md', name: 'Glob', outcome: 'ok' });
      expect(JSON.stringify(glob?.data)).toContain('plan.md');
      expect(JSON.stringify(glob?.data)).not.toContain('notes.txt');
      expect(log[0]!.type === 'session.created' && log[0]!.data.forkedFrom).toEqual({
        session: source,
        seq: at - 1,
      });

      const v = await runCli(['replay', fork.sessionId, '--verify', '--store', store], { cwd });
      expect(v.code, v.stderr + v.stdout).toBe(0);
      expect(v.stdout).toContain('ok');

      // The viewer's fork diff: the first difference is the response, both contents shown.
      const page = path.join(cwd, 'fork.html');
      const viz = await runCli(['viz', fork.sessionId, '--format', 'html', '--out', page, '--store', store], {
        cwd,
      });
      expect(viz.code, viz.stderr).toBe(0);
      const html = await readFile(page, 'utf8');
      expect(html).toContain('"firstDifference":{"seq":' + at);
      expect(html).toContain('"content":{"source":');
      expect(html).toContain('tu_md');
    },
    SLOW,
  );

  it(
    'a replaced tool result (a text file): the fork asks the model next, and replays identically',
    async () => {
      const result = path.join(cwd, 'result.txt');
      await writeFile(result, 'secret.txt\n');
      const f = await runCli(['fork', source, '--tool-result', `tu_glob=${result}`, '--store', store], {
        cwd,
      });
      expect(f.code, f.stderr).toBe(0);
      expect(f.stdout).toMatch(
        /^forked \S+ with the result of tu_glob at seq \d+ replaced → (\S+) \(waits in building\)\n/,
      );
      const id = /→ (\S+)/.exec(f.stdout)![1]!;
      const s2 = await writeJson('s3.json', { turns: [{ text: 'There is secret.txt.' }] });
      const r = await runCli(['run', '--resume', id, '--script', s2, '--store', store, '--json'], { cwd });
      expect(r.code, r.stderr).toBe(0);
      const log = await logOf(id);
      const messages = log
        .filter((x) => x.type === 'model.requested')
        .map((x) => x.type === 'model.requested' && x.data.messageCount);
      expect(messages).toEqual([1, 3]);
      const finished = log.find((x) => x.type === 'tool.finished');
      expect(finished?.data).toMatchObject({
        outcome: 'ok',
        result: { content: 'secret.txt\n', isError: false },
      });
      const v = await runCli(['replay', id, '--verify', '--store', store], { cwd });
      expect(v.code, v.stderr + v.stdout).toBe(0);
    },
    SLOW,
  );

  it(
    'refuses bad files and flags with one line naming the file and the problem, writing nothing',
    async () => {
      const at = responseSeq();
      const bad = await writeJson('bad.json', {
        content: [{ type: 'tool_use', id: 'x' }],
        stop_reason: 'tool_use',
      });
      const apiError = await writeJson('error.json', { error: { status: 500 } });
      const notJson = path.join(cwd, 'broken.json');
      await writeFile(notJson, '{"text": ');
      const good = await writeJson('good.json', { text: 'fine', stop_reason: 'end_turn' });
      const text = path.join(cwd, 'any.txt');
      await writeFile(text, 'anything');
      const cases: [string[], number, RegExp][] = [
        [
          ['--at', String(at), '--response', bad],
          1,
          /^reloop: .*bad\.json: content\.0\.name: .* \[REPLACEMENT_INVALID\]\n$/,
        ],
        [
          ['--at', String(at), '--response', apiError],
          1,
          /error\.json: an API error or an abort is not a response/,
        ],
        [['--at', String(at), '--response', notJson], 1, /broken\.json: not valid JSON/],
        [
          ['--at', String(at), '--response', path.join(cwd, 'missing.json')],
          1,
          /no such file: .*missing\.json \[ENOENT\]/,
        ],
        [
          ['--at', '1', '--response', good],
          1,
          /seq 1 is a session\.created record, not a model\.responded .*\[FORK_REPLACEMENT\]/,
        ],
        [['--response', bad], 2, /--response needs --at <seq>/],
        [['--at', String(at), '--response', bad, '--tool-result', 'a=b'], 2, /give one of them/],
        [['--tool-result', 'tu_glob'], 2, /--tool-result takes <toolUseId>=<file>/],
        [['--tool-result', `nope=${text}`], 1, /no tool\.finished record for tool call nope/],
      ];
      const sessionsBefore = (await runCli(['sessions', '--json', '--store', store], { cwd })).stdout;
      for (const [args, code, message] of cases) {
        const r = await runCli(['fork', source, ...args, '--store', store], { cwd });
        expect(r.code, args.join(' ')).toBe(code);
        expect(r.stdout, args.join(' ')).toBe('');
        expect(r.stderr, args.join(' ')).toMatch(message);
        expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      }
      expect((await runCli(['sessions', '--json', '--store', store], { cwd })).stdout).toBe(sessionsBefore);
    },
    SLOW,
  );
});
