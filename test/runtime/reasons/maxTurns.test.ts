import { describe, expect, it } from 'vitest';
import { MAX_TURNS_MARKER } from '../../../src/machines/loopMessages.ts';
import { fixedStopHook, scriptedSession } from '../../support/harness.ts';
import { reasonSpec, recordsOf, text, textOfMessages, tools, toolUse } from './reasonSpec.ts';

const spec = reasonSpec('maxTurns');

const round = (id: string) => tools([toolUse(id, 'echo', { text: id })]);

describe('maxTurns', () => {
  it('maxTurns 1: the first tool round ends the run max_turns_reached, marker in the history', async () => {
    const hook = fixedStopHook([{ decision: 'allow' }]);
    const h = await scriptedSession([round('t1'), text('never sent')], {
      settings: { maxTurns: 1 },
      stopHooks: [hook],
    });
    const res = await h.session.submit('go');
    const records = await spec.expectRun(h, res, ['query_built', 'tool_use_requested', 'max_turns_reached']);
    expect(res).toMatchObject({ status: 'failed', turns: 1 });
    expect(MAX_TURNS_MARKER).toBe('[max_turns_reached]');
    // The tools of the last round ran and their results are kept, then the marker.
    expect(textOfMessages(h)).toEqual(['go', '[tool_use]', '[tool_result]', '[max_turns_reached]']);
    expect(h.session.state.messages.at(2)!.content).toEqual([
      { type: 'tool_result', tool_use_id: 't1', content: 'echo: t1' },
    ]);
    expect(recordsOf(records, 'message.appended').map((r) => r.data.origin)).toEqual([
      'assistant',
      'tool_results',
      'max_turns_marker',
    ]);
    expect(hook.inputs).toEqual([]);
    expect(h.client.consumed).toBe(1);
  });

  it('maxTurns 3: three tool rounds, then max_turns_reached', async () => {
    const h = await scriptedSession([round('t1'), round('t2'), round('t3'), text('never sent')], {
      settings: { maxTurns: 3 },
    });
    const res = await h.session.submit('go');
    await spec.expectRun(h, res, [
      'query_built',
      'tool_use_requested',
      'tool_result_continuation',
      'query_built',
      'tool_use_requested',
      'tool_result_continuation',
      'query_built',
      'tool_use_requested',
      'max_turns_reached',
    ]);
    expect(res.turns).toBe(3);
    expect(textOfMessages(h).at(-1)).toBe(MAX_TURNS_MARKER);
  });

  it('finishing on the last allowed turn is not a max_turns failure', async () => {
    const h = await scriptedSession([round('t1'), text('done')], { settings: { maxTurns: 2 } });
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
  });

  it('the turn count is per run: the next run starts from turn 1 again', async () => {
    const h = await scriptedSession([round('t1'), round('t2'), text('done')], { settings: { maxTurns: 1 } });
    const first = await h.session.submit('go');
    await spec.expectRun(h, first, ['query_built', 'tool_use_requested', 'max_turns_reached']);
    const second = await h.session.submit('go on');
    await spec.expectRun(h, second, ['query_built', 'tool_use_requested', 'max_turns_reached']);
  });

  spec.ownedReasonsAsserted();
});
