/**
 * A Claude Code project's hooks under `reloop run`, case by case as Claude Code documents them:
 * a project with `.claude/settings.json` (hooks of every event, one script answering as each case
 * says), the real CLI, the loopback Messages API. Each case reads what the model was sent and
 * what the log holds; the log then verifies with the scripts deleted and the settings changed.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { HOOK_EVENTS } from '../../src/hooks/events.ts';
import type { LogRecord, RecordOf } from '../../src/store/records.ts';
import { type CliResult, jsonLines, onlyJson, runCli } from '../support/cli.ts';
import {
  type MessagesServer,
  type ReplyBlock,
  startMessagesServer,
  textReply,
  toolUseReply,
} from '../support/messagesServer.ts';

const SLOW = 180_000;
const NODE = process.execPath;

let root: string;
let server: MessagesServer;
beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'reloop-hooks-cli-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});
// A server of its own per case: what one case leaves queued never answers another.
beforeEach(async () => {
  server = await startMessagesServer({ apiKey: 'sk-test' });
});
afterEach(async () => {
  expect(server.pending()).toBe(0);
  await server.close();
});

/**
 * The one hook script: logs what it was told (`hooks.log`, a JSON line each) and answers from
 * `answers.json`, keyed `<event>:<matcher value>` or `<event>` ({ exit, stdout, stderr }).
 */
const HOOK_JS = `
const fs = require('fs'), path = require('path');
const input = JSON.parse(fs.readFileSync(0, 'utf8'));
const dir = process.env.CLAUDE_PROJECT_DIR;
fs.appendFileSync(path.join(dir, 'hooks.log'), JSON.stringify(input) + '\\n');
const answers = JSON.parse(fs.readFileSync(path.join(dir, 'answers.json'), 'utf8'));
const e = input.hook_event_name;
const value = input.tool_name ?? input.source ?? input.agent_type ?? input.trigger ?? input.notification_type ?? input.reason;
const a = answers[e + ':' + value] ?? answers[e] ?? {};
if (a.stderr) process.stderr.write(a.stderr);
if (a.stdout !== undefined) process.stdout.write(typeof a.stdout === 'string' ? a.stdout : JSON.stringify(a.stdout));
process.exit(a.exit ?? 0);
`;

const EVENTS = HOOK_EVENTS;

let projects = 0;
/** A project whose `.claude/settings.json` runs hook.js on every event (and `extra` groups). */
async function project(answers: Record<string, unknown>, extra: Record<string, unknown[]> = {}) {
  const dir = path.join(root, `p${++projects}`);
  await mkdir(path.join(dir, '.claude', 'hooks'), { recursive: true });
  await mkdir(path.join(dir, '.claude', 'agents'), { recursive: true });
  await writeFile(path.join(dir, '.claude', 'hooks', 'hook.js'), HOOK_JS);
  await writeFile(
    path.join(dir, '.claude', 'agents', 'reviewer.md'),
    '---\nname: reviewer\ndescription: Reviews a change.\ntools: Read, Glob\n---\nYou review.\n',
  );
  const command = `"${NODE}" "$CLAUDE_PROJECT_DIR/.claude/hooks/hook.js"`;
  const hooks: Record<string, unknown[]> = {};
  for (const e of EVENTS) hooks[e] = [{ hooks: [{ type: 'command', command, timeout: 30 }] }];
  for (const [e, groups] of Object.entries(extra)) hooks[e] = [...(hooks[e] ?? []), ...groups];
  await writeFile(path.join(dir, '.claude', 'settings.json'), JSON.stringify({ hooks }, null, 2));
  await writeFile(path.join(dir, 'answers.json'), JSON.stringify(answers));
  return dir;
}

async function run(cwd: string, prompt: string, flags: string[] = []): Promise<CliResult> {
  return runCli(['run', '--model', 'claude-sonnet-4-6', '--store', 'st', '--json', ...flags, prompt], {
    cwd,
    env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'sk-test' },
    timeoutMs: SLOW,
  });
}

