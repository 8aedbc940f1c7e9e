import { describe, expect, it } from 'vitest';
import { fromPromise, setup } from 'xstate';
import { queryLoopMachine } from '../../src/machines/queryLoop.machine.ts';
import { REASON_DOCS } from '../../src/machines/reasons.ts';
import { catalogProblems, chartOf, edgeCatalog, transitionKey } from '../../src/viz/edgeCatalog.ts';

describe('the edge catalog of the query-loop chart', () => {
  const chart = chartOf(queryLoopMachine);
  const edges = edgeCatalog();

  it('is read from the machine: the invoke onDone / onError edges with guards and reasons', () => {
    expect(edges).toContainEqual({
      id: 'requesting --[xstate.done.actor.callModel / responseRefused]--> failed',
      from: 'requesting',
      to: 'failed',
      event: 'xstate.done.actor.callModel',
      guard: 'responseRefused',
      reason: 'refused',
      key: 'requesting --[xstate.done.actor.callModel]--> failed : refused',
    });
    expect(
      edges.find((e) => e.id === 'awaitingStopHook --[xstate.done.actor.stopChecks]--> completed'),
    ).toMatchObject({ guard: null, reason: 'completed' });
    expect(chart.initial).toBe('building');
    expect(chart.states.filter((s) => s.final).map((s) => s.id)).toEqual([
      'completed',
      'failed',
      'aborted',
      'awaitingApproval',
    ]);
  });

  it('has no problems: every edge has a documented reason, every state has edges, ids are unique', () => {
    expect(catalogProblems(chart)).toEqual([]);
    for (const e of edges) {
      expect(e.reason, e.id).not.toBeNull();
      expect(Object.keys(REASON_DOCS), e.id).toContain(e.reason);
    }
    for (const s of chart.states) {
      const touching = edges.filter((e) => e.from === s.id || e.to === s.id);
      expect(touching.length, `state ${s.id}`).toBeGreaterThan(0);
    }
  });

  it('uses every reason of the vocabulary on some edge', () => {
    const used = new Set(edges.map((e) => e.reason));
    const missing = Object.keys(REASON_DOCS).filter((r) => !used.has(r));
    expect(missing, `reasons with no edge: ${missing.join(', ')}`).toEqual([]);
  });

  it('gives each logged transition (from, trigger, to, reason) exactly one edge, so counts are exact', () => {
    const keys = edges.map((e) => e.key);
    expect(new Set(keys).size).toBe(keys.length);
    expect(
      transitionKey({
        from: 'requesting',
        trigger: 'xstate.error.actor.callModel',
        to: 'compacting',
        reason: 'compact_retry',
      }),
    ).toBe(edges.find((e) => e.guard === 'promptTooLongCanCompact')?.key);
  });
});

describe('the catalog check', () => {
  const noop = fromPromise(async () => 1);
  const broken = setup({ actors: { work: noop }, guards: { ok: () => true } }).createMachine({
    id: 'broken',
    initial: 'a',
    states: {
      a: {
        invoke: {
          id: 'work',
          src: 'work',
          onDone: [
            { guard: 'ok', target: 'b', meta: { reason: 'query_built' } },
            { target: 'done', meta: { reason: 'made_up_reason' } },
          ],
          onError: { target: 'done' },
        },
        after: { 1000: { target: 'b', meta: { reason: 'backoff_elapsed' } } },
      },
      b: {},
      orphan: { on: { GO: { target: 'done', meta: { reason: 'completed' } } } },
      done: { type: 'final' },
    },
  });

  it('names the edge without a reason, the unknown reason, the dead-end state and the unreachable one', () => {
    const problems = catalogProblems(chartOf(broken));
    expect(problems).toEqual([
      'edge a --[xstate.done.actor.work]--> done has reason "made_up_reason", which is not in REASON_DOCS',
      'edge a --[xstate.error.actor.work]--> done has no meta.reason',
      'state b has no outgoing edge',
      'state orphan has no incoming edge',
    ]);
  });

  it('sees `after` edges too', () => {
    expect(edgeCatalog(broken).map((e) => e.event)).toContain('xstate.after.1000.broken.a');
  });
});
