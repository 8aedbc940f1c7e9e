import { describe, expect, it } from 'vitest';
import { scriptedSession, textTurn, toolTurn } from '../support/harness.ts';

describe('a scripted run', () => {
  it('runs one tool round then completes', async () => {
    const h = await scriptedSession([toolTurn([{ name: 'echo', input: { text: 'hi' } }]), textTurn('done')]);
    const res = await h.session.submit('say hi');
    expect(res).toMatchObject({ status: 'completed', reason: 'completed', turns: 2 });
    expect(await h.reasons()).toEqual([
      'query_built',
      'tool_use_requested',
      'tool_result_continuation',
      'query_built',
      'finish_requested',
      'completed',
    ]);
    expect(h.historyProblems()).toEqual([]);
    const types = (await h.records()).map((r) => r.type);
    expect(types[0]).toBe('session.created');
    expect(types.at(-1)).toBe('run.ended');
  });
});
