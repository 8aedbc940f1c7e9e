import { describe, expect, it } from 'vitest';
import { fixedStopHook, scriptedSession, textTurn, toolTurn } from '../support/harness.ts';

describe('a failed run says why', () => {
  it('refusal carries the model text', async () => {
    const h = await scriptedSession([textTurn('I cannot help with that.', 'refusal')]);
    const res = await h.session.submit('x');
    expect(res).toMatchObject({ status: 'failed', reason: 'refused' });
    expect(res.error).toContain('I cannot help with that.');
    const ended = (await h.records()).at(-1)!;
    expect(ended.type === 'run.ended' && ended.data.error).toContain('refused');
  });

  it('max turns, budget and stop hooks name their limit', async () => {
    const turns = await scriptedSession([toolTurn([{ name: 'echo', input: { text: 'a' } }])], {
      settings: { maxTurns: 1 },
    });
    expect((await turns.session.submit('x')).error).toBe('stopped after maxTurns (1) turns');

    const budget = await scriptedSession(
      [textTurn('big', 'end_turn', { input_tokens: 900, output_tokens: 200 })],
      {
        settings: { maxBudgetTokens: 1000 },
      },
    );
    expect((await budget.session.submit('x')).error).toContain('1100 of 1000 tokens');

    const hook = await scriptedSession([textTurn('done')], {
      stopHooks: [fixedStopHook([{ decision: 'prevent', reason: 'deploy freeze' }])],
    });
    expect((await hook.session.submit('x')).error).toContain('deploy freeze');
  });
});
