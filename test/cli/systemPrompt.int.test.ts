/**
 * `--system-prompt`, `--system-prompt-file`, `--append-system-prompt(-file)` on `reloop run`: the
 * system prompt the loopback Messages API received, the one `run.started` recorded, and replay.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SYSTEM_PROMPT } from '../../src/runtime/config.ts';
import type { LogRecord } from '../../src/store/records.ts';
import { jsonLines, onlyJson, runCli } from '../support/cli.ts';
import { type MessagesServer, startMessagesServer, textReply } from '../support/messagesServer.ts';

const SLOW = 60_000;
let cwd: string;
let server: MessagesServer;
beforeAll(async () => {
  cwd = await mkdtemp(path.join(tmpdir(), 'reloop-system-'));
  server = await startMessagesServer();
});
afterAll(async () => {
  await server.close();
  await rm(cwd, { recursive: true, force: true });
});

async function run(flags: string[]) {
  server.requests.length = 0;
  server.enqueue(textReply('ok'));
  const env = { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'sk-ant-test-0123456789abcdef' };
  const r = await runCli(['run', '--store', 'st', '--json', ...flags, 'go'], { cwd, env });
  expect(r.code, r.stderr).toBe(0);
  const id = onlyJson<{ sessionId: string }>(r).sessionId;
  const log = jsonLines<LogRecord>(await readFile(path.join(cwd, 'st', 'sessions', `${id}.jsonl`), 'utf8'));
  const started = log.find((x) => x.type === 'run.started');
  const verify = await runCli(['replay', id, '--verify', '--store', 'st'], { cwd });
  expect(verify.code, verify.stdout).toBe(0);
  return {
    sent: server.requests[0]?.body.system,
    recorded: started?.type === 'run.started' ? started.data.config.system : undefined,
  };
}

describe('system prompt flags', () => {
  it(
    '--system-prompt replaces the default; --append-system-prompt adds to it, after a blank line',
    async () => {
      expect(await run(['--system-prompt', 'You are terse.'])).toEqual({
        sent: 'You are terse.',
        recorded: 'You are terse.',
      });
      const appended = `${DEFAULT_SYSTEM_PROMPT}\n\nRun npm test before you stop.`;
      expect(await run(['--append-system-prompt', 'Run npm test before you stop.'])).toEqual({
        sent: appended,
        recorded: appended,
      });
    },
    SLOW,
  );

  it(
    '--system-prompt-file and --append-system-prompt-file are read from files; append goes after the given prompt',
    async () => {
      await writeFile(path.join(cwd, 'prompt.md'), 'You review code.\nBe brief.');
      await writeFile(path.join(cwd, 'extra.md'), 'Never push.');
      expect(
        (await run(['--system-prompt-file', 'prompt.md', '--append-system-prompt', 'Cite files.'])).sent,
      ).toBe('You review code.\nBe brief.\n\nCite files.');
      expect((await run(['--append-system-prompt-file', 'extra.md'])).sent).toBe(
        `${DEFAULT_SYSTEM_PROMPT}\n\nNever push.`,
      );
    },
    SLOW,
  );

  it(
    'both forms of one flag, or a file that cannot be read, is bad usage before anything runs',
    async () => {
      const env = { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'sk-ant-test-0123456789abcdef' };
      server.requests.length = 0;
      const both = await runCli(
        ['run', '--store', 'st2', '--system-prompt', 'a', '--system-prompt-file', 'prompt.md', 'go'],
        { cwd, env },
      );
      expect([both.code, both.stderr.trim()]).toEqual([
        2,
        'reloop: --system-prompt and --system-prompt-file cannot be used together [USAGE]',
      ]);
      const missing = await runCli(['run', '--store', 'st2', '--system-prompt-file', 'nope.md', 'go'], {
        cwd,
        env,
      });
      expect(missing.code).toBe(2);
      expect(missing.stderr).toMatch(
        /^reloop: --system-prompt-file nope\.md: cannot be read \(ENOENT.*\) \[SYSTEM_PROMPT_UNREADABLE\]\n$/,
      );
      expect(server.requests).toHaveLength(0);
    },
    SLOW,
  );
});
