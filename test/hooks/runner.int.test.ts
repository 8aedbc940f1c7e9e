import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HookEvent } from '../../src/hooks/events.ts';
import { type HookRunContext, HookRunner } from '../../src/hooks/runner.ts';
import type { HookCallback, HooksOption } from '../../src/hooks/types.ts';
import { processGroupAlive } from '../../src/tools/processGroup.ts';
import { removeDir, tempDir } from '../tools/toolHarness.ts';

let cwd: string;
beforeAll(async () => {
  cwd = await tempDir('reloop-hooks-');
});
afterAll(() => removeDir(cwd));

const signal = () => new AbortController().signal;
function runner(hooks: HooksOption, over: Partial<HookRunContext> = {}) {
  return new HookRunner(hooks, {
    sessionId: 's1',
    transcriptPath: '/store/sessions/s1.jsonl',
    cwd,
    permissionMode: 'acceptEdits',
    projectDir: cwd,
    killGraceMs: 200,
    now: () => performance.now(),
    ...over,
  });
}
/** One command hook of `event`, run once: its record and answer. */
async function one(
  event: HookEvent,
  command: string,
  fields: Record<string, unknown> = {},
  timeout?: number,
) {
  const r = runner({
    [event]: [
      {
        hooks: [{ type: 'command', command, ...(timeout ? { timeout } : {}) }],
        source: 'projectSettings',
      },
    ],
  });
  const runs = await r.run(event, fields, { signal: signal() });
  expect(runs).toHaveLength(1);
  return runs[0]!;
}

describe('a command hook: input on stdin, the environment', () => {
  it('gets the common fields and the event fields as JSON on stdin, in cwd, with CLAUDE_PROJECT_DIR', async () => {
    const run = await one('PreToolUse', 'cat > in.json; echo "$CLAUDE_PROJECT_DIR" > env.txt', {
      tool_name: 'Bash',
      tool_input: { command: 'ls' },
      tool_use_id: 'toolu_1',
    });
    expect(run.record).toMatchObject({
      hook: 'PreToolUse',
      decision: 'continue',
      command: expect.stringMatching(/^cat/),
      source: 'projectSettings',
      exitCode: 0,
    });
    expect(JSON.parse(await readFile(path.join(cwd, 'in.json'), 'utf8'))).toEqual({
      session_id: 's1',
      transcript_path: '/store/sessions/s1.jsonl',
      cwd,
      permission_mode: 'acceptEdits',
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'ls' },
      tool_use_id: 'toolu_1',
    });
    expect((await readFile(path.join(cwd, 'env.txt'), 'utf8')).trim()).toBe(cwd);
  });

  it('inside a sub-agent gets agent_id and agent_type', async () => {
    const r = runner(
      { Stop: [{ hooks: [{ type: 'command', command: 'cat > sub.json' }] }] },
      { agent: { id: 'child-1', type: 'reviewer' } },
    );
    await r.run('Stop', { stop_hook_active: false }, { signal: signal() });
    expect(JSON.parse(await readFile(path.join(cwd, 'sub.json'), 'utf8'))).toMatchObject({
      agent_id: 'child-1',
      agent_type: 'reviewer',
      stop_hook_active: false,
    });
  });

  it('does not see the runtime’s credentials unless passed on purpose', async () => {
    const saved = process.env.ANTHROPIC_API_KEY;
    process.env.ANTHROPIC_API_KEY = 'sk-ant-hook-test-0123456789';
    try {
      const echo = 'echo "[$ANTHROPIC_API_KEY]" >&2; exit 2';
      expect((await one('Stop', echo)).record).toMatchObject({ decision: 'block', reason: '[]' });
      const passed = runner(
        { Stop: [{ hooks: [{ type: 'command', command: echo }] }] },
        { passEnv: ['ANTHROPIC_API_KEY'] },
      );
      const [run] = await passed.run('Stop', {}, { signal: signal() });
      expect(run!.record).toMatchObject({ decision: 'block', reason: '[sk-ant-hook-test-0123456789]' });
    } finally {
      if (saved === undefined) delete process.env.ANTHROPIC_API_KEY;
      else process.env.ANTHROPIC_API_KEY = saved;
    }
  });
});

