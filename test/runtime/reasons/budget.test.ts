import { describe, expect, it } from 'vitest';
import { parseScript } from '../../../src/model/script.ts';
import { ScriptedModelClient } from '../../../src/model/scripted.ts';
import { tokenTargetPolicy } from '../../../src/runtime/budget.ts';
import { fixedStopHook, scriptedSession } from '../../support/harness.ts';
import { reasonSpec, recordsOf, summary, text, textOfMessages, tools, toolUse, usage } from './reasonSpec.ts';

const spec = reasonSpec('budget');

/** A session whose model charges $0.01 per 1 000 input or output tokens. */
async function pricedSession(turns: unknown[], settings: Record<string, unknown>) {
  const client = new ScriptedModelClient(parseScript({ turns }), {
    costOf: (_model, u) => (u.inputTokens + u.outputTokens) / 100_000,
  });
  const h = await scriptedSession([], { model: client, settings });
  return { ...h, client };
}

describe('budget', () => {
  it('maxBudgetTokens spent: budget_exhausted; a tool_use in that response gets a synthetic result', async () => {
    const hook = fixedStopHook([{ decision: 'allow' }]);
    const h = await scriptedSession(
      [
        tools([toolUse('t1', 'echo', { text: 'a' })], 'tool_use', usage(100, 20)),
        tools([toolUse('t2', 'echo', { text: 'b' })], 'tool_use', usage(100, 20)),
        text('never sent'),
      ],
      { settings: { maxBudgetTokens: 200 }, stopHooks: [hook] },
    );
    const res = await h.session.submit('go');
    const records = await spec.expectRun(h, res, [
      'query_built',
      'tool_use_requested',
      'tool_result_continuation',
      'query_built',
      'budget_exhausted',
    ]);
    expect(res.status).toBe('failed');
    // t2 never ran but is answered, so the history can be sent again.
    expect(recordsOf(records, 'tool.started').map((r) => r.data.toolUseId)).toEqual(['t1']);
    expect(h.session.state.messages.last()!.content).toEqual([
      expect.objectContaining({ type: 'tool_result', tool_use_id: 't2', is_error: true }),
    ]);
    // The response that went over the budget still counts.
    expect(res.usage).toMatchObject({ inputTokens: 200, outputTokens: 40 });
    expect(hook.inputs).toEqual([]);
  });

  it('maxBudgetUsd spent: budget_exhausted', async () => {
    // $0.0012 per response; the budget allows two of them.
    const h = await pricedSession(
      [
        tools([toolUse('t1', 'echo', { text: 'a' })], 'tool_use', usage(100, 20)),
        tools([toolUse('t2', 'echo', { text: 'b' })], 'tool_use', usage(100, 20)),
        tools([toolUse('t3', 'echo', { text: 'c' })], 'tool_use', usage(100, 20)),
      ],
      { maxBudgetUsd: 0.003 },
    );
    const res = await h.session.submit('go');
    await spec.expectRun(h, res, [
      'query_built',
      'tool_use_requested',
      'tool_result_continuation',
      'query_built',
      'tool_use_requested',
      'tool_result_continuation',
      'query_built',
      'budget_exhausted',
    ]);
    expect(res.usage.costUsd).toBeCloseTo(0.0036, 9);
    expect(h.session.state.usage.costUsd).toBeCloseTo(0.0036, 9);
  });

  it('a response within the budget finishes normally', async () => {
    const h = await scriptedSession([text('done', 'end_turn', usage(100, 10))], {
      settings: { maxBudgetTokens: 110 },
    });
    const res = await h.session.submit('go');
    await spec.expectRun(h, res, ['query_built', 'finish_requested', 'completed']);
  });

  it('tokenTargetPolicy: budget_continuation while the output is short of the target', async () => {
    const hook = fixedStopHook([{ decision: 'allow' }]);
    const h = await scriptedSession(
      [text('a bit', 'end_turn', usage(100, 300)), text('a lot more', 'end_turn', usage(100, 700))],
      { budgetPolicy: tokenTargetPolicy(1_000), stopHooks: [hook] },
    );
    const res = await h.session.submit('write 1000 tokens');
    const records = await spec.expectRun(h, res, [
      'query_built',
      'finish_requested',
      'budget_continuation',
      'query_built',
      'finish_requested',
      'completed',
    ]);
    expect(textOfMessages(h)[2]).toMatch(/^Token budget: 300 of 1000 output tokens used\. Keep working/);
    expect(recordsOf(records, 'message.appended').map((r) => r.data.origin)).toEqual([
      'assistant',
      'budget_continue',
      'assistant',
    ]);
    expect(recordsOf(records, 'hook.decided').map((r) => [r.data.hook, r.data.decision])).toEqual([
      ['Budget', 'continue'],
      ['Budget', 'allow'],
      ['Stop', 'allow'],
    ]);
    // The stop hooks are asked only once the budget policy lets the model stop.
    expect(hook.inputs).toHaveLength(1);
  });

  it('tokenTargetPolicy stops nudging after its maximum number of continuations', async () => {
    const h = await scriptedSession(
      Array.from({ length: 4 }, () => text('short', 'end_turn', usage(10, 10))),
      { budgetPolicy: tokenTargetPolicy(1_000, 3) },
    );
    const res = await h.session.submit('go');
    await spec.expectRun(h, res, [
      'query_built',
      'finish_requested',
      'budget_continuation',
      'query_built',
      'finish_requested',
      'budget_continuation',
      'query_built',
      'finish_requested',
      'budget_continuation',
      'query_built',
      'finish_requested',
      'completed',
    ]);
  });

  it('token accounting: every response (turns and compactions) is added to the run result and the session', async () => {
    const u = (i: number, o: number, cr = 0, cc = 0) => ({
      input_tokens: i,
      output_tokens: o,
      cache_read_input_tokens: cr,
      cache_creation_input_tokens: cc,
    });
    const h = await scriptedSession(
      [
        tools([toolUse('t1', 'echo', { text: 'a' })], 'tool_use', u(900, 200, 50, 5)),
        summary('S', usage(300, 40)),
        text('done', 'end_turn', u(120, 30, 7, 0)),
        text('second run', 'end_turn', u(1, 2, 3, 4)),
      ],
      { settings: { autoCompactThreshold: 1_000 } },
    );
    const first = await h.session.submit('go');
    await spec.expectRun(h, first, [
      'query_built',
      'tool_use_requested',
      'auto_compact',
      'compacted',
      'query_built',
      'finish_requested',
      'completed',
    ]);
    const firstUsage = {
      inputTokens: 1_320,
      outputTokens: 270,
      cacheReadInputTokens: 57,
      cacheCreationInputTokens: 5,
      costUsd: 0,
    };
    expect(first.usage).toEqual(firstUsage);
    expect(h.session.state.usage).toEqual(firstUsage);

    const second = await h.session.submit('again');
    await spec.expectRun(h, second, ['query_built', 'finish_requested', 'completed']);
    expect(second.usage).toEqual({
      inputTokens: 1,
      outputTokens: 2,
      cacheReadInputTokens: 3,
      cacheCreationInputTokens: 4,
      costUsd: 0,
    });
    expect(h.session.state.usage).toEqual({
      inputTokens: 1_321,
      outputTokens: 272,
      cacheReadInputTokens: 60,
      cacheCreationInputTokens: 9,
      costUsd: 0,
    });
    expect(h.session.state.runs.toArray().map((r) => r.usage)).toEqual([first.usage, second.usage]);
  });

  it('the budget counts the usage of every response of the run, compactions included', async () => {
    const h = await scriptedSession(
      [
        tools([toolUse('t1', 'echo', { text: 'a' })], 'tool_use', usage(990, 20)),
        summary('S', usage(500, 100)),
        text('done', 'end_turn', usage(100, 10)),
      ],
      { settings: { autoCompactThreshold: 1_000, maxBudgetTokens: 1_700 } },
    );
    const res = await h.session.submit('go');
    await spec.expectRun(h, res, [
      'query_built',
      'tool_use_requested',
      'auto_compact',
      'compacted',
      'query_built',
      'budget_exhausted',
    ]);
  });

  it('a budget policy that throws is a broken plug-in: runtime_error', async () => {
    const h = await scriptedSession([text('done')], {
      budgetPolicy: () => {
        throw new Error('policy bug');
      },
    });
    const res = await h.session.submit('go');
    await spec.expectRun(h, res, ['query_built', 'finish_requested', 'runtime_error']);
    expect(res.error).toBe('policy bug');
  });

  spec.ownedReasonsAsserted();
});
