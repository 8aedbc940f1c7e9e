/**
 * A Claude Code project's permission rules under `reloop run`: `.claude/settings.json`,
 * `.claude/settings.local.json`, the user's `~/.claude/settings.json` (a scratch home), managed
 * settings and `--settings`, as Claude Code resolves them. The real CLI against the loopback
 * Messages API; each case reads what the model was sent and what the log holds.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { LogRecord, RecordOf } from '../../src/store/records.ts';
import { type CliResult, jsonLines, onlyJson, runCli } from '../support/cli.ts';
import {
  type MessagesServer,
  startMessagesServer,
  textReply,
  toolUseReply,
} from '../support/messagesServer.ts';

const SLOW = 120_000;

let root: string;
let server: MessagesServer;
beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'reloop-settings-perms-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});
beforeEach(async () => {
  server = await startMessagesServer({ apiKey: 'sk-test' });
});
afterEach(async () => {
  expect(server.pending()).toBe(0);
  await server.close();
});

let n = 0;
/** A project with `.claude/<file>` for each entry of `files`, a secret and a package.json. */
async function project(files: Record<string, unknown>): Promise<string> {
  const dir = path.join(root, `p${++n}`);
  await mkdir(path.join(dir, '.claude'), { recursive: true });
  await mkdir(path.join(dir, 'secrets'), { recursive: true });
  await writeFile(path.join(dir, 'secrets', 'key.txt'), 'THE-SECRET-VALUE');
  await writeFile(path.join(dir, 'notes.txt'), 'plain notes');
  await writeFile(
    path.join(dir, 'package.json'),
    JSON.stringify({ name: 'p', version: '1.0.0', scripts: { test: 'echo tests-ran-ok' } }),
  );
  for (const [name, json] of Object.entries(files)) {
    await writeFile(path.join(dir, '.claude', name), typeof json === 'string' ? json : JSON.stringify(json));
  }
  return dir;
}

async function run(cwd: string, flags: string[] = [], env: Record<string, string> = {}): Promise<CliResult> {
  return runCli(
    [
      'run',
      '--model',
      'claude-sonnet-4-6',
      '--store',
      'st',
      '--json',
      '--on-ask',
      'deny',
      ...flags,
      'Do the thing.',
    ],
    { cwd, env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'sk-test', ...env }, timeoutMs: SLOW },
  );
}

async function logOf(cwd: string, r: CliResult): Promise<LogRecord[]> {
  const { sessionId } = onlyJson<{ sessionId: string }>(r);
  return jsonLines<LogRecord>(await readFile(path.join(cwd, 'st', 'sessions', `${sessionId}.jsonl`), 'utf8'));
}
const decisions = (log: LogRecord[]) =>
  log
    .filter((r): r is RecordOf<'permission.decided'> => r.type === 'permission.decided')
    .map((r) => ({ name: r.data.name, resolved: r.data.resolved, by: r.data.by }));
/** Everything the model was sent after its first reply (the tool results). */
const sentAfterFirst = () => JSON.stringify(server.requests.slice(1).map((q) => q.body.messages));

/** One tool call, then a closing text. */
function oneCall(name: string, input: unknown) {
  server.enqueue(toolUseReply(name, input, { toolUseId: 'toolu_1' }), textReply('Done.'));
}

