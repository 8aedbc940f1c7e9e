/**
 * `coverageOf(log).tools`: each tool's calls per outcome, from real runs — an allowed call, a
 * failing one, a denial, a schema refusal, an unknown tool, a PreToolUse hook's block, a park on
 * an approval nobody gave, and a call cut short by an abort.
 */
import { describe, expect, it } from 'vitest';
import { formatToolOutcomes, ToolOutcomeCounter } from '../../src/coverage/toolOutcomes.ts';
import type { LogRecord } from '../../src/store/records.ts';
import {
  coverageOf,
  runSession,
  scriptedModel,
  TOOL_OUTCOMES,
  text,
  toolUse,
} from '../../src/testing/index.ts';
import type { Tool } from '../../src/tools/types.ts';
import { echoTool } from '../support/harness.ts';

const failing: Tool<{ text: string }> = {
  ...echoTool,
  name: 'failing',
  async call() {
    return { content: 'it broke', isError: true };
  },
};

const none = Object.fromEntries(TOOL_OUTCOMES.map((o) => [o, 0]));

describe('coverageOf(log).tools', () => {
  it('lists every outcome tool.finished can carry, and parked', () => {
    expect(TOOL_OUTCOMES).toEqual([
      'ok',
      'error',
      'denied',
      'hook_blocked',
      'invalid_input',
      'unknown_tool',
      'timeout',
      'interrupted',
      'parked',
    ]);
  });

  it('counts ok, error, denied, invalid_input, unknown_tool and hook_blocked per tool', async () => {
    const run = await runSession({
      model: scriptedModel([
        toolUse('echo', { text: 'a' }),
        toolUse('failing', { text: 'b' }),
        toolUse('echo', { text: 'deny me' }),
        toolUse('echo', { wrong: 1 }),
        toolUse('nosuch', {}),
        toolUse('echo', { text: 'hook says no' }),
        toolUse('echo', { text: 'c' }),
        text('done'),
      ]),
      prompt: 'go',
      tools: [echoTool, failing],
      settings: { maxTurns: 20 },
      canUseTool: (req) =>
        (req.input as { text?: string }).text === 'deny me'
          ? { behavior: 'deny', message: 'not that one' }
          : { behavior: 'allow' },
      hooks: {
        PreToolUse: [
          {
            matcher: 'echo',
            hooks: [
              async (input) =>
                (input.tool_input as { text?: string }).text === 'hook says no'
                  ? { hookSpecificOutput: { permissionDecision: 'deny', permissionDecisionReason: 'no' } }
                  : {},
            ],
          },
        ],
      },
    });
    expect(run.result.status).toBe('completed');
    const { tools, reasons } = coverageOf(run.records);
    expect(tools).toEqual({
      echo: { ...none, ok: 2, denied: 1, invalid_input: 1, hook_blocked: 1 },
      failing: { ...none, error: 1 },
      nosuch: { ...none, unknown_tool: 1 },
    });
    // What reason coverage alone cannot tell apart.
    expect(reasons.covered).toContain('tool_result_continuation');
    expect(Object.keys(tools)).toEqual(['echo', 'failing', 'nosuch']);
  });

  it('counts a call parked on an approval, and one interrupted by an abort', async () => {
    const parked = await runSession({
      model: scriptedModel([toolUse('echo', { text: 'may I?' })]),
      prompt: 'go',
      tools: [echoTool],
      canUseTool: () => ({ behavior: 'ask', message: 'needs a human' }),
    });
    expect(parked.result.status).toBe('paused');

    const controller = new AbortController();
    const slow: Tool<{ text: string }> = {
      ...echoTool,
      name: 'slow',
      async call(_input, ctx) {
        controller.abort();
        if (!ctx.signal.aborted) await new Promise((res) => ctx.signal.addEventListener('abort', res));
        return { content: 'stopped', isError: true };
      },
    };
    const aborted = await runSession({
      model: scriptedModel([toolUse('slow', { text: 'x' })]),
      prompt: 'go',
      tools: [slow],
      signal: controller.signal,
    });
    expect(aborted.result.status).toBe('aborted');

    expect(coverageOf([parked.records, aborted.records]).tools).toEqual({
      echo: { ...none, parked: 1 },
      slow: { ...none, interrupted: 1 },
    });
  });

  it('counts the records it is given, whatever the outcome, and prints one row per tool', () => {
    const counter = new ToolOutcomeCounter();
    let seq = 0;
    const finished = (name: string, outcome: string) =>
      ({
        v: 2,
        seq: ++seq,
        at: 0,
        session: 's',
        run: 'r',
        type: 'tool.finished',
        data: {
          toolUseId: `t${seq}`,
          name,
          index: 0,
          outcome,
          result: { content: '', isError: false },
          durationMs: 0,
        },
      }) as LogRecord;
    counter.add(finished('Bash', 'timeout'));
    counter.add(finished('Bash', 'ok'));
    counter.add(finished('Bash', 'ok'));
    counter.add({
      v: 2,
      seq: ++seq,
      at: 0,
      session: 's',
      run: 'r',
      type: 'approval.requested',
      data: { toolUseId: 't9', tool: 'Write', input: {} },
    } as LogRecord);
    const tools = counter.report();
    expect(tools).toEqual({ Bash: { ...none, ok: 2, timeout: 1 }, Write: { ...none, parked: 1 } });
    expect(formatToolOutcomes(tools)).toEqual([
      'tool   ok  error  denied  hook_blocked  invalid_input  unknown_tool  timeout  interrupted  parked',
      'Bash    2      0       0             0              0             0        1            0       0',
      'Write   0      0       0             0              0             0        0            0       1',
    ]);
    expect(formatToolOutcomes({})).toEqual(['no tool calls']);
  });
});
