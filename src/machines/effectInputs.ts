import { toolUsesOf } from '../model/messages.ts';
import type { RunContext } from './context.ts';
import type { EffectCommand, EffectName, EffectSignatures } from './effects.ts';

/**
 * What each effect is asked to do, read from the context when its state is entered. Pure:
 * the same context gives the same command, live and in replay.
 */
export const EFFECT_INPUTS: { [K in EffectName]: (c: RunContext) => EffectSignatures[K]['input'] } = {
  buildQuery: (c) => ({
    messages: c.messages.view(),
    model: c.transport.model,
    maxTokens: c.output.maxTokens,
    system: c.config.system,
    turn: c.turn,
    ...(c.config.compactNow ? { compact: true as const } : {}),
  }),
  callModel: (c) => ({ request: c.request!, attempt: c.transport.attempt }),
  backoff: (c) => ({ attempt: c.transport.attempt, retryAfterMs: c.transport.lastFailure?.retryAfterMs }),
  runTools: (c) => ({ toolUses: toolUsesOf(c.messages.last()?.content ?? []), turn: c.turn }),
  compact: (c) => ({
    messages: c.messages.view(),
    mode: c.compaction.mode,
    model: c.transport.model,
    contextTokens: c.contextTokens,
  }),
  stopChecks: (c) => ({
    lastAssistant: c.messages.last()!,
    stopHookActive: c.stop.hookActive,
    turn: c.turn,
    usage: c.usage,
    budgetContinuations: c.stop.budgetContinuations,
  }),
};

export function effectCommand(effect: EffectName, context: RunContext): EffectCommand {
  return { type: effect, input: EFFECT_INPUTS[effect](context) } as EffectCommand;
}
