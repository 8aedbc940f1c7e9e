import { describe, expect, it } from 'vitest';
import { createActor, sendTo, setup } from 'xstate';
import { REPORT_EDGE_ACTION, reportEdges } from '../../src/machines/edgeReport.ts';
import { type EffectHandlers, effectsActor, missingEffects } from '../../src/machines/effects.ts';
import { queryLoopMachine } from '../../src/machines/queryLoop.machine.ts';
import { edgeCatalog } from '../../src/viz/edgeCatalog.ts';

/** A parent that forwards commands to the effects actor and records every answer it gets. */
function harness(handlers: Partial<EffectHandlers>) {
  const answers: { type: string; output?: unknown; error?: unknown }[] = [];
  const machine = setup({
    types: { events: {} as { type: string; output?: unknown; error?: unknown; command?: unknown } },
    actors: { effects: effectsActor({ ...missingEffects(), ...handlers } as EffectHandlers) },
  }).createMachine({
    invoke: { id: 'effects', src: 'effects' },
    on: {
      command: { actions: sendTo('effects', ({ event }) => event.command as never) },
      '*': { actions: ({ event }) => answers.push(event) },
    },
  });
  const actor = createActor(machine);
  actor.start();
  const send = (command: unknown) => actor.send({ type: 'command', command });
  return { answers, send };
}

const settle = () => new Promise((r) => setTimeout(r, 5));

describe('effectsActor', () => {
  it('answers a command with xstate.done.actor.<effect> and its output', async () => {
    const h = harness({ backoff: async (input) => ({ delayMs: input.attempt * 10 }) });
    h.send({ type: 'backoff', input: { attempt: 3, retryAfterMs: undefined } });
    await settle();
    expect(h.answers).toEqual([{ type: 'xstate.done.actor.backoff', output: { delayMs: 30 } }]);
  });

  it('answers a failure (thrown or rejected) with xstate.error.actor.<effect> and the error', async () => {
    const h = harness({
      backoff: () => {
        throw { kind: 'failed', message: 'sync throw' };
      },
      stopChecks: async () => Promise.reject({ kind: 'aborted', message: 'rejected' }),
    });
    h.send({ type: 'backoff', input: { attempt: 1, retryAfterMs: undefined } });
    await settle();
    h.send({ type: 'stopChecks', input: {} });
    await settle();
    expect(h.answers).toEqual([
      { type: 'xstate.error.actor.backoff', error: { kind: 'failed', message: 'sync throw' } },
      { type: 'xstate.error.actor.stopChecks', error: { kind: 'aborted', message: 'rejected' } },
    ]);
  });

  it('delivers only the latest command: a late answer to an earlier one is dropped', async () => {
    let release: (v: { delayMs: number }) => void = () => {};
    const h = harness({
      backoff: (input) =>
        input.attempt === 1
          ? new Promise((r) => {
              release = r;
            })
          : Promise.resolve({ delayMs: 2 }),
    });
    h.send({ type: 'backoff', input: { attempt: 1, retryAfterMs: undefined } });
    h.send({ type: 'backoff', input: { attempt: 2, retryAfterMs: undefined } });
    await settle();
    release({ delayMs: 1 });
    await settle();
    expect(h.answers).toEqual([{ type: 'xstate.done.actor.backoff', output: { delayMs: 2 } }]);
  });

  it('a chart run without handlers fails loudly, naming the effect', async () => {
    const h = harness({});
    h.send({ type: 'compact', input: {} });
    await settle();
    expect(String((h.answers[0]?.error as Error).message)).toBe(
      'effect "compact" was not provided to the query-loop machine',
    );
  });
});

describe('reportEdges', () => {
  it('puts the edge report first on every edge, with from, trigger, to and reason from the definition', () => {
    const config = reportEdges({
      states: {
        a: {
          on: {
            go: [
              { guard: 'g', target: 'b', actions: ['x', 'y'], meta: { reason: 'first' } },
              { target: 'a', actions: 'z', meta: { reason: 'second' } },
              { meta: { reason: 'stays' } },
            ],
          },
        },
        b: { type: 'final' },
      },
    });
    const edges = config.states.a.on.go as unknown as { actions: unknown[] }[];
    expect(edges.map((e) => e.actions)).toEqual([
      [
        { type: REPORT_EDGE_ACTION, params: { from: 'a', to: 'b', trigger: 'go', reason: 'first' } },
        'x',
        'y',
      ],
      [{ type: REPORT_EDGE_ACTION, params: { from: 'a', to: 'a', trigger: 'go', reason: 'second' } }, 'z'],
      [{ type: REPORT_EDGE_ACTION, params: { from: 'a', to: 'a', trigger: 'go', reason: 'stays' } }],
    ]);
    expect(config.states.b).toEqual({ type: 'final' });
  });

  it('refuses what it could not name: always, after, nested states, root-level edges', () => {
    expect(() => reportEdges({ states: { a: { always: { target: 'b' } } } })).toThrow(/"a" uses `always`/);
    expect(() => reportEdges({ states: { a: { after: { 10: 'b' } } } })).toThrow(/"a" uses `after`/);
    expect(() => reportEdges({ states: { a: { states: { x: {} } } } })).toThrow(/"a" uses `states`/);
    expect(() => reportEdges({ on: { go: 'a' }, states: {} })).toThrow(/root-level/);
  });

  it('every edge of the query-loop chart reports itself', () => {
    const nodes = Object.values(queryLoopMachine.root.states);
    let reported = 0;
    for (const node of nodes) {
      for (const [, transitions] of node.transitions) {
        for (const t of transitions) {
          const first = t.actions[0] as { type?: string; params?: { reason?: string } } | undefined;
          expect(first?.type).toBe(REPORT_EDGE_ACTION);
          expect(first?.params?.reason).toBe((t.meta as { reason: string }).reason);
          reported++;
        }
      }
    }
    expect(reported).toBe(edgeCatalog().length);
  });
});