describe('exit codes, per event (Claude Code: "exit code 2 behavior per event")', () => {
  it.each([
    ['PreToolUse', { decision: 'deny', reason: 'no' }],
    ['PermissionRequest', { decision: 'deny', reason: 'no' }],
    ['UserPromptSubmit', { decision: 'block', reason: 'no' }],
    ['Stop', { decision: 'block', reason: 'no' }],
    ['SubagentStop', { decision: 'block', reason: 'no' }],
    ['PreCompact', { decision: 'block', reason: 'no' }],
    ['PostToolUse', { decision: 'block', reason: 'no' }],
    ['PostToolUseFailure', { decision: 'block', reason: 'no' }],
    ['Notification', { decision: 'continue', reason: 'no' }],
    ['SubagentStart', { decision: 'continue', reason: 'no' }],
    ['SessionStart', { decision: 'continue', reason: 'no' }],
    ['SessionEnd', { decision: 'continue', reason: 'no' }],
  ] as const)('exit 2 of %s: %j (stderr is the reason; stdout and its JSON are ignored)', async (event, expected) => {
    const run = await one(event, `echo '{"continue":false}'; echo no >&2; exit 2`);
    expect(run.record).toMatchObject({ ...expected, exitCode: 2 });
  });

  it('another non-zero exit is a non-blocking error with the first stderr line, never a block', async () => {
    const run = await one('PreToolUse', 'echo boom >&2; echo more >&2; exit 1');
    expect(run.record).toMatchObject({
      decision: 'error',
      reason: 'PreToolUse hook `echo boom >&2; echo more >&2; exit 1` failed with exit code 1: boom',
      exitCode: 1,
    });
    expect((await one('Stop', 'exit 127')).record.decision).toBe('error');
  });

  it('a hung hook is killed with its process group after its timeout (seconds): an error', async () => {
    const started = Date.now();
    const run = await one('Stop', 'echo $$ > hung.pid; sleep 30 & sleep 30', {}, 0.4);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(run.record).toMatchObject({
      decision: 'error',
      reason: expect.stringMatching(/did not finish within 0.4 s/),
      exitCode: null,
    });
    expect(processGroupAlive(Number(await readFile(path.join(cwd, 'hung.pid'), 'utf8')))).toBe(false);
  });

  it('an abort stops the hook: an error', async () => {
    const r = runner({ Stop: [{ hooks: [{ type: 'command', command: 'sleep 30' }] }] });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    const [run] = await r.run('Stop', {}, { signal: ac.signal });
    expect(run!.record).toMatchObject({ decision: 'error', reason: expect.stringMatching(/aborted/) });
  });
});

