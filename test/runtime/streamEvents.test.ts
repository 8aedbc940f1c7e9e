import { describe, expect, it } from 'vitest';
import { type SessionEvent, SessionEventSchema } from '../../src/runtime/streamEvents.ts';
import { scriptedSession, textTurn, toolTurn } from '../support/harness.ts';

async function collect(it: AsyncGenerator<SessionEvent, unknown, undefined>) {
  const events: SessionEvent[] = [];
  let result: unknown;
  for (;;) {
    const n = await it.next();
    if (n.done) {
      result = n.value;
      break;
    }
    events.push(n.value);
  }
  return { events, result };
}

const label = (e: SessionEvent) =>
  e.type === 'system' ? `system:${e.subtype}` : e.type === 'result' ? `result:${e.subtype}` : e.type;

describe('session.stream(prompt)', () => {
  it('yields init, the prompt, deltas, the tool call and result, each transition and the result, in log order', async () => {
    const h = await scriptedSession([
      toolTurn([{ name: 'echo', input: { text: 'hi' }, id: 'tu1' }]),
      textTurn('all done'),
    ]);
    const { events, result } = await collect(h.session.stream('say hi'));
    for (const e of events) expect(SessionEventSchema.safeParse(e).success).toBe(true);
    expect(result).toMatchObject({ status: 'completed', turns: 2 });
    const labels = events.map(label);
    expect(labels[0]).toBe('system:init');
    expect(labels[1]).toBe('user');
    expect(labels.at(-1)).toBe('result:success');
    const call = events.find((e) => e.type === 'system' && e.subtype === 'tool_call');
    expect(call).toMatchObject({ name: 'echo', tool_use_id: 'tu1', input: { text: 'hi' } });
    const res = events.find((e) => e.type === 'system' && e.subtype === 'tool_result');
    expect(res).toMatchObject({ outcome: 'ok', is_error: false, content: 'echo: hi' });
    const deltas = events.filter((e) => e.type === 'stream_event');
    expect(deltas.map((e) => e.type === 'stream_event' && e.event)).toContainEqual({
      type: 'content_block_delta',
      delta: { type: 'text_delta', text: 'all done' },
    });
    expect(events.filter((e) => e.type === 'assistant')).toHaveLength(2);
    // Every logged event is a record of the log, in its order; the transitions are the chart's.
    const records = await h.records();
    const logged = events.filter((e) => e.type !== 'stream_event') as { seq: number }[];
    const seqs = logged.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    const reasons = events.flatMap((e) =>
      e.type === 'system' && e.subtype === 'transition' ? [e.reason] : [],
    );
    expect(reasons).toEqual(await h.reasons());
    for (const e of logged) expect(records.find((r) => r.seq === e.seq)).toBeDefined();
    expect(events.at(-1)).toMatchObject({ result: 'all done', num_turns: 2, is_error: false });
  });

  it('a second stream of the same session is the next run, and submit still works', async () => {
    const h = await scriptedSession([textTurn('one'), textTurn('two'), textTurn('three')]);
    const first = await collect(h.session.stream('a'));
    const second = await collect(h.session.stream('b'));
    const runOf = (x: { events: SessionEvent[] }) => new Set(x.events.map((e) => e.run_id));
    expect(runOf(first).size).toBe(1);
    expect(runOf(second).size).toBe(1);
    expect([...runOf(first)][0]).not.toBe([...runOf(second)][0]);
    expect(second.events.at(-1)).toMatchObject({ type: 'result', result: 'two' });
    expect(await h.session.submit('c')).toMatchObject({ status: 'completed' });
  });

  it('leaving the loop early aborts the run and closes its log', async () => {
    const h = await scriptedSession([toolTurn([{ name: 'echo', input: { text: 'x' } }]), textTurn('never')]);
    for await (const e of h.session.stream('go')) {
      if (e.type === 'system' && e.subtype === 'tool_call') break;
    }
    expect(h.session.running).toBe(false);
    const records = await h.records();
    expect(records.some((r) => r.type === 'abort.requested')).toBe(true);
    expect(records.at(-1)).toMatchObject({ type: 'run.ended' });
    expect(h.historyProblems()).toEqual([]);
  });

  it('a run that cannot start throws from the iterator', async () => {
    const h = await scriptedSession([textTurn('x')]);
    await expect(collect(h.session.stream(null))).rejects.toMatchObject({ code: 'NOTHING_TO_RUN' });
  });
});
