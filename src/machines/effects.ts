import { fromCallback } from 'xstate';
import type { ModelResponse } from '../model/types.ts';
import type {
  BackoffInput,
  BuildQueryInput,
  BuiltQuery,
  CallModelInput,
  CompactInput,
  CompactOutput,
  RunToolsInput,
  StopChecksInput,
  StopDecision,
  ToolBatchResult,
} from './context.ts';

/** The id of the run's effects actor, invoked once at the root of the chart. */
export const EFFECTS_ACTOR_ID = 'effects';

/** Every effect the chart performs: its input and its output. */
export interface EffectSignatures {
  buildQuery: { input: BuildQueryInput; output: BuiltQuery };
  callModel: { input: CallModelInput; output: ModelResponse };
  runTools: { input: RunToolsInput; output: ToolBatchResult };
  compact: { input: CompactInput; output: CompactOutput };
  backoff: { input: BackoffInput; output: { delayMs: number } };
  stopChecks: { input: StopChecksInput; output: StopDecision };
}

export type EffectName = keyof EffectSignatures;
export const EFFECT_NAMES = [
  'buildQuery',
  'callModel',
  'runTools',
  'compact',
  'backoff',
  'stopChecks',
] as const satisfies readonly EffectName[];

/**
 * What the runtime (live) or replay (recorded) supplies: one async function per effect. A
 * rejection is the effect's failure (an `ActorFailure` or a `ModelFailure`), routed by the
 * chart's error edges.
 */
export type EffectHandlers = {
  [K in EffectName]: (input: EffectSignatures[K]['input']) => Promise<EffectSignatures[K]['output']>;
};

/** A command from the chart to the effects actor: perform this effect with this input. */
export type EffectCommand = {
  [K in EffectName]: { type: K; input: EffectSignatures[K]['input'] };
}[EffectName];

/**
 * The answer to a command, under the names xstate gives an invoked actor's outcome
 * (`xstate.done.actor.<effect>` / `xstate.error.actor.<effect>`): the chart routes on them
 * exactly as it would on `onDone` / `onError`, and every logged trigger keeps its name.
 */
export type EffectReply = {
  [K in EffectName]:
    | { type: `xstate.done.actor.${K}`; output: EffectSignatures[K]['output'] }
    | { type: `xstate.error.actor.${K}`; error: unknown };
}[EffectName];

/**
 * The run's one long-lived effects actor. The chart sends it a command on entering a state
 * (`perform`), and it answers with the effect's outcome. One actor per run, not one invoked
 * actor per effect: creating, starting and stopping an xstate actor costs ~45 µs here, three
 * times a tool round, while a command and its reply cost ~10 µs (docs/BENCHMARKS.md §1).
 *
 * Only the latest command's answer is delivered, as with an invoked actor whose state was
 * left: the chart never has two effects in flight, and a late answer must never reach a state
 * that did not ask for it.
 */
export function effectsActor(handlers: EffectHandlers) {
  return fromCallback<EffectCommand>(({ sendBack, receive }) => {
    let latest = 0;
    receive((command) => {
      const token = ++latest;
      const run = handlers[command.type] as (input: unknown) => Promise<unknown>;
      let pending: Promise<unknown>;
      try {
        pending = run(command.input);
      } catch (e) {
        pending = Promise.reject(e);
      }
      pending.then(
        (output) => {
          if (token === latest)
            sendBack({ type: `xstate.done.actor.${command.type}`, output } as EffectReply);
        },
        (error: unknown) => {
          if (token === latest)
            sendBack({ type: `xstate.error.actor.${command.type}`, error } as EffectReply);
        },
      );
    });
  });
}

/** Placeholders: a chart run without handlers fails loudly, naming the effect it needed. */
export function missingEffects(): EffectHandlers {
  const missing = (name: EffectName) => async () => {
    throw new Error(`effect "${name}" was not provided to the query-loop machine`);
  };
  return Object.fromEntries(EFFECT_NAMES.map((n) => [n, missing(n)])) as unknown as EffectHandlers;
}
