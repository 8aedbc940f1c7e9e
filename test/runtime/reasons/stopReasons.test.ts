import { describe, expect, it } from 'vitest';
import { fixedStopHook, scriptedSession } from '../../support/harness.ts';
import { reasonSpec, recordsOf, summary, text, textOfMessages, tools, toolUse, usage } from './reasonSpec.ts';

const spec = reasonSpec('stopReasons');

/** The seven stop reasons of the Messages API: content decides, the stop reason only refines. */
describe('stop reasons', () => {
  it('end_turn without tool_use: stop checks, then completed', async () => {
    const hook = fixedStopHook([{ decision: 'allow' }]);
    const h = await scriptedSession([text('all done')], { stopHooks: [hook] });
    const res = await h.session.submit('hi');
    await spec.expectRun(h, res, ['query_built', 'finish_requested', 'completed']);
    expect(res.turns).toBe(1);
    expect(hook.inputs).toHaveLength(1);
    expect(textOfMessages(h)).toEqual(['hi', 'all done']);
  });

  it('tool_use with tool_use blocks: the tools run, next turn', async () => {
    const h = await scriptedSession([
      tools([toolUse('t1', 'echo', { text: 'a' }), toolUse('t2', 'echo', { text: 'b' })]),
      text('done'),
    ]);
    const res = await h.session.submit('go');
    await spec.expectRun(h, res, [
      'query_built',
      'tool_use_requested',
      'tool_result_continuation',
      'query_built',
      'finish_requested',
      'completed',
    ]);
    expect(res.turns).toBe(2);
    const results = h.session.state.messages.at(2)!;
    expect(results.content).toEqual([
      { type: 'tool_result', tool_use_id: 't1', content: 'echo: a' },
      { type: 'tool_result', tool_use_id: 't2', content: 'echo: b' },
    ]);
  });

  it('tool_use WITHOUT any tool_use block: content decides, the run finishes', async () => {
    const hook = fixedStopHook([{ decision: 'allow' }]);
    const h = await scriptedSession([text('I would call a tool, but no', 'tool_use')], { stopHooks: [hook] });
    const res = await h.session.submit('go');
    await spec.expectRun(h, res, ['query_built', 'finish_requested', 'completed']);
    expect(recordsOf(await h.records(), 'tool.started')).toEqual([]);
    expect(hook.inputs).toHaveLength(1);
  });

  it('end_turn WITH tool_use blocks: content decides, the tools run', async () => {
    const h = await scriptedSession([tools([toolUse('t1', 'echo', { text: 'x' })], 'end_turn'), text('ok')]);
    const res = await h.session.submit('go');
    await spec.expectRun(h, res, [
      'query_built',
      'tool_use_requested',
      'tool_result_continuation',
      'query_built',
      'finish_requested',
      'completed',
    ]);
    const finished = recordsOf(await h.records(), 'tool.finished');
    expect(finished.map((r) => [r.data.toolUseId, r.data.outcome])).toEqual([['t1', 'ok']]);
  });

  it('stop_sequence: the normal path, decided by content', async () => {
    const h = await scriptedSession([
      tools([toolUse('t1', 'echo', { text: 'x' })], 'stop_sequence'),
      text('stopped at the sequence', 'stop_sequence'),
    ]);
    const res = await h.session.submit('go');
    await spec.expectRun(h, res, [
      'query_built',
      'tool_use_requested',
      'tool_result_continuation',
      'query_built',
      'finish_requested',
      'completed',
    ]);
  });

  it('refusal: the run fails at once, no retry, no stop hook', async () => {
    const hook = fixedStopHook([{ decision: 'block', reason: 'keep going' }]);
    const h = await scriptedSession([text('I cannot help with that', 'refusal'), text('never sent')], {
      stopHooks: [hook],
    });
    const res = await h.session.submit('do something bad');
    await spec.expectRun(h, res, ['query_built', 'refused']);
    expect(res.status).toBe('failed');
    expect(hook.inputs).toEqual([]);
    expect(h.client.consumed).toBe(1);
    expect(textOfMessages(h).at(-1)).toBe('I cannot help with that');
  });

  it('refusal with tool_use blocks: the blocks never run but get a tool_result', async () => {
    const h = await scriptedSession([tools([toolUse('t1', 'echo', { text: 'x' })], 'refusal')]);
    const res = await h.session.submit('go');
    await spec.expectRun(h, res, ['query_built', 'refused']);
    expect(recordsOf(await h.records(), 'tool.started')).toEqual([]);
    const last = h.session.state.messages.last()!;
    expect(last.content).toEqual([
      expect.objectContaining({ type: 'tool_result', tool_use_id: 't1', is_error: true }),
    ]);
  });

  it('pause_turn: the paused turn is sent back unchanged, then the run continues', async () => {
    const h = await scriptedSession([text('searching…', 'pause_turn'), text('found it')]);
    const res = await h.session.submit('search');
    await spec.expectRun(h, res, [
      'query_built',
      'pause_turn_continuation',
      'query_built',
      'finish_requested',
      'completed',
    ]);
    // The second request carries the paused assistant turn at its end, nothing added after it.
    const requested = recordsOf(await h.records(), 'model.requested');
    expect(requested.map((r) => r.data.messageCount)).toEqual([1, 2]);
    expect(textOfMessages(h)).toEqual(['search', 'searching…', 'found it']);
    expect(h.client.requests[1]!.maxTokens).toBe(h.client.requests[0]!.maxTokens);
  });

  it('model_context_window_exceeded: compact, then retry (as for prompt too long)', async () => {
    const h = await scriptedSession([
      text('', 'model_context_window_exceeded', usage(199_000, 0)),
      summary(),
      text('done after compaction'),
    ]);
    const res = await h.session.submit('a long task');
    await spec.expectRun(h, res, [
      'query_built',
      'compact_retry',
      'compacted',
      'query_built',
      'finish_requested',
      'completed',
    ]);
    const purposes = recordsOf(await h.records(), 'model.requested').map((r) => r.data.purpose);
    expect(purposes).toEqual(['turn', 'compaction', 'turn']);
  });

  it('a run on a history ending with an assistant message continues it instead of prefilling', async () => {
    const h = await scriptedSession([text('first answer'), text('second answer')]);
    await h.session.submit('hi');
    const res = await h.session.submit();
    await spec.expectRun(h, res, ['query_built', 'finish_requested', 'completed']);
    expect(textOfMessages(h)).toEqual([
      'hi',
      'first answer',
      'Continue where you left off.',
      'second answer',
    ]);
  });

  spec.ownedReasonsAsserted();
});
