/**
 * `reloop run`'s permission prompt in a real pseudo-terminal (tmux, test/support/tmux.ts) against
 * the loopback Messages API: the choices Claude Code offers, what the model is told, the rule
 * saved to `.claude/settings.local.json`, and Ctrl-C at the prompt ending the run `aborted`.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
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
  root = await mkdtemp(path.join(tmpdir(), 'reloop-run-prompt-'));
  server = await startMessagesServer({ apiKey: 'sk-test' });
});
afterEach(async () => {
  for (const t of open.splice(0)) await t.kill();
});
afterAll(async () => {
  await server.close();
  await rm(root, { recursive: true, force: true });
});

async function project(name: string): Promise<string> {
  const cwd = await mkdtemp(path.join(root, `${name}-`));
  await writeFile(path.join(cwd, 'a.txt'), 'a\n');
  return cwd;
}

async function run(cwd: string): Promise<Tmux> {
  const t = await Tmux.start(['run', '--model', 'claude-sonnet-4-6', '--store', 'st', 'Do it.'], {
    cwd,
    env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'sk-test' },
  });
  open.push(t);
  return t;
}

async function records(cwd: string): Promise<{ type: string; data: Record<string, unknown> }[]> {
  const dir = path.join(cwd, 'st', 'sessions');
  const [file] = (await readdir(dir)).filter((f) => f.endsWith('.jsonl'));
  const text = await readFile(path.join(dir, file!), 'utf8');
  return text
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l));
}

describe('reloop run asks in the terminal', () => {
  it(
    'no, with a reason: the model is told the reason; the question is on the screen once',
    async () => {
      const cwd = await project('reason');
      server.enqueue(
        toolUseReply('Bash', { command: 'touch made.txt' }, { toolUseId: 'toolu_1' }),
        textReply('OK.'),
      );
      const t = await run(cwd);
      await t.waitFor((s) => /\n> $/.test(`${s} `) || s.endsWith('>'), 'the choices');
      const screen = await t.screen();
      expect(screen.split('Allow Bash: touch made.txt').length - 1).toBe(1);
      expect(screen).toContain('1. yes');
      expect(screen).toContain("3. yes, and don't ask again for Bash(touch made.txt) in this project");
      await t.type('n: use the Write tool instead');
      await t.keys('Enter');
      await t.waitFor((s) => s.includes('completed'), 'the end of the run');
      const sent = JSON.stringify(server.requests.at(-1)?.body.messages);
      expect(sent).toContain('use the Write tool instead');
      const decided = (await records(cwd)).find((r) => r.type === 'permission.decided');
      expect(decided?.data).toMatchObject({ resolved: 'deny', by: 'user' });
    },
    SLOW,
  );

  it(
    "yes, and don't ask again in this project: the rule goes to .claude/settings.local.json and allows the next run",
    async () => {
      const cwd = await project('always');
      server.enqueue(
        toolUseReply('Bash', { command: 'touch made.txt' }, { toolUseId: 'toolu_1' }),
        textReply('OK.'),
      );
      const t = await run(cwd);
      await t.waitFor((s) => s.includes('3. yes'), 'the choices');
      await t.type('3');
      await t.keys('Enter');
      await t.waitFor((s) => s.includes('completed'), 'the end of the run');
      const saved = JSON.parse(await readFile(path.join(cwd, '.claude', 'settings.local.json'), 'utf8'));
      expect(saved).toEqual({ permissions: { allow: ['Bash(touch made.txt)'] } });
      // The next run reads it as localSettings: nobody is asked.
      await rm(path.join(cwd, 'st'), { recursive: true, force: true });
      server.enqueue(
        toolUseReply('Bash', { command: 'touch made.txt' }, { toolUseId: 'toolu_2' }),
        textReply('OK.'),
      );
      const again = await run(cwd);
      await again.waitFor((s) => s.includes('completed'), 'the second run');
      expect(await again.screen()).not.toContain('1. yes');
      const decided = (await records(cwd)).find((r) => r.type === 'permission.decided');
      expect(decided?.data).toMatchObject({
        resolved: 'allow',
        by: 'localSettings allow Bash(touch made.txt)',
      });
    },
    SLOW,
  );

  it(
    'Ctrl-C at the prompt ends the run aborted, the call not run',
    async () => {
      const cwd = await project('ctrlc');
      server.enqueue(toolUseReply('Bash', { command: 'touch made.txt' }, { toolUseId: 'toolu_1' }));
      const t = await run(cwd);
      await t.waitFor((s) => s.includes('1. yes'), 'the choices');
      await t.keys('C-c');
      await t.waitFor((s) => /aborted/.test(s), 'the aborted run');
      const recs = await records(cwd);
      const ended = recs.find((r) => r.type === 'run.ended');
      expect(ended?.data).toMatchObject({ status: 'aborted' });
      expect(recs.some((r) => r.type === 'tool.finished' && r.data.outcome === 'ok')).toBe(false);
      await expect(readFile(path.join(cwd, 'made.txt'))).rejects.toThrow();
    },
    SLOW,
  );
});