describe('JSON output (exit 0)', () => {
  const json = (event: HookEvent, value: unknown) => one(event, `echo '${JSON.stringify(value)}'`);

  it('continue: false wins over every decision, with its stopReason', async () => {
    const run = await json('PostToolUse', {
      continue: false,
      stopReason: 'build broke',
      decision: 'block',
      reason: 'x',
    });
    expect(run.record).toMatchObject({ decision: 'prevent', reason: 'build broke' });
  });

  it('systemMessage is kept for the user', async () => {
    expect((await json('SessionEnd', { systemMessage: 'bye' })).record).toMatchObject({
      decision: 'continue',
      systemMessage: 'bye',
    });
  });

  it.each([
    [
      {
        hookSpecificOutput: {
          hookEventName: 'PreToolUse',
          permissionDecision: 'deny',
          permissionDecisionReason: 'r',
        },
      },
      { decision: 'deny', reason: 'r' },
    ],
    [
      { hookSpecificOutput: { permissionDecision: 'allow', permissionDecisionReason: 'fine' } },
      { decision: 'allow', reason: 'fine' },
    ],
    [{ hookSpecificOutput: { permissionDecision: 'ask' } }, { decision: 'ask' }],
    [
      { hookSpecificOutput: { permissionDecision: 'defer' } },
      { decision: 'continue', reason: expect.stringMatching(/defer.*not supported/) },
    ],
    [{ decision: 'approve' }, { decision: 'allow' }],
    [
      { decision: 'block', reason: 'nope' },
      { decision: 'deny', reason: 'nope' },
    ],
    [{ hookSpecificOutput: { additionalContext: 'prod box' } }, { decision: 'continue', output: 'prod box' }],
    [{ suppressOutput: true }, { decision: 'continue' }],
  ])('PreToolUse %j → %j', async (value, expected) => {
    expect((await json('PreToolUse', value)).record).toMatchObject(expected);
  });

  it('PreToolUse updatedInput comes with the answer (not the record)', async () => {
    const run = await json('PreToolUse', {
      hookSpecificOutput: { permissionDecision: 'allow', updatedInput: { command: 'ls -la' } },
    });
    expect(run.answer.updatedInput).toEqual({ command: 'ls -la' });
    expect(run.record).not.toHaveProperty('updatedInput');
  });

  it('PermissionRequest decision.behavior', async () => {
    const dec = (decision: unknown) =>
      json('PermissionRequest', { hookSpecificOutput: { hookEventName: 'PermissionRequest', decision } });
    expect((await dec({ behavior: 'allow' })).record.decision).toBe('allow');
    expect((await dec({ behavior: 'deny', message: 'not this one' })).record).toMatchObject({
      decision: 'deny',
      reason: 'not this one',
    });
    expect((await dec({ behavior: 'deny', message: 'stop it', interrupt: true })).record).toMatchObject({
      decision: 'prevent',
      reason: 'stop it',
    });
  });

  it('Stop and SubagentStop: block needs a reason; no objection is logged allow', async () => {
    expect((await json('Stop', { decision: 'block', reason: 'run the linter' })).record).toMatchObject({
      decision: 'block',
      reason: 'run the linter',
    });
    expect((await json('SubagentStop', { decision: 'block' })).record).toMatchObject({
      decision: 'error',
      reason: expect.stringMatching(/blocked without a reason/),
    });
    expect((await one('Stop', 'exit 0')).record.decision).toBe('allow');
  });

  it('UserPromptSubmit and SessionStart: plain stdout is context; other events ignore it', async () => {
    expect((await one('UserPromptSubmit', 'echo "today is Tuesday"')).record).toMatchObject({
      decision: 'continue',
      output: 'today is Tuesday',
    });
    expect((await one('SessionStart', 'echo "use bun"')).record).toMatchObject({ output: 'use bun' });
    expect((await one('PreToolUse', 'echo "checking"')).record.output).toBeUndefined();
    expect(
      (await json('UserPromptSubmit', { decision: 'block', reason: 'no secrets' })).record,
    ).toMatchObject({ decision: 'block', reason: 'no secrets' });
  });

  it('context is capped at 10 000 characters, and says how much was cut', async () => {
    const run = await one('SessionStart', `head -c 12000 /dev/zero | tr '\\0' a`);
    expect(run.record.output).toMatch(/^a{10000}… \[2000 more characters cut\]$/);
  });

  it.each([
    ['echo "{not json"', /printed invalid JSON/],
    [`echo '{"decision":"maybe"}'`, /invalid hook output: decision/],
    [
      `echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse"}}'`,
      /for PostToolUse, but the event is PreToolUse/,
    ],
    [`printf '{"a":'; for i in $(seq 1 200); do printf '['; done`, /nested deeper than 64 levels/],
  ])('bad JSON (%s) is a non-blocking error naming the hook', async (command, why) => {
    const run = await one('PreToolUse', command);
    expect(run.record.decision).toBe('error');
    expect(run.record.reason).toMatch(/^PreToolUse hook `/);
    expect(run.record.reason).toMatch(why);
  });
});

describe('matching, parallel runs, duplicates', () => {
  it('runs only the groups whose matcher matches (exact names, lists, regexes), in parallel, each command once', async () => {
    const log = path.join(cwd, 'order.log');
    const cmd = (what: string) => `echo ${what} >> ${log}`;
    const r = runner({
      PreToolUse: [
        { matcher: 'Bash', hooks: [{ type: 'command', command: `sleep 0.3; ${cmd('bash')}` }] },
        { matcher: 'Edit|Write', hooks: [{ type: 'command', command: cmd('edit') }] },
        { matcher: 'Read, Grep', hooks: [{ type: 'command', command: cmd('read') }] },
        { matcher: 'mcp__memory__.*', hooks: [{ type: 'command', command: cmd('mcp') }] },
        { matcher: '*', hooks: [{ type: 'command', command: cmd('all') }] },
        { hooks: [{ type: 'command', command: cmd('all') }] },
      ],
    });
    const names = async (tool: string) =>
      (await r.run('PreToolUse', { tool_name: tool }, { signal: signal() })).map((x) => x.record.command);
    expect(await names('Read')).toEqual([cmd('read'), cmd('all')]);
    expect(await names('BashOutput')).toEqual([cmd('all')]);
    expect(await names('mcp__memory__create_entities')).toEqual([cmd('mcp'), cmd('all')]);
    expect(await names('mcp__memory')).toEqual([cmd('all')]);
    expect(await names('Bash')).toEqual([`sleep 0.3; ${cmd('bash')}`, cmd('all')]);
    const lines = (await readFile(log, 'utf8')).trim().split('\n');
    // The slow Bash hook ran beside the other: its line comes last although it is listed first.
    expect(lines.slice(-2)).toEqual(['all', 'bash']);
    expect(lines.filter((l) => l === 'all')).toHaveLength(5);
  });

  it('events without matchers (UserPromptSubmit, Stop) ignore them', async () => {
    const r = runner({
      Stop: [{ matcher: 'nothing-like-this', hooks: [{ type: 'command', command: 'exit 0' }] }],
    });
    expect(await r.run('Stop', {}, { signal: signal() })).toHaveLength(1);
  });

  it('SessionStart and PreCompact match their own field', async () => {
    const r = runner({
      SessionStart: [{ matcher: 'compact', hooks: [{ type: 'command', command: 'echo again' }] }],
      PreCompact: [{ matcher: 'manual', hooks: [{ type: 'command', command: 'exit 0' }] }],
    });
    expect(await r.run('SessionStart', { source: 'startup' }, { signal: signal() })).toHaveLength(0);
    expect(await r.run('SessionStart', { source: 'compact' }, { signal: signal() })).toHaveLength(1);
    expect(await r.run('PreCompact', { trigger: 'auto' }, { signal: signal() })).toHaveLength(0);
  });
});

describe('in-process callbacks (the SDK shape)', () => {
  it('get the same input and answer with the same JSON; errors and bad answers are non-blocking errors', async () => {
    const seen: unknown[] = [];
    const allow: HookCallback = async (input, toolUseId) => {
      seen.push([input.tool_name, toolUseId]);
      return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow' } };
    };
    const broken: HookCallback = () => {
      throw new Error('kaput');
    };
    const silly: HookCallback = async () => ({ decision: 'perhaps' }) as never;
    const r = runner({ PreToolUse: [{ matcher: 'Bash', hooks: [allow, broken, silly, allow] }] });
    const runs = await r.run('PreToolUse', { tool_name: 'Bash' }, { signal: signal(), toolUseId: 'toolu_7' });
    expect(seen).toEqual([['Bash', 'toolu_7']]);
    expect(runs.map((x) => [x.record.command, x.record.decision, x.record.source])).toEqual([
      ['callback allow', 'allow', 'session'],
      ['callback broken', 'error', 'session'],
      ['callback silly', 'error', 'session'],
    ]);
    expect(runs[1]!.record.reason).toMatch(/threw: kaput/);
  });

  it('a callback past its group timeout is an error', async () => {
    const slow: HookCallback = () => new Promise(() => {});
    const r = runner({ Stop: [{ hooks: [slow], timeout: 0.2 }] });
    const [run] = await r.run('Stop', {}, { signal: signal() });
    expect(run!.record).toMatchObject({
      decision: 'error',
      reason: expect.stringMatching(/did not answer within 0.2 s/),
    });
  });
});
