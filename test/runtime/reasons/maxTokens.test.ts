import { describe, expect, it } from 'vitest';
import { MAX_TOKENS_CONTINUE_TEXT } from '../../../src/machines/loopMessages.ts';
import { fixedStopHook, scriptedSession } from '../../support/harness.ts';
import { reasonSpec, recordsOf, text, textOfMessages, tools, toolUse } from './reasonSpec.ts';

const spec = reasonSpec('maxTokens');

describe('max_tokens', () => {
  it('escalates once, recovers 3 times with the partial output kept, then fails max_tokens_exhausted', async () => {
    const hook = fixedStopHook([{ decision: 'allow' }]);
    const h = await scriptedSession(
      [
        text('cut at the default cap', 'max_tokens'),
        text('part 1', 'max_tokens'),
        text('part 2', 'max_tokens'),
        text('part 3', 'max_tokens'),
        text('part 4', 'max_tokens'),
        text('never sent'),
      ],
      { stopHooks: [hook], settings: { defaultMaxTokens: 8_192, escalatedMaxTokens: 64_000 } },
    );
    const res = await h.session.submit('write a long file');
    await spec.expectRun(h, res, [
      'query_built',
      'max_tokens_escalation',
      'query_built',
      'max_tokens_recovery',
      'query_built',
      'max_tokens_recovery',
      'query_built',
      'max_tokens_recovery',
      'query_built',
      'max_tokens_exhausted',
    ]);
    expect(res.status).toBe('failed');
    expect(h.client.consumed).toBe(5);
    // The escalation re-sends the same request with the higher cap; the cap then stays.
    expect(h.client.requests.map((r) => r.maxTokens)).toEqual([8_192, 64_000, 64_000, 64_000, 64_000]);
    const requested = recordsOf(await h.records(), 'model.requested');
    expect(requested.map((r) => r.data.messageCount)).toEqual([1, 1, 3, 5, 7]);
    // The escalated attempt's cut output is not kept; each recovery keeps its partial output.
    expect(textOfMessages(h)).toEqual([
      'write a long file',
      'part 1',
      MAX_TOKENS_CONTINUE_TEXT,
      'part 2',
      MAX_TOKENS_CONTINUE_TEXT,
      'part 3',
      MAX_TOKENS_CONTINUE_TEXT,
      'part 4',
    ]);
    const origins = recordsOf(await h.records(), 'message.appended').map((r) => r.data.origin);
    expect(origins).toEqual([
      'assistant',
      'max_tokens_continue',
      'assistant',
      'max_tokens_continue',
      'assistant',
      'max_tokens_continue',
      'assistant',
    ]);
    expect(hook.inputs).toEqual([]);
  });

  it('a recovered output that then finishes completes the run', async () => {
    const h = await scriptedSession([
      text('cut', 'max_tokens'),
      text('half of it', 'max_tokens'),
      text('the rest of it'),
    ]);
    const res = await h.session.submit('go');
    await spec.expectRun(h, res, [
      'query_built',
      'max_tokens_escalation',
      'query_built',
      'max_tokens_recovery',
      'query_built',
      'finish_requested',
      'completed',
    ]);
    expect(textOfMessages(h)).toEqual(['go', 'half of it', MAX_TOKENS_CONTINUE_TEXT, 'the rest of it']);
  });

  it('no escalation when the run does not use the default cap: recoveries only', async () => {
    const h = await scriptedSession(
      [text('a', 'max_tokens'), text('b', 'max_tokens'), text('c', 'max_tokens'), text('d', 'max_tokens')],
      // escalatedMaxTokens not above the default: there is nothing to escalate to.
      { settings: { defaultMaxTokens: 4_096, escalatedMaxTokens: 4_096, maxTokensRecoveries: 3 } },
    );
    const res = await h.session.submit('go');
    await spec.expectRun(h, res, [
      'query_built',
      'max_tokens_recovery',
      'query_built',
      'max_tokens_recovery',
      'query_built',
      'max_tokens_recovery',
      'query_built',
      'max_tokens_exhausted',
    ]);
    expect(h.client.requests.map((r) => r.maxTokens)).toEqual([4_096, 4_096, 4_096, 4_096]);
  });

  it('the recovery count is per turn: a tool round starts it over, and the cap goes back to the default', async () => {
    const h = await scriptedSession(
      [
        text('a', 'max_tokens'),
        text('b', 'max_tokens'),
        tools([toolUse('t1', 'echo', { text: 'x' })]),
        text('c', 'max_tokens'),
        text('d', 'max_tokens'),
        text('done'),
      ],
      { settings: { maxTokensRecoveries: 1 } },
    );
    const res = await h.session.submit('go');
    await spec.expectRun(h, res, [
      'query_built',
      'max_tokens_escalation',
      'query_built',
      'max_tokens_recovery',
      'query_built',
      'tool_use_requested',
      'tool_result_continuation',
      'query_built',
      'max_tokens_escalation',
      'query_built',
      'max_tokens_recovery',
      'query_built',
      'finish_requested',
      'completed',
    ]);
    expect(h.client.requests.map((r) => r.maxTokens)).toEqual([8_192, 64_000, 64_000, 8_192, 64_000, 64_000]);
  });

  it("a recovery keeps the cut response's text and thinking as the partial output", async () => {
    const h = await scriptedSession([
      text('x', 'max_tokens'),
      {
        content: [
          { type: 'thinking', thinking: 'hmm' },
          { type: 'text', text: 'partial' },
        ],
        stop_reason: 'max_tokens',
      },
      text('done'),
    ]);
    const res = await h.session.submit('go');
    await spec.expectRun(h, res, [
      'query_built',
      'max_tokens_escalation',
      'query_built',
      'max_tokens_recovery',
      'query_built',
      'finish_requested',
      'completed',
    ]);
    expect(h.session.state.messages.at(1)!.content).toEqual([
      { type: 'thinking', thinking: 'hmm' },
      { type: 'text', text: 'partial' },
    ]);
  });

  spec.ownedReasonsAsserted();
});