async function hookLog(cwd: string): Promise<Record<string, unknown>[]> {
  if (!existsSync(path.join(cwd, 'hooks.log'))) return [];
  return jsonLines(await readFile(path.join(cwd, 'hooks.log'), 'utf8'));
}
async function logOf(cwd: string, session: string): Promise<LogRecord[]> {
  return jsonLines<LogRecord>(await readFile(path.join(cwd, 'st', 'sessions', `${session}.jsonl`), 'utf8'));
}
const decided = (log: LogRecord[]) =>
  log.filter((r): r is RecordOf<'hook.decided'> => r.type === 'hook.decided').map((r) => r.data);
const reasons = (log: LogRecord[]) => log.flatMap((r) => (r.type === 'transition' ? [r.data.reason] : []));
const textOf = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : (content as { type: string; text?: string; content?: unknown }[])
        .map((b) => (b.type === 'text' ? b.text : b.type === 'tool_result' ? textOf(b.content ?? '') : ''))
        .join('\n');
const sentText = (i: number) => (server.requests.at(i)?.body.messages ?? []).map((m) => textOf(m.content));

/** replay --verify, after the hooks are gone and the settings say something else. */
async function verifiesWithoutHooks(cwd: string, session: string, tree = false) {
  await rm(path.join(cwd, '.claude', 'hooks'), { recursive: true, force: true });
  await writeFile(
    path.join(cwd, '.claude', 'settings.json'),
    JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: 'command', command: 'exit 2' }] }] } }),
  );
  const r = await runCli(['replay', session, '--verify', '--store', 'st', ...(tree ? ['--tree'] : [])], {
    cwd,
    timeoutMs: SLOW,
  });
  expect(r.code, r.stdout + r.stderr).toBe(0);
  expect(r.stdout).toMatch(/verified|ok/i);
}

const usage = (input_tokens: number) => ({ input_tokens, output_tokens: 20 });

