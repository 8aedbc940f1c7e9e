import { describe, expect, it } from 'vitest';
import type { StopHook } from '../../../src/hooks/types.ts';
import { SleepAborted, VirtualClock } from '../../../src/runtime/determinism.ts';
import type { Session } from '../../../src/runtime/session.ts';
import type { LogRecord } from '../../../src/store/records.ts';
import { fixedStopHook, scriptedSession } from '../../support/harness.ts';
import {
  deferred,
  httpError,
  reasonSpec,
  recordsOf,
  testTool,
  text,
  textOfMessages,
  tools,
  toolUse,
  untilAborted,
  usage,
} from './reasonSpec.ts';

const spec = reasonSpec('abort');

/** The abort is logged, in the run, before the transition that ends it. */
function expectAbortLogged(records: LogRecord[], runId: string, reason: string) {
  const i = records.findIndex((r) => r.type === 'abort.requested');
  expect(i).toBeGreaterThan(0);
  expect(records[i]).toMatchObject({ run: runId, data: { reason } });
  const transitions = records.flatMap((r, index) => (r.type === 'transition' ? [index] : []));
  expect(i).toBeLessThan(transitions.at(-1)!);
}

describe('abort', () => {
  it('while streaming: aborted, and the history stays as it was', async () => {
    const h = await scriptedSession([{ abort: true }, text('after the abort')]);
    const res = await h.session.submit('go');
    const records = await spec.expectRun(h, res, ['query_built', 'aborted']);
    expect(res.status).toBe('aborted');
    expectAbortLogged(records, res.runId, 'aborted by the user');
    expect(textOfMessages(h)).toEqual(['go']);
    expect(h.session.running).toBe(false);

    // The session can go on afterwards.
    const next = await h.session.submit('again');
    await spec.expectRun(h, next, ['query_built', 'finish_requested', 'completed']);
  });

  it('while streaming the turn after a tool round', async () => {
    const h = await scriptedSession([tools([toolUse('t1', 'echo', { text: 'x' })]), { abort: true }]);
    const res = await h.session.submit('go');
    await spec.expectRun(h, res, [
      'query_built',
      'tool_use_requested',
      'tool_result_continuation',
      'query_built',
      'aborted',
    ]);
  });

  it('while tools run: every tool_use is paired, a finished tool keeps its real result', async () => {
    let session: Session | undefined;
    const fastFinished = deferred();
    let slowSawAbort = false;
    const fast = testTool('fast', async () => ({ content: 'fast result' }));
    const aborter = testTool('aborter', async () => {
      await fastFinished.promise;
      session!.abort('user pressed Esc');
      return { content: 'aborter result' };
    });
    const slow = testTool('slow', async (_input, ctx) => {
      await untilAborted(ctx.signal);
      slowSawAbort = true;
      return { content: 'slow result' };
    });
    const h = await scriptedSession(
      [
        tools([toolUse('f', 'fast', {}), toolUse('a', 'aborter', {}), toolUse('s', 'slow', {})]),
        text('resumed'),
      ],
      {
        tools: [fast, aborter, slow],
        onRecord: (r) => {
          if (r.type === 'tool.finished' && r.data.toolUseId === 'f') fastFinished.resolve();
        },
      },
    );
    session = h.session;
    const res = await h.session.submit('go');
    const records = await spec.expectRun(h, res, ['query_built', 'tool_use_requested', 'aborted']);
    expectAbortLogged(records, res.runId, 'user pressed Esc');
    expect(slowSawAbort).toBe(true);
    const finished = recordsOf(records, 'tool.finished').map((r) => [r.data.toolUseId, r.data.outcome]);
    expect(finished).toEqual([
      ['f', 'ok'],
      ['a', 'interrupted'],
      ['s', 'interrupted'],
    ]);
    const results = h.session.state.messages.last()!.content;
    expect(results).toEqual([
      { type: 'tool_result', tool_use_id: 'f', content: 'fast result' },
      expect.objectContaining({ type: 'tool_result', tool_use_id: 'a', is_error: true }),
      expect.objectContaining({ type: 'tool_result', tool_use_id: 's', is_error: true }),
    ]);
    expect(recordsOf(records, 'message.appended').at(-1)!.data.origin).toBe('interrupted');
    expect(h.client.consumed).toBe(1);

    // Resuming: the next request carries a valid history.
    const next = await h.session.submit('go on');
    await spec.expectRun(h, next, ['query_built', 'finish_requested', 'completed']);
    expect(textOfMessages(h).slice(-2)).toEqual(['go on', 'resumed']);
  });

  it('while serial tools run: the finished one keeps its result, the ones not started get one too', async () => {
    let session: Session | undefined;
    const ran: string[] = [];
    const unsafe = { safe: false, readOnly: false };
    const first = testTool(
      'first',
      async () => {
        ran.push('first');
        return { content: 'first result' };
      },
      unsafe,
    );
    const aborter = testTool(
      'aborter',
      async () => {
        ran.push('aborter');
        session!.abort();
        return { content: 'aborter result' };
      },
      unsafe,
    );
    const never = testTool(
      'never',
      async () => {
        ran.push('never');
        return { content: 'should not run' };
      },
      unsafe,
    );
    const h = await scriptedSession(
      [tools([toolUse('1', 'first', {}), toolUse('2', 'aborter', {}), toolUse('3', 'never', {})])],
      { tools: [first, aborter, never] },
    );
    session = h.session;
    const res = await h.session.submit('go');
    const records = await spec.expectRun(h, res, ['query_built', 'tool_use_requested', 'aborted']);
    expect(ran).toEqual(['first', 'aborter']);
    const results = h.session.state.messages.last()!.content;
    expect(results).toEqual([
      { type: 'tool_result', tool_use_id: '1', content: 'first result' },
      expect.objectContaining({ tool_use_id: '2', is_error: true }),
      expect.objectContaining({ tool_use_id: '3', is_error: true }),
    ]);
    const finished = recordsOf(records, 'tool.finished');
    expect(finished.map((r) => [r.data.toolUseId, r.data.outcome, r.data.synthetic ?? false])).toEqual([
      ['1', 'ok', false],
      ['2', 'interrupted', true],
      ['3', 'interrupted', true],
    ]);
  });

  it('a tool that ignores its signal cannot hold the run after an abort', async () => {
    let session: Session | undefined;
    const stuck = testTool('stuck', () => new Promise(() => {}));
    const aborter = testTool('aborter', async () => {
      session!.abort();
      return { content: 'x' };
    });
    const h = await scriptedSession([tools([toolUse('s', 'stuck', {}), toolUse('a', 'aborter', {})])], {
      tools: [stuck, aborter],
    });
    session = h.session;
    const res = await h.session.submit('go');
    await spec.expectRun(h, res, ['query_built', 'tool_use_requested', 'aborted']);
  });

  it('between two states: the next actor sees the abort (building → aborted)', async () => {
    let session: Session | undefined;
    const h = await scriptedSession([tools([toolUse('t1', 'echo', { text: 'x' })]), text('never sent')], {
      onRecord: (r) => {
        if (r.type === 'transition' && r.data.reason === 'tool_result_continuation') session!.abort();
      },
    });
    session = h.session;
    const res = await h.session.submit('go');
    const records = await spec.expectRun(h, res, [
      'query_built',
      'tool_use_requested',
      'tool_result_continuation',
      'aborted',
    ]);
    expect(recordsOf(records, 'transition').at(-1)!.data).toMatchObject({ from: 'building', to: 'aborted' });
    expect(h.client.consumed).toBe(1);
  });

  it('during backoff: aborted without waiting for the delay', async () => {
    let session: Session | undefined;
    class AbortingClock extends VirtualClock {
      override async sleep(ms: number, signal: AbortSignal): Promise<void> {
        this.sleeps.push(ms);
        session!.abort('gave up waiting');
        await untilAborted(signal);
        throw new SleepAborted();
      }
    }
    const clock = new AbortingClock();
    const h = await scriptedSession([httpError(503), text('never sent')], { clock });
    session = h.session;
    const res = await h.session.submit('go');
    const records = await spec.expectRun(h, res, ['query_built', 'transport_retry', 'aborted']);
    expect(clock.sleeps).toHaveLength(1);
    expect(recordsOf(records, 'backoff.scheduled')).toHaveLength(1);
    expect(h.client.consumed).toBe(1);
    expectAbortLogged(records, res.runId, 'gave up waiting');
    const last = recordsOf(records, 'transition').at(-1)!;
    expect(last.data).toMatchObject({ from: 'recovering', to: 'aborted' });
  });

  it('during stop hooks: aborted, the run does not complete', async () => {
    let session: Session | undefined;
    const hook: StopHook = {
      name: 'aborting-hook',
      async run() {
        session!.abort('stop now');
        return { decision: 'allow' };
      },
    };
    const later = fixedStopHook([{ decision: 'allow' }]);
    const h = await scriptedSession([text('done')], { stopHooks: [hook, later] });
    session = h.session;
    const res = await h.session.submit('go');
    const records = await spec.expectRun(h, res, ['query_built', 'finish_requested', 'aborted']);
    expectAbortLogged(records, res.runId, 'stop now');
    expect(later.inputs).toEqual([]);
    expect(recordsOf(records, 'transition').at(-1)!.data).toMatchObject({ from: 'awaitingStopHook' });
  });

  it('during compaction: aborted, the history is not replaced', async () => {
    const h = await scriptedSession(
      [
        tools([toolUse('t1', 'echo', { text: 'x' })], 'tool_use', usage(990, 20)),
        { abort: true, for: 'compaction' },
      ],
      { settings: { autoCompactThreshold: 1_000 } },
    );
    const res = await h.session.submit('go');
    const records = await spec.expectRun(h, res, [
      'query_built',
      'tool_use_requested',
      'auto_compact',
      'aborted',
    ]);
    expect(recordsOf(records, 'compaction.finished')).toEqual([]);
    expect(h.session.state.messages.length).toBe(3);
    // An aborted compaction is not a compaction failure: the breaker does not count it.
    expect(h.session.state.autoCompactFailures).toBe(0);
  });

  it("through the caller's AbortSignal", async () => {
    const outer = new AbortController();
    const hook: StopHook = {
      name: 'caller-aborts',
      async run() {
        outer.abort();
        return { decision: 'allow' };
      },
    };
    const h = await scriptedSession([text('done')], { stopHooks: [hook] });
    const res = await h.session.submit('go', { signal: outer.signal });
    const records = await spec.expectRun(h, res, ['query_built', 'finish_requested', 'aborted']);
    expectAbortLogged(records, res.runId, 'aborted by the caller');
  });

  it('abort with no run in progress does nothing', async () => {
    const h = await scriptedSession([text('done')]);
    const before = h.session.state.lastSeq;
    h.session.abort();
    expect(h.session.state.lastSeq).toBe(before);
    const res = await h.session.submit('go');
    await spec.expectRun(h, res, ['query_built', 'finish_requested', 'completed']);
  });

  spec.ownedReasonsAsserted();
});
