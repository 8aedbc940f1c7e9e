import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCommandPreToolUseHook, createCommandStopHook } from '../../src/hooks/commandHooks.ts';
import type { StopHookInput } from '../../src/hooks/types.ts';
import { readTool } from '../../src/tools/builtin/read.ts';
import { processGroupAlive } from '../../src/tools/processGroup.ts';
import type { PermissionRequest } from '../../src/tools/types.ts';
import { removeDir, tempDir } from '../tools/toolHarness.ts';

let cwd: string;
beforeAll(async () => {
  cwd = await tempDir('reloop-hooks-');
});
afterAll(() => removeDir(cwd));

const stopInput = (): StopHookInput => ({
  session_id: 's1',
  hook_event_name: 'Stop',
  stop_hook_active: true,
  last_assistant_message: 'All done.',
  cwd,
});
const signal = () => new AbortController().signal;
const stop = (command: string, timeoutMs = 5_000) =>
  createCommandStopHook(command, { timeoutMs, killGraceMs: 200 }).run(stopInput(), signal());

describe('command Stop hook', () => {
  it('sends the event as JSON on stdin, runs in cwd with CLAUDE_PROJECT_DIR set', async () => {
    const r = await stop('cat > in.json; echo "$CLAUDE_PROJECT_DIR" > env.txt');
    expect(r).toEqual({ decision: 'allow' });
    expect(JSON.parse(await readFile(path.join(cwd, 'in.json'), 'utf8'))).toEqual(stopInput());
    expect((await readFile(path.join(cwd, 'env.txt'), 'utf8')).trim()).toBe(cwd);
  });

  it('does not see the runtime’s credentials unless passed on purpose', async () => {
    const saved = process.env.ANTHROPIC_API_KEY;
    process.env.ANTHROPIC_API_KEY = 'sk-ant-hook-test-0123456789';
    try {
      const echo = 'echo "[$ANTHROPIC_API_KEY]" >&2; exit 2';
      expect(await stop(echo)).toEqual({ decision: 'block', reason: '[]' });
      const passed = await createCommandStopHook(echo, { passEnv: ['ANTHROPIC_API_KEY'] }).run(
        stopInput(),
        signal(),
      );
      expect(passed).toEqual({ decision: 'block', reason: '[sk-ant-hook-test-0123456789]' });
    } finally {
      if (saved === undefined) delete process.env.ANTHROPIC_API_KEY;
      else process.env.ANTHROPIC_API_KEY = saved;
    }
  });

  it('allows on exit 0 with empty stdout, even without reading stdin', async () => {
    expect(await stop('exit 0')).toEqual({ decision: 'allow' });
  });

  it('blocks on exit 2 with stderr as the reason', async () => {
    expect(await stop('echo "tests still fail" >&2; exit 2')).toEqual({
      decision: 'block',
      reason: 'tests still fail',
    });
  });

  it('blocks on {"decision":"block"} and needs a reason for it', async () => {
    expect(await stop(`echo '{"decision":"block","reason":"run the linter"}'`)).toEqual({
      decision: 'block',
      reason: 'run the linter',
    });
    expect(await stop(`echo '{"decision":"block"}'`)).toMatchObject({
      decision: 'error',
      reason: expect.stringMatching(/blocked without a reason/),
    });
    expect(await stop(`echo '{"decision":"approve"}'`)).toEqual({ decision: 'allow' });
  });

  it('prevents continuation on {"continue":false}', async () => {
    expect(
      await stop(`echo '{"continue":false,"stopReason":"budget spent","decision":"block","reason":"x"}'`),
    ).toEqual({
      decision: 'prevent',
      reason: 'budget spent',
    });
  });

  it('reports invalid JSON as an error naming the hook', async () => {
    const r = await stop('echo "{not json"');
    expect(r.decision).toBe('error');
    expect(r).toMatchObject({
      reason: expect.stringMatching(/^Stop hook `echo "\{not json"` printed invalid JSON/),
    });
    expect(await stop(`echo '{"decision":"maybe"}'`)).toMatchObject({
      decision: 'error',
      reason: expect.stringMatching(/invalid decision: decision/),
    });
    expect(await stop('echo "[1]"')).toMatchObject({ decision: 'error' });
  });

  it('reports other non-zero exits as errors, not blocks', async () => {
    expect(await stop('echo boom >&2; exit 1')).toEqual({
      decision: 'error',
      reason: 'Stop hook `echo boom >&2; exit 1` failed with exit code 1: boom',
    });
  });

  it('kills a hung hook and its process group after the timeout: an error, not a block', async () => {
    const started = Date.now();
    const r = await stop('echo $$ > hung.pid; sleep 30 & sleep 30', 400);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(r).toMatchObject({
      decision: 'error',
      reason: expect.stringMatching(/did not finish within 0.4 s/),
    });
    const pid = Number(await readFile(path.join(cwd, 'hung.pid'), 'utf8'));
    expect(processGroupAlive(pid)).toBe(false);
  });

  it('stops on abort with an error', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 100);
    const r = await createCommandStopHook('sleep 30', { killGraceMs: 200 }).run(stopInput(), ac.signal);
    expect(r).toMatchObject({ decision: 'error', reason: expect.stringMatching(/aborted/) });
  });
});