describe('permission rules of the settings files reach the policy', () => {
  it(
    'a project deny Read(./secrets/**) stops the read; permission.decided.by names source and rule',
    async () => {
      const cwd = await project({ 'settings.json': { permissions: { deny: ['Read(./secrets/**)'] } } });
      oneCall('Read', { file_path: 'secrets/key.txt' });
      const r = await run(cwd);
      expect(r.code, r.stderr).toBe(0);
      expect(decisions(await logOf(cwd, r))).toEqual([
        { name: 'Read', resolved: 'deny', by: 'projectSettings deny Read(./secrets/**)' },
      ]);
      expect(sentAfterFirst()).not.toContain('THE-SECRET-VALUE');
      expect(sentAfterFirst()).toContain('denied');
    },
    SLOW,
  );

  it(
    'without the rule (--setting-sources "" reads no file) the same read goes through',
    async () => {
      const cwd = await project({ 'settings.json': { permissions: { deny: ['Read(./secrets/**)'] } } });
      oneCall('Read', { file_path: 'secrets/key.txt' });
      const r = await run(cwd, ['--setting-sources', '']);
      expect(r.code, r.stderr).toBe(0);
      expect(decisions(await logOf(cwd, r))).toEqual([
        { name: 'Read', resolved: 'allow', by: 'mode:default' },
      ]);
      expect(sentAfterFirst()).toContain('THE-SECRET-VALUE');
    },
    SLOW,
  );

  it(
    'a project allow Bash(npm test:*) allows npm test where nobody could be asked',
    async () => {
      const cwd = await project({ 'settings.json': { permissions: { allow: ['Bash(npm test:*)'] } } });
      oneCall('Bash', { command: 'npm test' });
      const r = await run(cwd);
      expect(r.code, r.stderr).toBe(0);
      expect(decisions(await logOf(cwd, r))).toEqual([
        { name: 'Bash', resolved: 'allow', by: 'projectSettings allow Bash(npm test:*)' },
      ]);
      expect(sentAfterFirst()).toContain('tests-ran-ok');
    },
    SLOW,
  );

  it(
    'the same command is not allowed without the rule (asked, and --on-ask deny denies it)',
    async () => {
      const cwd = await project({});
      oneCall('Bash', { command: 'npm test' });
      const r = await run(cwd);
      expect(r.code, r.stderr).toBe(0);
      expect(decisions(await logOf(cwd, r))).toEqual([
        { name: 'Bash', resolved: 'deny', by: 'noninteractive' },
      ]);
      expect(sentAfterFirst()).not.toContain('tests-ran-ok');
    },
    SLOW,
  );

  it(
    'deny anywhere beats allow anywhere: a local allow does not undo a user deny',
    async () => {
      const home = path.join(root, `home${n}`);
      await mkdir(path.join(home, '.claude'), { recursive: true });
      await writeFile(
        path.join(home, '.claude', 'settings.json'),
        JSON.stringify({ permissions: { deny: ['Bash(npm test:*)'] } }),
      );
      const cwd = await project({ 'settings.local.json': { permissions: { allow: ['Bash(npm test:*)'] } } });
      oneCall('Bash', { command: 'npm test' });
      const r = await run(cwd, ['--permission-mode', 'bypassPermissions'], { RELOOP_HOME: home });
      expect(r.code, r.stderr).toBe(0);
      expect(decisions(await logOf(cwd, r))).toEqual([
        { name: 'Bash', resolved: 'deny', by: 'userSettings deny Bash(npm test:*)' },
      ]);
    },
    SLOW,
  );

  it(
    'an ask rule asks even what an allow rule allows; --allow rules are cliArg',
    async () => {
      const cwd = await project({ 'settings.json': { permissions: { ask: ['Bash(npm test:*)'] } } });
      oneCall('Bash', { command: 'npm test' });
      const r = await run(cwd, ['--allow', 'Bash(npm test:*)']);
      expect(r.code, r.stderr).toBe(0);
      expect(decisions(await logOf(cwd, r))).toEqual([
        { name: 'Bash', resolved: 'deny', by: 'noninteractive' },
      ]);
      const asked = (await logOf(cwd, r)).find(
        (x) => x.type === 'permission.decided',
      ) as RecordOf<'permission.decided'>;
      expect(asked.data.decision).toBe('ask');
    },
    SLOW,
  );

  it(
    'managed settings and --settings add up with the project; the managed defaultMode wins',
    async () => {
      const managed = path.join(root, `managed${n}.json`);
      await writeFile(
        managed,
        JSON.stringify({ permissions: { defaultMode: 'dontAsk', deny: ['Read(notes.txt)'] } }),
      );
      const cwd = await project({});
      server.enqueue(
        {
          kind: 'message',
          content: [
            { type: 'tool_use', id: 'toolu_a', name: 'Read', input: { file_path: 'notes.txt' } },
            { type: 'tool_use', id: 'toolu_b', name: 'Bash', input: { command: 'npm test' } },
            { type: 'tool_use', id: 'toolu_c', name: 'Bash', input: { command: 'echo hi' } },
          ],
          stopReason: 'tool_use',
        },
        textReply('Done.'),
      );
      const r = await run(
        cwd,
        [
          '--permission-mode',
          'default',
          '--settings',
          JSON.stringify({ permissions: { allow: ['Bash(npm test:*)'] } }),
        ],
        { RELOOP_MANAGED_SETTINGS: managed },
      );
      expect(r.code, r.stderr).toBe(0);
      expect(decisions(await logOf(cwd, r))).toEqual([
        { name: 'Read', resolved: 'deny', by: 'policySettings deny Read(notes.txt)' },
        { name: 'Bash', resolved: 'allow', by: 'flagSettings allow Bash(npm test:*)' },
        { name: 'Bash', resolved: 'deny', by: 'mode:dontAsk' },
      ]);
    },
    SLOW,
  );

  it(
    'a rule that cannot be read is a warning naming the file and the rule, never a silent allow',
    async () => {
      const cwd = await project({
        'settings.json': { permissions: { allow: ['Bash(echo $(id))'], deny: ['Read(a/../b)'] } },
      });
      oneCall('Read', { file_path: 'notes.txt' });
      const r = await run(cwd);
      expect(r.code, r.stderr).toBe(0);
      const file = path.join(cwd, '.claude', 'settings.json');
      expect(r.stderr).toContain(`warning: ${file}: allow rule "Bash(echo $(id))" cannot be read`);
      expect(r.stderr).toContain(`warning: ${file}: deny rule "Read(a/../b)" cannot be read`);
      // The unreadable deny asks every Read instead: here nobody can answer, so it is denied.
      expect(decisions(await logOf(cwd, r))).toEqual([
        { name: 'Read', resolved: 'deny', by: 'noninteractive' },
      ]);
    },
    SLOW,
  );

  it(
    'a settings file that is not valid is bad usage naming it; nothing is written',
    async () => {
      const cwd = await project({ 'settings.json': '{ "permissions": { "allow": "Bash" } }' });
      const r = await run(cwd);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(path.join(cwd, '.claude', 'settings.json'));
      expect(r.stderr).toContain('permissions.allow');
    },
    SLOW,
  );
});

