import type { Usage } from '../model/messages.ts';

export interface BudgetState {
  usage: Usage;
  turn: number;
  continuations: number;
}

/** Asked when the model wants to finish: a message to keep it working, or null to let it stop. */
export type BudgetPolicy = (state: BudgetState) => { message: string } | null;

/**
 * Claude Code's token-target behaviour: when the user gave an output-token target and the
 * model stops well short of it, nudge it to keep going — a bounded number of times.
 */
export function tokenTargetPolicy(targetOutputTokens: number, maxContinuations = 3): BudgetPolicy {
  return ({ usage, continuations }) => {
    if (continuations >= maxContinuations) return null;
    if (usage.outputTokens >= targetOutputTokens * 0.9) return null;
    return {
      message:
        `Token budget: ${usage.outputTokens} of ${targetOutputTokens} output tokens used. ` +
        'Keep working on the task; do not stop until it is done or the budget is used.',
    };
  };
}