describe('a Claude Code project’s hooks, every event, under reloop run', () => {
  it(
    'every event fires with its documented input; context reaches the model; the log verifies without the hooks',
    async () => {
      const cwd = await project({
        'SessionStart:startup': { stdout: 'This project uses bun.' },
        'SessionStart:compact': { stdout: 'Reminder after compaction: use bun.' },
        UserPromptSubmit: {
          stdout: {
            hookSpecificOutput: {
              hookEventName: 'UserPromptSubmit',
              additionalContext: 'Sprint goal: auth.',
            },
          },
        },
        PermissionRequest: {
          stdout: {
            hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } },
          },
        },
        PostToolUse: {
          stdout: {
            hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: 'Output looks fine.' },
          },
        },
        PostToolUseFailure: {
          stdout: {
            hookSpecificOutput: {
              hookEventName: 'PostToolUseFailure',
              additionalContext: 'A missing file is expected here.',
            },
          },
        },
        SubagentStart: {
          stdout: { hookSpecificOutput: { hookEventName: 'SubagentStart', additionalContext: 'Be brief.' } },
        },
        SessionEnd: { stdout: { systemMessage: 'Goodbye from SessionEnd.' } },
      });
      const before = server.requests.length;
      const calls: ReplyBlock[] = [
        { type: 'tool_use', id: 'toolu_bash', name: 'Bash', input: { command: 'echo hi' } },
        { type: 'tool_use', id: 'toolu_read', name: 'Read', input: { file_path: 'missing.txt' } },
      ];
      server.enqueue(
        { kind: 'message', content: calls, stopReason: 'tool_use', usage: usage(190_000) },
        textReply('Summary: ran echo, read nothing.'),
        toolUseReply(
          'Task',
          { description: 'review', prompt: 'Review the change.', subagent_type: 'reviewer' },
          { toolUseId: 'toolu_task', usage: usage(500) },
        ),
        textReply('Looks good.'),
        textReply('All done.'),
      );
      const r = await run(cwd, 'Say hi and review.');
      expect(r.code, r.stderr).toBe(0);
      const { sessionId } = onlyJson<{ sessionId: string; status: string }>(r);
      expect(onlyJson(r)).toMatchObject({ status: 'completed' });
      expect(r.stderr).toContain('SessionEnd hook: Goodbye from SessionEnd.');

      // What the model was sent.
      const first = sentText(before);
      expect(first[0]).toContain('Say hi and review.');
      expect(first.join('\n')).toContain('SessionStart hook additional context: This project uses bun.');
      expect(first.join('\n')).toContain('UserPromptSubmit hook additional context: Sprint goal: auth.');
      const afterCompaction = sentText(before + 2).join('\n');
      expect(afterCompaction).toContain(
        'SessionStart hook additional context: Reminder after compaction: use bun.',
      );
      const child = sentText(before + 3);
      expect(child[0]).toContain('Review the change.');
      expect(child[0]).toContain('SubagentStart hook additional context: Be brief.');
      // The tool results carried the hooks' context (in the history the compaction summarised).
      const log = await logOf(cwd, sessionId);
      const results = log.filter((x): x is RecordOf<'tool.finished'> => x.type === 'tool.finished');
      const bash = results.find((x) => x.data.toolUseId === 'toolu_bash')!;
      expect(bash.data.outcome).toBe('ok');
      expect(textOf(bash.data.result.content)).toContain(
        'PostToolUse hook additional context: Output looks fine.',
      );
      const read = results.find((x) => x.data.toolUseId === 'toolu_read')!;
      expect(read.data.outcome).toBe('error');
      expect(textOf(read.data.result.content)).toContain(
        'PostToolUseFailure hook additional context: A missing file is expected here.',
      );

      // What each hook was told, in order (the child's hooks are in it too).
      const told = await hookLog(cwd);
      const transcript = path.join(cwd, 'st', 'sessions', `${sessionId}.jsonl`);
      const common = { session_id: sessionId, transcript_path: transcript, cwd, permission_mode: 'default' };
      const of = (e: string) => told.filter((t) => t.hook_event_name === e);
      expect(of('SessionStart')).toEqual([
        { ...common, hook_event_name: 'SessionStart', source: 'startup', model: 'claude-sonnet-4-6' },
        { ...common, hook_event_name: 'SessionStart', source: 'compact', model: 'claude-sonnet-4-6' },
      ]);
      expect(of('UserPromptSubmit')).toEqual([
        { ...common, hook_event_name: 'UserPromptSubmit', prompt: 'Say hi and review.' },
      ]);
      expect(of('PreToolUse').map((t) => [t.tool_name, t.tool_use_id, t.agent_type ?? null])).toEqual([
        ['Bash', 'toolu_bash', null],
        ['Read', 'toolu_read', null],
        ['Task', 'toolu_task', null],
      ]);
      expect(of('PreToolUse')[0]).toEqual({
        ...common,
        hook_event_name: 'PreToolUse',
        tool_name: 'Bash',
        tool_input: { command: 'echo hi' },
        tool_use_id: 'toolu_bash',
      });
      expect(of('PermissionRequest')).toEqual([
        {
          ...common,
          hook_event_name: 'PermissionRequest',
          tool_name: 'Bash',
          tool_input: { command: 'echo hi' },
        },
      ]);
      expect(of('PostToolUse')[0]).toMatchObject({
        tool_name: 'Bash',
        tool_use_id: 'toolu_bash',
        tool_response: expect.stringContaining('hi'),
      });
      expect(of('PostToolUseFailure')).toEqual([
        {
          ...common,
          hook_event_name: 'PostToolUseFailure',
          tool_name: 'Read',
          tool_input: { file_path: 'missing.txt' },
          tool_use_id: 'toolu_read',
          error: expect.any(String),
          is_interrupt: false,
        },
      ]);
      expect(of('PreCompact')).toEqual([
        { ...common, hook_event_name: 'PreCompact', trigger: 'auto', custom_instructions: '' },
      ]);
      const childId = log.find((x): x is RecordOf<'child.started'> => x.type === 'child.started')!.data.child;
      expect(of('SubagentStart')).toEqual([
        { ...common, hook_event_name: 'SubagentStart', agent_id: childId, agent_type: 'reviewer' },
      ]);
      expect(of('SubagentStop')).toEqual([
        {
          ...common,
          hook_event_name: 'SubagentStop',
          agent_id: childId,
          agent_type: 'reviewer',
          stop_hook_active: false,
          last_assistant_message: 'Looks good.',
          agent_transcript_path: path.join(cwd, 'st', 'sessions', `${childId}.jsonl`),
        },
      ]);
      expect(of('Stop')).toEqual([
        { ...common, hook_event_name: 'Stop', stop_hook_active: false, last_assistant_message: 'All done.' },
      ]);
      expect(of('SessionEnd')).toEqual([{ ...common, hook_event_name: 'SessionEnd', reason: 'other' }]);
      expect(of('Notification')).toEqual([]);

      // The log: one record per hook run, with where it came from.
      const own = decided(log);
      expect(own.map((d) => d.hook)).toEqual([
        'SessionStart',
        'UserPromptSubmit',
        'PreToolUse',
        'PermissionRequest',
        'PreToolUse',
        'PostToolUse',
        'PostToolUseFailure',
        'PreCompact',
        'SessionStart',
        'PreToolUse',
        'SubagentStart',
        'PostToolUse',
        'Stop',
        'SessionEnd',
      ]);
      for (const d of own)
        expect(d).toMatchObject({
          source: 'projectSettings',
          command: expect.stringContaining('hook.js'),
          exitCode: 0,
        });
      expect(own[0]).toMatchObject({ decision: 'continue', output: 'This project uses bun.' });
      expect(own[3]).toMatchObject({ hook: 'PermissionRequest', decision: 'allow', toolUseId: 'toolu_bash' });
      const permission = log.find(
        (x): x is RecordOf<'permission.decided'> => x.type === 'permission.decided',
      );
      expect(permission?.data).toMatchObject({
        decision: 'ask',
        resolved: 'allow',
        by: expect.stringMatching(/^hook PermissionRequest .*hook\.js/),
      });
      expect(decided(await logOf(cwd, childId)).map((d) => d.hook)).toEqual(['SubagentStop']);

      await verifiesWithoutHooks(cwd, sessionId, true);
    },
    SLOW,
  );

  it(
    'PreToolUse: a Bash matcher does not run for Read; exit 2 blocks with stderr to the model; an allow does not beat --deny',
    async () => {
      const cwd = await project(
        {},
        {
          PreToolUse: [
            {
              matcher: 'Bash',
              hooks: [
                {
                  type: 'command',
                  command: `"${NODE}" -e "const i=JSON.parse(require('fs').readFileSync(0,'utf8')); if (i.tool_input.command.startsWith('curl')) { console.error('no network from hooks tests'); process.exit(2) } console.log(JSON.stringify({hookSpecificOutput:{hookEventName:'PreToolUse',permissionDecision:'allow'}}))"`,
                },
              ],
            },
          ],
        },
      );
      await writeFile(path.join(cwd, 'keep.txt'), 'keep me\n');
      const before = server.requests.length;
      const calls: ReplyBlock[] = [
        { type: 'tool_use', id: 'toolu_read', name: 'Read', input: { file_path: 'keep.txt' } },
        { type: 'tool_use', id: 'toolu_curl', name: 'Bash', input: { command: 'curl http://example.com' } },
        { type: 'tool_use', id: 'toolu_rm', name: 'Bash', input: { command: 'rm keep.txt' } },
        { type: 'tool_use', id: 'toolu_ls', name: 'Bash', input: { command: 'ls' } },
      ];
      server.enqueue({ kind: 'message', content: calls, stopReason: 'tool_use' }, textReply('ok'));
      const r = await run(cwd, 'Tidy up.', ['--deny', 'Bash(rm:*)']);
      expect(r.code, r.stderr).toBe(0);
      const { sessionId } = onlyJson<{ sessionId: string }>(r);
      const log = await logOf(cwd, sessionId);
      const matched = decided(log).filter((d) => d.matcher === 'Bash');
      // Not run, not logged, for the Read.
      expect(matched.map((d) => [d.toolUseId, d.decision])).toEqual([
        ['toolu_curl', 'deny'],
        ['toolu_rm', 'allow'],
        ['toolu_ls', 'allow'],
      ]);
      expect(matched[0]).toMatchObject({ reason: 'no network from hooks tests', exitCode: 2 });
      const outcomes = Object.fromEntries(
        log.flatMap((x) => (x.type === 'tool.finished' ? [[x.data.toolUseId, x.data.outcome]] : [])),
      );
      expect(outcomes).toEqual({
        toolu_read: 'ok',
        toolu_curl: 'hook_blocked',
        toolu_rm: 'denied',
        toolu_ls: 'ok',
      });
      expect(await readFile(path.join(cwd, 'keep.txt'), 'utf8')).toBe('keep me\n');
      const results = sentText(before + 1).join('\n');
      expect(results).toContain('Denied by PreToolUse hook: no network from hooks tests');
      expect(results).toMatch(/Permission to use Bash was denied: Bash is denied by the rule Bash\(rm:\*\)/);
      // ls needed no permission prompt: the hook's allow answered the mode's own ask.
      const ls = log.find(
        (x): x is RecordOf<'permission.decided'> =>
          x.type === 'permission.decided' && x.data.toolUseId === 'toolu_ls',
      );
      expect(ls?.data).toMatchObject({ resolved: 'allow', by: expect.stringMatching(/^hook PreToolUse /) });
      await verifiesWithoutHooks(cwd, sessionId);
    },
    SLOW,
  );

  it(
    'UserPromptSubmit exit 2: the prompt is blocked (no request), the reason is shown, the prompt erased',
    async () => {
      const cwd = await project({
        UserPromptSubmit: { exit: 2, stderr: 'Prompts may not name production hosts.' },
      });
      const before = server.requests.length;
      const r = await run(cwd, 'ssh prod-db-1 and drop it');
      expect(onlyJson(r)).toMatchObject({ status: 'failed', reason: 'prompt_blocked' });
      expect(server.requests.length).toBe(before);
      const { sessionId } = onlyJson<{ sessionId: string }>(r);
      const log = await logOf(cwd, sessionId);
      expect(reasons(log)).toEqual(['prompt_blocked']);
      expect(log.find((x) => x.type === 'run.ended')?.data).toMatchObject({
        error: 'a UserPromptSubmit hook blocked the prompt: Prompts may not name production hosts.',
      });
      // Resumed with another prompt: the blocked one is not in what the model is sent.
      await writeFile(path.join(cwd, 'answers.json'), '{}');
      server.enqueue(textReply('Hello.'));
      const again = await run(cwd, 'say hello', ['--resume', sessionId]);
      expect(onlyJson(again)).toMatchObject({ status: 'completed' });
      expect(sentText(before).join('\n')).not.toContain('prod-db-1');
      await verifiesWithoutHooks(cwd, sessionId);
    },
    SLOW,
  );

  it(
    'Stop exit 2: the feedback goes to the model and the loop goes on; the re-run is told stop_hook_active',
    async () => {
      const cwd = await project(
        {},
        {
          Stop: [
            {
              hooks: [
                {
                  type: 'command',
                  command: `"${NODE}" -e "const i=JSON.parse(require('fs').readFileSync(0,'utf8')); if (!i.stop_hook_active) { console.error('Run the tests first.'); process.exit(2) }"`,
                },
              ],
            },
          ],
        },
      );
      const before = server.requests.length;
      server.enqueue(textReply('Done.'), textReply('Tests pass. Done.'));
      const r = await run(cwd, 'Fix it.');
      expect(onlyJson(r)).toMatchObject({ status: 'completed' });
      expect(sentText(before + 1).at(-1)).toBe('Stop hook feedback:\nRun the tests first.');
      const { sessionId } = onlyJson<{ sessionId: string }>(r);
      expect(reasons(await logOf(cwd, sessionId))).toEqual([
        'query_built',
        'finish_requested',
        'stop_hook_continuation',
        'query_built',
        'finish_requested',
        'completed',
      ]);
    },
    SLOW,
  );

  it(
    'continue: false from PostToolUse ends the run hook_stopped; a later call of the batch does not run',
    async () => {
      const cwd = await project({
        'PostToolUse:Bash': { stdout: { continue: false, stopReason: 'Deploys are frozen.' } },
      });
      const calls: ReplyBlock[] = [
        { type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'echo one > one.txt' } },
        { type: 'tool_use', id: 'toolu_2', name: 'Bash', input: { command: 'echo two > two.txt' } },
      ];
      server.enqueue({ kind: 'message', content: calls, stopReason: 'tool_use' });
      const r = await run(cwd, 'Write two files.', ['--permission-mode', 'bypassPermissions']);
      expect(onlyJson(r)).toMatchObject({ status: 'failed', reason: 'hook_stopped' });
      expect(existsSync(path.join(cwd, 'one.txt'))).toBe(true);
      expect(existsSync(path.join(cwd, 'two.txt'))).toBe(false);
      const { sessionId } = onlyJson<{ sessionId: string }>(r);
      const log = await logOf(cwd, sessionId);
      expect(log.find((x) => x.type === 'run.ended')?.data).toMatchObject({
        error: 'a hook stopped the run: Deploys are frozen.',
      });
      await verifiesWithoutHooks(cwd, sessionId);
    },
    SLOW,
  );

  it(
    'Notification (permission_prompt) when a call parks for approval; PreCompact block leaves the history uncompacted',
    async () => {
      const cwd = await project({ PreCompact: { exit: 2, stderr: 'Keep everything.' } });
      server.enqueue(toolUseReply('Bash', { command: 'touch x' }, { toolUseId: 'toolu_x' }));
      const r = await run(cwd, 'Touch x.', ['--on-ask', 'park']);
      expect(onlyJson(r)).toMatchObject({ status: 'paused', reason: 'awaiting_approval' });
      const note = (await hookLog(cwd)).find((t) => t.hook_event_name === 'Notification');
      expect(note).toMatchObject({
        notification_type: 'permission_prompt',
        message: 'Claude needs your permission to use Bash',
        title: 'Permission needed',
      });

      const cwd2 = await project({ PreCompact: { exit: 2, stderr: 'Keep everything.' } });
      server.enqueue(
        {
          kind: 'message',
          content: [{ type: 'tool_use', id: 'toolu_g', name: 'Glob', input: { pattern: '*' } }],
          stopReason: 'tool_use',
          usage: usage(190_000),
        },
        textReply('Done.'),
      );
      const c = await run(cwd2, 'List files.');
      expect(onlyJson(c)).toMatchObject({ status: 'completed' });
      const { sessionId } = onlyJson<{ sessionId: string }>(c);
      const log = await logOf(cwd2, sessionId);
      expect(reasons(log)).toEqual([
        'query_built',
        'tool_use_requested',
        'auto_compact',
        'compaction_blocked',
        'query_built',
        'finish_requested',
        'completed',
      ]);
      expect(log.some((x) => x.type === 'compaction.finished')).toBe(false);
      expect(decided(log).find((d) => d.hook === 'PreCompact')).toMatchObject({
        decision: 'block',
        reason: 'Keep everything.',
      });
    },
    SLOW,
  );

  it(
    'what does not run is said: other hook types and events are warnings naming the file and entry; a failing hook is shown and logged',
    async () => {
      const cwd = await project(
        {
          Stop: { exit: 1, stderr: 'linter crashed\nstack…' },
          'PreToolUse:Glob': { stdout: '{"decision": ' },
        },
        {
          Stop: [{ hooks: [{ type: 'prompt', prompt: 'Is it done?' }] }],
          TeammateIdle: [{ hooks: [{ type: 'command', command: 'true' }] }],
        },
      );
      server.enqueue(toolUseReply('Glob', { pattern: '*' }, { toolUseId: 'toolu_g' }), textReply('Done.'));
      const r = await run(cwd, 'List files.');
      expect(onlyJson(r)).toMatchObject({ status: 'completed' });
      const settings = path.join(cwd, '.claude', 'settings.json');
      expect(r.stderr).toContain(
        `warning: ${settings}: hooks.Stop[1].hooks[0] has type "prompt": only command hooks run here; this one is ignored`,
      );
      expect(r.stderr).toContain(`warning: ${settings}: hooks.TeammateIdle: reloop never fires TeammateIdle`);
      expect(r.stderr).toMatch(/warning: Stop hook `.*hook\.js"` failed with exit code 1: linter crashed/);
      expect(r.stderr).toMatch(/warning: PreToolUse hook `.*` printed invalid JSON on stdout/);
      const { sessionId } = onlyJson<{ sessionId: string }>(r);
      const log = await logOf(cwd, sessionId);
      expect(
        decided(log)
          .filter((d) => d.decision === 'error')
          .map((d) => d.hook),
      ).toEqual(['PreToolUse', 'Stop']);
      expect(reasons(log).at(-1)).toBe('completed');
    },
    SLOW,
  );
});
