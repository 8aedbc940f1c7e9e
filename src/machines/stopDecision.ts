import type { StopDecision } from './context.ts';

/** One answer logged by the stop checks (`hook.decided` with hook Stop or Budget). */
export interface StopAnswer {
  hook: 'Stop' | 'Budget';
  decision: string;
  reason?: string;
}

/**
 * Folds the stop checks' answers into one decision, the same way live and in replay:
 * a budget continuation wins (the budget policy runs first and ends the checks), then any
 * `prevent`, then every `block` (reasons joined), else allow. Hook errors count as allow.
 */
export function decideStop(answers: readonly StopAnswer[]): StopDecision {
  const blocks: string[] = [];
  for (const a of answers) {
    if (a.hook === 'Budget' && a.decision === 'continue')
      return { decision: 'budget_continue', message: a.reason ?? '' };
    if (a.hook !== 'Stop') continue;
    if (a.decision === 'prevent') return { decision: 'prevent', reason: a.reason ?? '' };
    if (a.decision === 'block') blocks.push(a.reason ?? '');
  }
  return blocks.length > 0 ? { decision: 'block', reason: blocks.join('\n\n') } : { decision: 'allow' };
}
