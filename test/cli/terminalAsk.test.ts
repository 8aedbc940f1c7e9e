/**
 * Parallel sub-agents share one interactive askUser: their questions are put one at a time, in
 * the order they were asked, so the answer typed for one cannot go to another.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { oneAtATime, terminalAsk } from '../../src/cli/terminalAsk.ts';
import type { AskUser, PermissionRequest } from '../../src/tools/types.ts';
import { rawControls } from '../support/terminal.ts';

const request = (command: string, cwd = '/nonexistent') =>
  ({ tool: { name: 'Bash' }, input: { command }, cwd }) as unknown as PermissionRequest;

/** Resolves once `text` has appeared in what was written so far. */
function waitFor(output: { text: string; waiters: (() => void)[] }, text: string): Promise<void> {
  return new Promise((resolve) => {
    const check = () => (output.text.includes(text) ? resolve() : output.waiters.push(check));
    check();
  });
}

function terminal() {
  const input = new PassThrough();
  const stream = new PassThrough();
  const output = { text: '', waiters: [] as (() => void)[] };
  stream.setEncoding('utf8').on('data', (d: string) => {
    output.text += d;
    for (const w of output.waiters.splice(0)) w();
  });
  return { input, stream, output };
}

describe('the terminal prompt', () => {
  it('puts parallel questions one at a time, in order, each answer to its own question', async () => {
    const { input, stream, output } = terminal();
    const ask = terminalAsk(input, stream);
    const first = ask(request('rm -rf build'), undefined);
    const second = ask(request('git push --force'), undefined);
    const third = ask(request('curl example.com'), undefined);
    await waitFor(output, 'rm -rf build');
    // Only the first question is on the terminal while it waits.
    await new Promise((r) => setImmediate(r));
    expect(output.text).not.toContain('git push');
    input.write('y\n');
    expect(await first).toBe(true);
    await waitFor(output, 'git push --force');
    expect(output.text).not.toContain('curl');
    input.write('n: not now\n');
    expect(await second).toEqual({ allow: false, message: 'not now' });
    await waitFor(output, 'curl example.com');
    input.write('yes\n');
    expect(await third).toBe(true);
    // In the order asked.
    const at = (s: string) => output.text.indexOf(s);
    expect(at('rm -rf build')).toBeLessThan(at('git push'));
    expect(at('git push')).toBeLessThan(at('curl'));
  });

  it('shows the question escaped: a model cannot rewrite the prompt on the terminal', async () => {
    const { input, stream, output } = terminal();
    const esc = String.fromCharCode(0x1b);
    const answer = terminalAsk(input, stream)(
      request(`ls${esc}[2K\r[y/N] y${String.fromCharCode(0x9b)}`),
      `why${esc}]0;t`,
    );
    await waitFor(output, '\n> ');
    input.write('no\n');
    await waitFor(output, 'why not?');
    input.write('\n');
    expect(await answer).toBe(false);
    expect(rawControls(output.text)).toEqual([]);
    expect(output.text).toContain('ls\\x1b[2K\\r[y/N] y\\x9b');
    expect(output.text).toContain('why\\x1b]0;t');
  });
});

describe('the choices, as Claude Code offers them', () => {
  it('shows the question once: the policy message adds only what the question does not say', async () => {
    const { input, stream, output } = terminal();
    const answer = terminalAsk(input, stream)(
      request('npm publish'),
      'Allow Bash: npm publish? The rule Bash(npm publish:*) asks for it.',
    );
    await waitFor(output, '\n> ');
    input.write('1\n');
    expect(await answer).toBe(true);
    // The command once, the rule in the reason and in the two "don't ask again" choices.
    expect(output.text.split('npm publish').length - 1).toBe(4);
    expect(output.text).not.toContain('Allow Bash: npm publish?');
    expect(output.text).toContain("2. yes, and don't ask again for Bash(npm publish) in this session");
    expect(output.text).toContain('(.claude/settings.local.json)');
  });

  it('an answer that is no choice asks again with a short line, not the whole question', async () => {
    const { input, stream, output } = terminal();
    const answer = terminalAsk(input, stream)(request('make'), undefined);
    await waitFor(output, '\n> ');
    input.write('maybe\n');
    await waitFor(output, 'answer 1-4');
    input.write('y\n');
    expect(await answer).toBe(true);
    expect(output.text.split('Allow Bash: make').length - 1).toBe(1);
  });

  it('"yes, don\'t ask again in this project" writes the rule to .claude/settings.local.json; the run asks no more', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'reloop-ask-'));
    try {
      const { input, stream, output } = terminal();
      const ask = terminalAsk(input, stream);
      const first = ask(request('npm run lint', dir), undefined);
      await waitFor(output, '\n> ');
      input.write('3\n');
      expect(await first).toBe(true);
      const saved = JSON.parse(await readFile(path.join(dir, '.claude', 'settings.local.json'), 'utf8'));
      expect(saved).toEqual({ permissions: { allow: ['Bash(npm run lint)'] } });
      const before = output.text.length;
      expect(await ask(request('npm run lint', dir), undefined)).toBe(true);
      expect(output.text.length).toBe(before);
      // Another command is asked.
      const other = ask(request('npm run build', dir), undefined);
      await waitFor(output, 'npm run build');
      input.write('n\n');
      await waitFor(output, 'why not?');
      input.write('too slow\n');
      expect(await other).toEqual({ allow: false, message: 'too slow' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('end of input (Ctrl-D) denies (Ctrl-C: test/cli/runPrompt.int.test.ts, in a terminal)', async () => {
    const { input, stream, output } = terminal();
    const answer = terminalAsk(input, stream)(request('ls'), undefined);
    await waitFor(output, '\n> ');
    input.end();
    expect(await answer).toMatchObject({ allow: false });
  });
});

describe('oneAtATime', () => {
  it('starts a question only after the one before has been answered or has failed', async () => {
    const started: string[] = [];
    const pending: ((v: boolean) => void)[] = [];
    const fails: ((e: Error) => void)[] = [];
    const inner: AskUser = (req) =>
      new Promise<boolean>((resolve, reject) => {
        started.push((req.input as { command: string }).command);
        pending.push(resolve);
        fails.push(reject);
      });
    const ask = oneAtATime(inner);
    const a = ask(request('a'), undefined);
    const b = ask(request('b'), undefined);
    const c = ask(request('c'), undefined);
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual(['a']);
    fails[0]!(new Error('terminal closed'));
    await expect(a).rejects.toThrow('terminal closed');
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual(['a', 'b']);
    pending[1]!(true);
    expect(await b).toBe(true);
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual(['a', 'b', 'c']);
    pending[2]!(false);
    expect(await c).toBe(false);
  });
});
