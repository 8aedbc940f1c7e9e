/**
 * `reloop chat` in a real pseudo-terminal (tmux, test/support/tmux.ts) against the loopback
 * Messages API: what a person types, what the screen shows, and what the log holds after.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';
import {
  type MessagesServer,
  startMessagesServer,
  textReply,
  toolUseReply,
} from '../support/messagesServer.ts';
import { Tmux } from '../support/tmux.ts';

const SLOW = 240_000;
let root: string;
let server: MessagesServer;
const open: Tmux[] = [];

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'reloop-chat-'));
  server = await startMessagesServer({ apiKey: 'sk-test' });
});
afterEach(async () => {
  for (const t of open.splice(0)) await t.kill();
});
afterAll(async () => {
  await server.close();
  await rm(root, { recursive: true, force: true });
});

const env = () => ({ ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'sk-test' });

async function chat(cwd: string, args: string[] = []): Promise<Tmux> {
  const t = await Tmux.start(['chat', '--store', 'st', ...args], { cwd, env: env() });
  open.push(t);
  await t.waitFor((s) => /(^|\n)>$/.test(s), 'the first prompt');
  return t;
}

interface Rec {
  seq: number;
  type: string;
  run: string | null;
  data: Record<string, unknown> & { reason?: string; message?: { role: string; content: unknown } };
}

async function logOf(cwd: string, sessions = 1): Promise<{ id: string; records: Rec[] }> {
  const dir = path.join(cwd, 'st', 'sessions');
  const files = (await readdir(dir)).filter((f) => f.endsWith('.jsonl')).sort();
  expect(files).toHaveLength(sessions);
  const text = await readFile(path.join(dir, files[0]!), 'utf8');
  return {
    id: files[0]!.slice(0, -'.jsonl'.length),
    records: text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Rec),
  };
}

async function verifies(cwd: string, id: string): Promise<void> {
  const r = await runCli(['replay', id, '--verify', '--store', 'st'], { cwd });
  expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
}

async function project(name: string): Promise<string> {
  const cwd = await mkdtemp(path.join(root, `${name}-`));
  await writeFile(path.join(cwd, 'todo.txt'), 'ship it\n');
  return cwd;
}

describe('reloop chat in a terminal', () => {
  it(
    'two prompts are two runs of one session: streamed text, the tool call and its result, a status line per transition',
    async () => {
      const cwd = await project('turns');
      server.enqueue(
        toolUseReply(
          'Glob',
          { pattern: '*.txt' },
          { toolUseId: 'toolu_g1', text: 'Looking around.', chunkSize: 3 },
        ),
        textReply('There is todo.txt.', { chunkSize: 2 }),
        textReply('Still just todo.txt.'),
      );
      const t = await chat(cwd);
      await t.type('What files are there?');
      await t.keys('Enter');
      let screen = await t.waitForIdle(1);
      expect(screen).toContain('> What files are there?');
      expect(screen).toContain('  Looking around.');
      expect(screen).toContain('⏺ Glob {"pattern":"*.txt"}');
      expect(screen).toContain('⎿ todo.txt');
      expect(screen).toContain('requesting → dispatchingTools · tool_use_requested · turn 1 · $');
      expect(screen).toContain('There is todo.txt.');
      expect(screen).toMatch(/✓ completed \(completed\) · 2 turns/);
      await t.type('And now?');
      await t.keys('Enter');
      screen = await t.waitForIdle(2);
      expect(screen).toContain('Still just todo.txt.');
      await t.keys('C-d');
      screen = await t.waitFor((s) => s.includes('continue it:'), 'the goodbye line');
      const { id, records } = await logOf(cwd);
      expect(screen).toContain(`chat --resume ${id}`);
      const runs = records.filter((r) => r.type === 'run.ended');
      expect(runs.map((r) => r.data.status)).toEqual(['completed', 'completed']);
      const prompts = records.filter((r) => r.type === 'user.message').map((r) => r.data.message?.content);
      expect(prompts).toEqual(['What files are there?', 'And now?']);
      // The screen's status lines are the log's transitions.
      const reasons = records.filter((r) => r.type === 'transition').map((r) => r.data.reason);
      const shown = screen.split('\n').flatMap((l) => /^ {4}· \S+ → \S+ · (\S+) · turn/.exec(l)?.[1] ?? []);
      expect(shown).toEqual(reasons);
      await verifies(cwd, id);
    },
    SLOW,
  );

  it(
    'Esc mid-stream aborts the run (logged), the prompt comes back and the session goes on; /fork continues in a fork; both logs verify',
    async () => {
      const cwd = await project('esc-stream');
      server.enqueue(
        { kind: 'hold', partial: textReply('Streaming some words that never end'), afterEvents: 4 },
        textReply('Back again.'),
      );
      const t = await chat(cwd);
      await t.type('Talk.');
      await t.keys('Enter');
      await t.waitFor((s) => s.includes('  Strea'), 'the first words');
      await t.keys('Escape');
      let screen = await t.waitForIdle(1);
      expect(screen).toContain('(interrupting: Esc)');
      expect(screen).toContain('✗ aborted (aborted)');
      await t.type('Again.');
      await t.keys('Enter');
      screen = await t.waitForIdle(2);
      expect(screen).toContain('Back again.');
      await t.type('/fork');
      await t.keys('Enter');
      screen = await t.waitFor((s) => /forked (\S+)@\d+ → (\S+) /.test(s), 'the fork');
      const [, source, forked] = /forked (\S+)@\d+ → (\S+) /.exec(screen)!;
      await t.keys('C-d');
      screen = await t.waitFor((s) => s.includes('continue it:'), 'the goodbye line');
      expect(screen).toContain(`chat --resume ${forked}`);
      await logOf(cwd, 2);
      const id = source!;
      const records = (await readFile(path.join(cwd, 'st', 'sessions', `${id}.jsonl`), 'utf8'))
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as Rec);
      await verifies(cwd, forked!);
      expect(records.find((r) => r.type === 'abort.requested')?.data.reason).toBe(
        'interrupted by the user (Esc)',
      );
      expect(records.filter((r) => r.type === 'run.ended').map((r) => r.data.status)).toEqual([
        'aborted',
        'completed',
      ]);
      await verifies(cwd, id);
    },
    SLOW,
  );

  it(
    'Esc mid-tool aborts the running command and pairs its tool_use; Ctrl-C twice exits',
    async () => {
      const cwd = await project('esc-tool');
      server.enqueue(toolUseReply('Bash', { command: 'sleep 60' }, { toolUseId: 'toolu_sleep' }));
      const t = await chat(cwd, ['--allow', 'Bash(sleep 60)']);
      await t.type('Wait a minute.');
      await t.keys('Enter');
      await t.waitFor((s) => s.includes('⏺ Bash {"command":"sleep 60"}'), 'the tool call');
      await t.keys('Escape');
      const screen = await t.waitForIdle(1);
      expect(screen).toContain('✗ aborted (aborted)');
      await t.keys('C-c');
      await t.waitFor((s) => s.includes('(Ctrl-C again or Ctrl-D to exit)'), 'the exit hint');
      await t.keys('C-c');
      await t.waitFor((s) => s.includes('continue it:'), 'the goodbye line');
      const { id, records } = await logOf(cwd);
      const finished = records.find((r) => r.type === 'tool.finished');
      expect(finished?.data).toMatchObject({ toolUseId: 'toolu_sleep' });
      expect(['interrupted', 'error']).toContain(finished?.data.outcome);
      expect(records.filter((r) => r.type === 'run.ended').map((r) => r.data.status)).toEqual(['aborted']);
      await verifies(cwd, id);
    },
    SLOW,
  );

  it(
    'kill -9 leaves a session that -c continues',
    async () => {
      const cwd = await project('kill');
      server.enqueue({ kind: 'hold', partial: textReply('Half a thought'), afterEvents: 4 });
      const t = await chat(cwd);
      await t.type('Think.');
      await t.keys('Enter');
      await t.waitFor((s) => s.includes('  Half'), 'the first words');
      process.kill(await t.pid(), 'SIGKILL');
      for (let i = 0; i < 600 && !(await t.dead()); i++) await new Promise((r) => setTimeout(r, 100));
      expect(await t.dead()).toBe(true);
      const before = await logOf(cwd);
      expect(before.records.some((r) => r.type === 'run.ended')).toBe(false);

      server.enqueue(textReply('Where was I? Done.'));
      const again = await chat(cwd, ['-c']);
      let screen = await again.waitFor((s) => s.includes(`session ${before.id}`), 'the continued session');
      expect(screen).toContain('interrupted');
      await again.type('Go on.');
      await again.keys('Enter');
      screen = await again.waitForIdle(1);
      expect(screen).toContain('Where was I? Done.');
      await again.keys('C-d');
      await again.waitFor((s) => s.includes('continue it:'), 'the goodbye line');
      const after = await logOf(cwd);
      expect(after.id).toBe(before.id);
      const ended = after.records.filter((r) => r.type === 'run.ended').map((r) => r.data.reason);
      expect(ended).toEqual(['interrupted', 'completed']);
      await verifies(cwd, after.id);
    },
    SLOW,
  );

  it(
    'permission asks inline: yes for the session, yes for the project, no with a reason',
    async () => {
      const cwd = await project('ask');
      server.enqueue(
        toolUseReply('Bash', { command: 'echo hi' }, { toolUseId: 'toolu_b1' }),
        toolUseReply('Bash', { command: 'echo hi' }, { toolUseId: 'toolu_b2' }),
        toolUseReply('Write', { file_path: 'notes.md', content: 'n\n' }, { toolUseId: 'toolu_w1' }),
        toolUseReply('Bash', { command: 'echo bye' }, { toolUseId: 'toolu_b3' }),
        textReply('All asked.'),
      );
      const t = await chat(cwd);
      await t.type('Do things.');
      await t.keys('Enter');
      await t.waitFor((s) => s.includes('? Allow Bash: echo hi') && /answer:$/.test(s), 'the first question');
      expect(await t.screen()).toContain("2. yes, and don't ask again for Bash(echo hi) in this session");
      await t.type('2');
      await t.keys('Enter');
      await t.waitFor((s) => s.includes('? Allow Write') && /answer:$/.test(s), 'the Write question');
      await t.type('3');
      await t.keys('Enter');
      await t.waitFor((s) => s.includes('? Allow Bash: echo bye') && /answer:$/.test(s), 'the last question');
      await t.type('n: not now, thanks');
      await t.keys('Enter');
      const screen = await t.waitForIdle(1);
      expect(screen).toContain('All asked.');
      // The second `echo hi` was not asked.
      expect(screen.split('? Allow Bash: echo hi').length).toBe(2);
      await t.keys('C-d');
      await t.waitFor((s) => s.includes('continue it:'), 'the goodbye line');
      const local = JSON.parse(await readFile(path.join(cwd, '.claude', 'settings.local.json'), 'utf8'));
      expect(local).toEqual({ permissions: { allow: ['Write(notes.md)'] } });
      const { id, records } = await logOf(cwd);
      const decided = records.filter((r) => r.type === 'permission.decided').map((r) => r.data);
      expect(decided.map((d) => [d.toolUseId, d.resolved, d.by])).toEqual([
        ['toolu_b1', 'allow', 'user'],
        ['toolu_b2', 'allow', expect.stringContaining('Bash(echo hi)')],
        ['toolu_w1', 'allow', 'user'],
        ['toolu_b3', 'deny', 'user'],
      ]);
      expect(decided[3]?.message).toBe('not now, thanks');
      const denied = records.find((r) => r.type === 'tool.finished' && r.data.toolUseId === 'toolu_b3');
      expect(JSON.stringify(denied?.data.result)).toContain('not now, thanks');
      await verifies(cwd, id);
    },
    SLOW,
  );

  it(
    'keys typed while a reply streams show under it, backspace applied, and start the next prompt',
    async () => {
      const cwd = await project('typeahead');
      const words = 'Streaming slowly, one character at a time, so you can type.';
      server.enqueue(textReply(words, { chunkSize: 1, eventDelayMs: 60 }), textReply('Second answer.'));
      const t = await chat(cwd);
      await t.type('Talk slowly.');
      await t.keys('Enter');
      await t.waitFor((s) => s.includes('  Str'), 'the first words');
      await t.type('next questiox');
      await t.keys('BSpace');
      await t.type('n');
      // The dim line exists only while the run goes: the prompt after it is drawn with `>`.
      await t.waitFor((s) => s.includes('› next question'), 'the typeahead under the streaming reply');
      let screen = await t.waitFor(
        (s) => s.split('\n').some((l) => /^✓ /.test(l)) && /\n> next question$/.test(s),
        'the prompt holding the typeahead',
      );
      expect(screen).toContain(words);
      expect(screen).not.toContain('› next question');
      await t.keys('Enter');
      screen = await t.waitForIdle(2);
      expect(screen).toContain('Second answer.');
      await t.keys('C-d');
      await t.waitFor((s) => s.includes('continue it:'), 'the goodbye line');
      const { id, records } = await logOf(cwd);
      const prompts = records.filter((r) => r.type === 'user.message').map((r) => r.data.message?.content);
      expect(prompts).toEqual(['Talk slowly.', 'next question']);
      await verifies(cwd, id);
    },
    SLOW,
  );

  it(
    'a paste of 10 000 characters is one prompt, newline and all; bytes that are not UTF-8 arrive as U+FFFD; a resize redraws the line',
    async () => {
      const cwd = await project('paste');
      server.enqueue(textReply('Got the paste.'), textReply('Got the bytes.'));
      const t = await chat(cwd);
      const pasted = `${'a'.repeat(5000)}\n${'b'.repeat(4999)}`;
      await t.paste(pasted);
      await t.waitFor((s) => /bbbb$/.test(s), 'the end of the paste on the prompt line');
      await t.keys('Enter');
      let screen = await t.waitForIdle(1);
      expect(screen).toContain('(10000 characters)');
      await t.type('caf');
      await t.bytes('ff', 'fe');
      await t.type('e and more words');
      await t.waitFor((s) => s.endsWith('more words'), 'the typed line');
      await t.resize(60, 20);
      await t.type(' after');
      await t.waitFor((s) => s.endsWith('after'), 'the line after the resize');
      await t.keys('Enter');
      screen = await t.waitForIdle(2);
      expect(screen).toContain('> caf\uFFFD\uFFFDe and more words after');
      await t.keys('C-d');
      await t.waitFor((s) => s.includes('continue it:'), 'the goodbye line');
      const { id, records } = await logOf(cwd);
      const prompts = records.filter((r) => r.type === 'user.message').map((r) => r.data.message?.content);
      expect(prompts).toEqual([pasted, 'caf\uFFFD\uFFFDe and more words after']);
      await verifies(cwd, id);
    },
    SLOW,
  );

  it(
    '/compact is a manual compaction run of the session; /status and /cost read it; the log verifies',
    async () => {
      const cwd = await project('compact');
      server.enqueue(textReply('A long answer.'), textReply('SUMMARY: the user asked, I answered.'));
      const t = await chat(cwd);
      await t.type('Tell me things.');
      await t.keys('Enter');
      await t.waitForIdle(1);
      await t.type('/compact');
      await t.keys('Enter');
      let screen = await t.waitFor(
        (s) => /✓ compacted: 2 messages → \d+ \(the summary/.test(s),
        'the compaction',
      );
      await t.type('/status');
      await t.keys('Enter');
      screen = await t.waitFor((s) => s.includes('state:   completed (manual_compacted)'), 'the status');
      expect(screen).toContain('mode:    default');
      await t.keys('C-d');
      await t.waitFor((s) => s.includes('continue it:'), 'the goodbye line');
      const { id, records } = await logOf(cwd);
      const reasons = records.filter((r) => r.type === 'transition').map((r) => r.data.reason);
      expect(reasons.slice(-2)).toEqual(['manual_compact', 'manual_compacted']);
      expect(records.find((r) => r.type === 'compaction.finished')?.data).toMatchObject({
        ok: true,
        mode: 'manual',
      });
      await verifies(cwd, id);
    },
    SLOW,
  );
});
