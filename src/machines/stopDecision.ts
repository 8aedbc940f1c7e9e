import type { StopDecision } from './context.ts';

/** One answer logged by the stop checks (`hook.decided` with hook Stop or Budget). */
export interface StopAnswer {
  hook: 'Stop' | 'SubagentStop' | 'Budget';
  decision: string;
  reason?: string;
}

/**
 * Folds the stop checks' answers into one decision, the same way live and in replay:
 * a budget continuation wins (the budget policy runs first and ends the checks), then any
 * `prevent`, then every `block` (reasons joined), else allow. Hook errors count as allow.
 * Inside a sub-agent the stop hooks are SubagentStop's: the decision says so.
 */
export function decideStop(answers: readonly StopAnswer[]): StopDecision {
  const blocks: string[] = [];
  let sub = false;
  for (const a of answers) {
    if (a.hook === 'Budget' && a.decision === 'continue')
      return { decision: 'budget_continue', message: a.reason ?? '' };
    if (a.hook === 'Budget') continue;
    const hook = a.hook === 'SubagentStop' ? { hook: 'SubagentStop' as const } : {};
    if (a.decision === 'prevent') return { decision: 'prevent', reason: a.reason ?? '', ...hook };
    if (a.decision === 'block') {
      blocks.push(a.reason ?? '');
      sub ||= a.hook === 'SubagentStop';
    }
  }
  if (blocks.length === 0) return { decision: 'allow' };
  return {
    decision: 'block',
    reason: blocks.join('\n\n'),
    ...(sub ? { hook: 'SubagentStop' as const } : {}),
  };
}
