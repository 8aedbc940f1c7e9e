import { describe, expect, it } from 'vitest';
import { ScriptError } from '../../src/model/script.ts';
import {
  apiError,
  coverageOf,
  reasonsOf,
  runSession,
  scriptedModel,
  text,
  toolUse,
} from '../../src/testing/index.ts';
import { echoTool } from '../support/harness.ts';

describe('script turns', () => {
  it('text, toolUse and apiError give script turns with defaults', () => {
    expect(text('hi')).toEqual({ text: 'hi', stop_reason: 'end_turn' });
    expect(text('cut', 'max_tokens')).toEqual({ text: 'cut', stop_reason: 'max_tokens' });
    expect(toolUse('echo', { text: 'x' })).toEqual({
      content: [{ type: 'tool_use', id: 'toolu_echo', name: 'echo', input: { text: 'x' } }],
      stop_reason: 'tool_use',
    });
    expect(apiError(529, 'overloaded_error', 'Overloaded', { retryAfterMs: 1500 })).toEqual({
      error: { status: 529, type: 'overloaded_error', message: 'Overloaded', retry_after_ms: 1500 },
    });
    expect(apiError(500, 'api_error', 'boom')).toEqual({
      error: { status: 500, type: 'api_error', message: 'boom' },
    });
  });

  it('scriptedModel numbers tool calls toolu_1, toolu_2, … in script order', async () => {
    const { records } = await runSession({
      model: scriptedModel([toolUse('echo', { text: 'a' }), toolUse('echo', { text: 'b' }), text('done')]),
      prompt: 'go',
      tools: [echoTool],
    });
    const ids = records.flatMap((r) => (r.type === 'tool.started' ? [r.data.toolUseId] : []));
    expect(ids).toEqual(['toolu_1', 'toolu_2']);
  });

  it('a malformed turn is a ScriptError naming the turn', () => {
    expect(() => scriptedModel([text('fine'), { stop_reason: 'end_turn' } as never])).toThrow(ScriptError);
    expect(() => scriptedModel([text('fine'), { stop_reason: 'end_turn' } as never])).toThrow(/turn 2/);
  });
});

describe('runSession', () => {
  it('is deterministic: the same script writes the same records', async () => {
    const script = () => scriptedModel([toolUse('echo', { text: 'a' }), text('done')]);
    const a = await runSession({ model: script(), prompt: 'go', tools: [echoTool] });
    const b = await runSession({ model: script(), prompt: 'go', tools: [echoTool] });
    expect(b.records).toEqual(a.records);
    expect(a.reasons).toEqual(reasonsOf(a.records));
  });

  it("honours the server's retry-after and settings such as maxTurns", async () => {
    const retried = await runSession({
      model: scriptedModel([
        apiError(529, 'overloaded_error', 'Overloaded', { retryAfterMs: 1500 }),
        text('ok'),
      ]),
      prompt: 'go',
    });
    const backoff = retried.records.find((r) => r.type === 'backoff.scheduled');
    expect(backoff?.data).toMatchObject({ retryAfterMs: 1500 });

    const capped = await runSession({
      model: scriptedModel([toolUse('echo', { text: 'a' }), toolUse('echo', { text: 'b' })]),
      prompt: 'go',
      tools: [echoTool],
      settings: { maxTurns: 1 },
    });
    expect(capped.result.reason).toBe('max_turns_reached');
  });

  it('an { abort: true } turn aborts the session it runs in', async () => {
    const { result, reasons } = await runSession({ model: scriptedModel([{ abort: true }]), prompt: 'go' });
    expect(result.status).toBe('aborted');
    expect(reasons.at(-1)).toBe('aborted');
  });

  it('stop hooks and the permission policy reach the session', async () => {
    const denied = await runSession({
      model: scriptedModel([toolUse('echo', { text: 'a' }), text('done'), text('still done')]),
      prompt: 'go',
      tools: [echoTool],
      canUseTool: () => ({ behavior: 'deny', message: 'not here' }),
      stopHooks: [{ name: 'never', run: async () => ({ decision: 'block', reason: 'keep going' }) }],
      settings: { stopHookBlockCap: 1 },
    });
    const finished = denied.records.find((r) => r.type === 'tool.finished');
    expect(finished?.data).toMatchObject({ outcome: 'denied' });
    expect(denied.result.reason).toBe('stop_hook_block_limit');
  });
});

describe('coverageOf', () => {
  it('takes one session or a list of them', async () => {
    const a = await runSession({ model: scriptedModel([text('hi')]), prompt: 'go' });
    const b = await runSession({
      model: scriptedModel([apiError(400, 'invalid_request_error', 'no')]),
      prompt: 'go',
    });
    const one = coverageOf(a.records);
    const both = coverageOf([a.records, b.records]);
    expect(one.reasons.covered).toContain('completed');
    expect(one.reasons.covered).not.toContain('model_error');
    expect(both.reasons.covered).toEqual(expect.arrayContaining(['completed', 'model_error']));
    expect(both.edges.covered).toBeGreaterThan(one.edges.covered);
    expect(Object.keys(both).sort()).toEqual(['edges', 'reasons', 'tools']);
    expect(Object.keys(both.edges).sort()).toEqual(['covered', 'missing', 'total']);
    expect(Object.keys(both.reasons).sort()).toEqual(['covered', 'missing']);
  });
});
