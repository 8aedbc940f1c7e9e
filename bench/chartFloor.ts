import { assign, createActor, emit, fromCallback, sendTo, setup } from 'xstate';
import { AppendOnlyList } from '../src/lib/appendOnlyList.ts';
import type { EffectHandlers } from '../src/machines/effects.ts';
import { queryLoopMachine, withEffects } from '../src/machines/queryLoop.machine.ts';
import type { ModelResponse } from '../src/model/types.ts';
import { resolveRunConfig } from '../src/runtime/config.ts';
import { driveMachine } from '../src/runtime/driveMachine.ts';

/**
 * Where a tool round's time goes below the runtime: (1) the query-loop chart alone, its effects
 * answering at once and nothing logged; (2) the smallest xstate machine with the same shape of
 * work per round — three states, three command / reply round trips through one callback actor,
 * an assign and an emit per edge. (2) is xstate's own floor for a three-transition round on
 * this machine; no chart doing the same with xstate can be cheaper.
 */

const usage = {
  inputTokens: 10,
  outputTokens: 5,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 0,
  costUsd: 0,
};

function instantEffects(rounds: number): EffectHandlers {
  let n = 0;
  const response = (): ModelResponse =>
    n++ < rounds
      ? {
          id: 'r',
          model: 'm',
          content: [{ type: 'tool_use', id: `t${n}`, name: 'noop', input: { n } }],
          stopReason: 'tool_use',
          usage,
        }
      : { id: 'r', model: 'm', content: [{ type: 'text', text: 'done' }], stopReason: 'end_turn', usage };
  return {
    buildQuery: async (i) => ({
      model: i.model,
      system: i.system,
      messages: i.messages,
      tools: [],
      maxTokens: i.maxTokens,
    }),
    callModel: async () => response(),
    runTools: async (i) => ({
      results: i.toolUses.map((u) => ({ type: 'tool_result' as const, tool_use_id: u.id, content: 'ok' })),
      aborted: false,
      appendedTokens: 3,
    }),
    compact: async () => {
      throw new Error('not in this benchmark');
    },
    backoff: async () => ({ delayMs: 0 }),
    stopChecks: async () => ({ decision: 'allow' }),
  };
}

/** µs per round of the query-loop chart with instant effects and no log. */
export async function chartAlone(rounds: number): Promise<number> {
  const config = resolveRunConfig({ maxTurns: rounds + 10, contextWindow: 1e12 });
  const t0 = performance.now();
  const out = await driveMachine(
    withEffects(queryLoopMachine, instantEffects(rounds)),
    { config, messages: AppendOnlyList.from([{ role: 'user', content: 'go' }]), autoCompactFailures: 0 },
    { onTransition: () => {}, onMessage: () => {} },
  );
  if (out.final !== 'completed') throw new Error(`chart bench ended ${out.final}/${out.reason}`);
  return ((performance.now() - t0) * 1000) / rounds;
}

type Cmd = { type: 'a' | 'b' | 'c'; input: number };
const reply = (cmd: Cmd, output: number) => ({ type: `xstate.done.actor.${cmd.type}`, output }) as never;

function minimalMachine(rounds: number) {
  return setup({
    types: { context: {} as { n: number; x: number } },
    actors: {
      effects: fromCallback<Cmd>(({ sendBack, receive }) => {
        receive((cmd) => {
          void Promise.resolve(cmd.input).then((out) => sendBack(reply(cmd, out)));
        });
      }),
    },
  }).createMachine({
    context: { n: 0, x: 0 },
    initial: 'a',
    invoke: { id: 'effects', src: 'effects' },
    states: {
      a: {
        entry: sendTo('effects', ({ context }) => ({ type: 'a', input: context.n })),
        on: {
          'xstate.done.actor.a': {
            target: 'b',
            actions: [emit({ type: 'edge' }), assign({ x: ({ context }) => context.x + 1 })],
          },
        },
      },
      b: {
        entry: sendTo('effects', ({ context }) => ({ type: 'b', input: context.n })),
        on: {
          'xstate.done.actor.b': [
            { guard: ({ context }) => context.n >= rounds, target: 'done', actions: emit({ type: 'edge' }) },
            { target: 'c', actions: [emit({ type: 'edge' }), assign({ x: ({ context }) => context.x + 1 })] },
          ],
        },
      },
      c: {
        entry: sendTo('effects', ({ context }) => ({ type: 'c', input: context.n })),
        on: {
          'xstate.done.actor.c': {
            target: 'a',
            actions: [emit({ type: 'edge' }), assign({ n: ({ context }) => context.n + 1 })],
          },
        },
      },
      done: { type: 'final' },
    },
  });
}

/** µs per round of the minimal three-state xstate machine. */
export async function xstateFloor(rounds: number): Promise<number> {
  const machine = minimalMachine(rounds);
  const t0 = performance.now();
  await new Promise<void>((resolve) => {
    const actor = createActor(machine);
    actor.on('edge', () => {});
    actor.subscribe({ complete: () => resolve() });
    actor.start();
  });
  return ((performance.now() - t0) * 1000) / rounds;
}

/** Median of `reps` runs, each after a warm-up run. */
export async function medianOf(reps: number, run: () => Promise<number>): Promise<number> {
  const out: number[] = [];
  for (let i = 0; i < reps; i++) {
    await run();
    out.push(await run());
  }
  out.sort((a, b) => a - b);
  return out[Math.floor((out.length - 1) / 2)]!;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const rounds = Number(process.argv[2] ?? 10_000);
  console.log(
    `xstate floor (minimal 3-state machine): ${(await medianOf(5, () => xstateFloor(rounds))).toFixed(1)} µs/round`,
  );
  console.log(
    `query-loop chart alone (instant effects, no log): ${(await medianOf(5, () => chartAlone(rounds))).toFixed(1)} µs/round`,
  );
}