describe('Claude Code’s flags and the other permission settings', () => {
  const toolNames = () => (server.requests[0]?.body.tools ?? []).map((t) => t.name);

  it(
    '--allowedTools / --disallowedTools take rules, comma- or space-separated, as cliArg',
    async () => {
      const cwd = await project({});
      server.enqueue(
        {
          kind: 'message',
          content: [
            { type: 'tool_use', id: 'toolu_a', name: 'Bash', input: { command: 'npm test' } },
            { type: 'tool_use', id: 'toolu_b', name: 'Bash', input: { command: 'git log -1' } },
            { type: 'tool_use', id: 'toolu_c', name: 'Read', input: { file_path: 'notes.txt' } },
          ],
          stopReason: 'tool_use',
        },
        textReply('Done.'),
      );
      const r = await run(cwd, [
        '--allowedTools',
        'Bash(npm test:*),Bash(git log *)',
        '--disallowedTools',
        'Bash(git log -1) Read(notes.txt)',
      ]);
      expect(r.code, r.stderr).toBe(0);
      expect(decisions(await logOf(cwd, r))).toEqual([
        { name: 'Bash', resolved: 'allow', by: 'cliArg allow Bash(npm test:*)' },
        { name: 'Bash', resolved: 'deny', by: 'cliArg deny Bash(git log -1)' },
        { name: 'Read', resolved: 'deny', by: 'cliArg deny Read(notes.txt)' },
      ]);
    },
    SLOW,
  );

  it(
    '--tools names the built-in tools that exist; a whole-tool deny takes a tool out of the request',
    async () => {
      const cwd = await project({ 'settings.json': { permissions: { deny: ['Glob'] } } });
      server.enqueue(textReply('Nothing to do.'));
      const r = await run(cwd, ['--tools', 'Read, Glob,Grep']);
      expect(r.code, r.stderr).toBe(0);
      expect(toolNames().sort()).toEqual(['Grep', 'Read']);
    },
    SLOW,
  );

  it(
    '--tools "" offers no built-in tool; an unknown name is bad usage',
    async () => {
      const cwd = await project({});
      server.enqueue(textReply('Nothing to do.'));
      const r = await run(cwd, ['--tools', '']);
      expect(r.code, r.stderr).toBe(0);
      expect(toolNames()).toEqual([]);
      const bad = await run(cwd, ['--tools', 'Read,Teleport']);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('"Teleport"');
      expect(bad.stderr).toContain('[TOOLS_INVALID]');
    },
    SLOW,
  );

  it(
    '--add-dir and additionalDirectories let the file tools reach another directory; others stay out',
    async () => {
      const extra = path.join(root, `extra${n}`);
      const other = path.join(root, `other${n}`);
      await mkdir(extra, { recursive: true });
      await mkdir(other, { recursive: true });
      await writeFile(path.join(extra, 'x.txt'), 'EXTRA-CONTENT');
      await writeFile(path.join(other, 'y.txt'), 'OTHER-CONTENT');
      const cwd = await project({
        'settings.json': { permissions: { additionalDirectories: [`../${path.basename(other)}`] } },
      });
      server.enqueue(
        {
          kind: 'message',
          content: [
            {
              type: 'tool_use',
              id: 'toolu_a',
              name: 'Read',
              input: { file_path: path.join(extra, 'x.txt') },
            },
            {
              type: 'tool_use',
              id: 'toolu_b',
              name: 'Read',
              input: { file_path: path.join(other, 'y.txt') },
            },
            {
              type: 'tool_use',
              id: 'toolu_c',
              name: 'Write',
              input: { file_path: path.join(extra, 'z.txt'), content: 'z' },
            },
          ],
          stopReason: 'tool_use',
        },
        textReply('Done.'),
        {
          kind: 'message',
          content: [
            {
              type: 'tool_use',
              id: 'toolu_d',
              name: 'Read',
              input: { file_path: path.join(extra, 'x.txt') },
            },
          ],
          stopReason: 'tool_use',
        },
        textReply('Done.'),
      );
      const r = await run(cwd, ['--add-dir', extra]);
      expect(r.code, r.stderr).toBe(0);
      expect(decisions(await logOf(cwd, r))).toEqual([
        { name: 'Read', resolved: 'allow', by: 'mode:default' },
        { name: 'Read', resolved: 'allow', by: 'mode:default' },
        // Inside an added directory the mode decides as inside --cwd: a write is asked.
        { name: 'Write', resolved: 'deny', by: 'noninteractive' },
      ]);
      expect(sentAfterFirst()).toContain('EXTRA-CONTENT');
      expect(sentAfterFirst()).toContain('OTHER-CONTENT');
      // Without --add-dir the same read is outside the working directory.
      const again = await run(cwd, ['--setting-sources', '']);
      expect(again.code, again.stderr).toBe(0);
      expect(decisions(await logOf(cwd, again))).toEqual([
        { name: 'Read', resolved: 'deny', by: 'path:outside-cwd' },
      ]);
    },
    SLOW,
  );

  it(
    'defaultMode dontAsk denies what no rule allows; --permission-mode overrides it',
    async () => {
      const cwd = await project({ 'settings.json': { permissions: { defaultMode: 'dontAsk' } } });
      oneCall('Bash', { command: 'npm test' });
      const r = await runCli(['run', '--model', 'claude-sonnet-4-6', '--store', 'st', '--json', 'Do it.'], {
        cwd,
        env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'sk-test' },
        timeoutMs: SLOW,
      });
      expect(r.code, r.stderr).toBe(0);
      // Nobody is asked: no park, a deny.
      expect(onlyJson(r)).toMatchObject({ status: 'completed' });
      expect(decisions(await logOf(cwd, r))).toEqual([
        { name: 'Bash', resolved: 'deny', by: 'mode:dontAsk' },
      ]);
      oneCall('Bash', { command: 'npm test' });
      const flag = await run(cwd, ['--permission-mode', 'bypassPermissions']);
      expect(decisions(await logOf(cwd, flag))).toEqual([
        { name: 'Bash', resolved: 'allow', by: 'mode:bypassPermissions' },
      ]);
    },
    SLOW,
  );

  it(
    'disableBypassPermissionsMode refuses bypassPermissions (exit 2, naming the file)',
    async () => {
      const cwd = await project({
        'settings.local.json': { permissions: { disableBypassPermissionsMode: 'disable' } },
      });
      const r = await run(cwd, ['--permission-mode', 'bypassPermissions']);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(path.join(cwd, '.claude', 'settings.local.json'));
      expect(r.stderr).toContain('[PERMISSION_MODE_DISABLED]');
      server.enqueue(textReply('ok'));
      const ok = await run(cwd, ['--permission-mode', 'acceptEdits']);
      expect(ok.code, ok.stderr).toBe(0);
    },
    SLOW,
  );
});
