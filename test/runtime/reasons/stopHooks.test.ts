import { describe, expect, it } from 'vitest';
import type { StopHook, StopHookInput } from '../../../src/hooks/types.ts';
import { STOP_HOOK_FEEDBACK_PREFIX } from '../../../src/machines/loopMessages.ts';
import { fixedStopHook, scriptedSession } from '../../support/harness.ts';
import { reasonSpec, recordsOf, text, textOfMessages, tools, toolUse } from './reasonSpec.ts';

const spec = reasonSpec('stopHooks');

const blocked = ['finish_requested', 'stop_hook_continuation', 'query_built'] as const;

describe('stop hooks', () => {
  it('a block appends "Stop hook feedback:" and the loop continues; the re-run is told stop_hook_active', async () => {
    const hook = fixedStopHook([{ decision: 'block', reason: 'tests are failing' }, { decision: 'allow' }]);
    const h = await scriptedSession([text('done, I think'), text('fixed the tests')], { stopHooks: [hook] });
    const res = await h.session.submit('fix it');
    const records = await spec.expectRun(h, res, [
      'query_built',
      ...blocked,
      'finish_requested',
      'completed',
    ]);
    expect(textOfMessages(h)).toEqual([
      'fix it',
      'done, I think',
      `${STOP_HOOK_FEEDBACK_PREFIX}tests are failing`,
      'fixed the tests',
    ]);
    expect(STOP_HOOK_FEEDBACK_PREFIX).toBe('Stop hook feedback:\n');
    const inputs = hook.inputs as StopHookInput[];
    expect(inputs.map((i) => i.stop_hook_active)).toEqual([false, true]);
    expect(inputs.map((i) => i.last_assistant_message)).toEqual(['done, I think', 'fixed the tests']);
    expect(inputs[0]).toMatchObject({ hook_event_name: 'Stop', session_id: h.session.id });
    const decided = recordsOf(records, 'hook.decided');
    expect(decided.map((r) => [r.data.hook, r.data.decision, r.data.reason])).toEqual([
      ['Stop', 'block', 'tests are failing'],
      ['Stop', 'allow', undefined],
    ]);
    expect(recordsOf(records, 'message.appended').map((r) => r.data.origin)).toContain('stop_hook_feedback');
  });

  it('blocks from several hooks are joined into one feedback message', async () => {
    const a = fixedStopHook([{ decision: 'block', reason: 'lint' }, { decision: 'allow' }]);
    const b = fixedStopHook([{ decision: 'block', reason: 'types' }, { decision: 'allow' }]);
    const h = await scriptedSession([text('1'), text('2')], { stopHooks: [a, b] });
    const res = await h.session.submit('go');
    await spec.expectRun(h, res, ['query_built', ...blocked, 'finish_requested', 'completed']);
    expect(textOfMessages(h)[2]).toBe(`${STOP_HOOK_FEEDBACK_PREFIX}lint\n\ntypes`);
  });

  it('consecutive blocks are capped: stop_hook_block_limit', async () => {
    const hook = fixedStopHook([{ decision: 'block', reason: 'not yet' }]);
    const h = await scriptedSession([text('1'), text('2'), text('3'), text('never sent')], {
      stopHooks: [hook],
      settings: { stopHookBlockCap: 2 },
    });
    const res = await h.session.submit('go');
    await spec.expectRun(h, res, [
      'query_built',
      ...blocked,
      ...blocked,
      'finish_requested',
      'stop_hook_block_limit',
    ]);
    expect(res.status).toBe('failed');
    expect(hook.inputs).toHaveLength(3);
    expect(h.client.consumed).toBe(3);
  });

  it('the default cap is 8 blocks in a row', async () => {
    const hook = fixedStopHook([{ decision: 'block', reason: 'again' }]);
    const h = await scriptedSession(
      Array.from({ length: 10 }, (_, i) => text(`try ${i}`)),
      { stopHooks: [hook] },
    );
    const res = await h.session.submit('go');
    await spec.expectRun(h, res, [
      'query_built',
      ...Array.from({ length: 8 }, () => blocked).flat(),
      'finish_requested',
      'stop_hook_block_limit',
    ]);
    expect(h.client.consumed).toBe(9);
  });

  it('a tool round in between resets the count of consecutive blocks', async () => {
    const hook = fixedStopHook([
      { decision: 'block', reason: 'b1' },
      { decision: 'block', reason: 'b2' },
      { decision: 'allow' },
    ]);
    const h = await scriptedSession(
      [text('1'), tools([toolUse('t1', 'echo', { text: 'x' })]), text('2'), text('3')],
      { stopHooks: [hook], settings: { stopHookBlockCap: 1 } },
    );
    const res = await h.session.submit('go');
    await spec.expectRun(h, res, [
      'query_built',
      ...blocked,
      'tool_use_requested',
      'tool_result_continuation',
      'query_built',
      ...blocked,
      'finish_requested',
      'completed',
    ]);
  });

  it('prevent: the run ends stop_hook_prevented', async () => {
    const hook = fixedStopHook([{ decision: 'prevent', reason: 'policy says stop here' }]);
    const later = fixedStopHook([{ decision: 'allow' }]);
    const h = await scriptedSession([text('done'), text('never sent')], { stopHooks: [hook, later] });
    const res = await h.session.submit('go');
    const records = await spec.expectRun(h, res, ['query_built', 'finish_requested', 'stop_hook_prevented']);
    expect(res.status).toBe('failed');
    // Hooks after the one that prevented are not run.
    expect(later.inputs).toEqual([]);
    expect(recordsOf(records, 'hook.decided').map((r) => [r.data.decision, r.data.reason])).toEqual([
      ['prevent', 'policy says stop here'],
    ]);
  });

  it('a hook that throws counts as allow (completed) and is logged as an error', async () => {
    const broken: StopHook = {
      name: 'broken-hook',
      async run() {
        throw new Error('hook crashed');
      },
    };
    const h = await scriptedSession([text('done')], { stopHooks: [broken] });
    const res = await h.session.submit('go');
    const records = await spec.expectRun(h, res, ['query_built', 'finish_requested', 'completed']);
    expect(recordsOf(records, 'hook.decided').map((r) => r.data)).toEqual([
      expect.objectContaining({
        hook: 'Stop',
        decision: 'error',
        reason: 'hook crashed',
        command: 'broken-hook',
      }),
    ]);
  });

  it('a hook answering error is not a block either', async () => {
    const hook = fixedStopHook([{ decision: 'error', reason: 'bad JSON on stdout' }]);
    const h = await scriptedSession([text('done')], { stopHooks: [hook] });
    const res = await h.session.submit('go');
    await spec.expectRun(h, res, ['query_built', 'finish_requested', 'completed']);
  });

  spec.ownedReasonsAsserted();
});