describe('command PreToolUse hook', () => {
  const request: PermissionRequest = {
    tool: readTool(),
    input: { file_path: 'a.ts' },
    toolUseId: 'toolu_9',
    cwd: '',
  };
  async function pre(command: string, timeoutMs = 5_000) {
    const errors: string[] = [];
    const hook = createCommandPreToolUseHook(command, {
      timeoutMs,
      killGraceMs: 200,
      sessionId: 's2',
      onError: (m) => errors.push(m),
    });
    const decision = await hook({ ...request, cwd });
    return { decision, errors };
  }

  it('sends session, tool name and input on stdin; empty stdout leaves the decision to the policy', async () => {
    const { decision } = await pre('cat > pre.json');
    expect(decision).toEqual({ decision: 'continue' });
    expect(JSON.parse(await readFile(path.join(cwd, 'pre.json'), 'utf8'))).toMatchObject({
      session_id: 's2',
      hook_event_name: 'PreToolUse',
      tool_name: 'Read',
      tool_input: { file_path: 'a.ts' },
      cwd,
    });
  });

  it('denies on exit 2 with stderr as the reason', async () => {
    expect((await pre('echo "no reading a.ts" >&2; exit 2')).decision).toEqual({
      decision: 'deny',
      reason: 'no reading a.ts',
    });
  });

  it.each([
    [`{"decision":"approve"}`, { decision: 'allow' }],
    [`{"decision":"allow","reason":"ok"}`, { decision: 'allow', reason: 'ok' }],
    [`{"decision":"block","reason":"nope"}`, { decision: 'deny', reason: 'nope' }],
    [`{"decision":"deny"}`, { decision: 'deny', reason: expect.stringMatching(/denied by PreToolUse hook/) }],
    [`{"continue":false,"stopReason":"halt"}`, { decision: 'deny', reason: 'halt' }],
    [`{"suppressOutput":true}`, { decision: 'continue' }],
    [
      `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"r"}}`,
      { decision: 'deny', reason: 'r' },
    ],
    [
      `{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"file_path":"b.ts"}},"decision":"block"}`,
      { decision: 'allow', updatedInput: { file_path: 'b.ts' } },
    ],
    [
      `{"hookSpecificOutput":{"permissionDecision":"ask","permissionDecisionReason":"check"}}`,
      { decision: 'continue', reason: 'check' },
    ],
  ])('maps %s', async (json, expected) => {
    const { decision, errors } = await pre(`echo '${json}'`);
    expect(decision).toMatchObject(expected);
    expect(errors).toEqual([]);
  });

  it.each([
    ['echo "{oops"', /printed invalid JSON/],
    ['echo crash >&2; exit 3', /failed with exit code 3: crash/],
  ])('reports %j as an error and does not deny', async (command, why) => {
    const { decision, errors } = await pre(command);
    expect(decision).toMatchObject({ decision: 'continue', reason: expect.stringMatching(why) });
    expect(errors).toEqual([expect.stringMatching(why)]);
  });

  it('kills a hung hook after its timeout and does not deny', async () => {
    const { decision, errors } = await pre('echo $$ > pre-hung.pid; sleep 30', 300);
    expect(decision.decision).toBe('continue');
    expect(errors).toEqual([expect.stringMatching(/did not finish within 0.3 s and was killed/)]);
    expect(processGroupAlive(Number(await readFile(path.join(cwd, 'pre-hung.pid'), 'utf8')))).toBe(false);
  });
});
