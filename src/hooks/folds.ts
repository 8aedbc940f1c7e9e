import type { HookEvent } from './events.ts';

/*
 * What the hooks of one moment decided, folded from their records alone: the live run and
 * replay call these same functions, so the answer verify re-derives from the log is the one the
 * live run acted on (the records are the facts; nothing here runs a hook).
 */

/** The fields of a `hook.decided` record the folds read. */
export interface Recorded {
  hook: string;
  decision: string;
  reason?: string;
  output?: string;
}

const of = (records: readonly Recorded[], events: readonly string[]) =>
  records.filter((r) => events.includes(r.hook));

/** Why the run must stop (`continue: false`), the reasons of every hook that said so; or undefined. */
export function stopReasonOf(records: readonly Recorded[]): string | undefined {
  const reasons = records
    .filter((r) => r.decision === 'prevent')
    .map((r) => r.reason ?? 'a hook stopped the run');
  return reasons.length ? reasons.join('\n') : undefined;
}

/** The context the hooks add for the model, one paragraph per hook that gave some. */
export function contextOf(records: readonly Recorded[]): string | undefined {
  const parts = records.filter((r) => r.output).map((r) => `${r.hook} hook additional context: ${r.output}`);
  return parts.length ? parts.join('\n\n') : undefined;
}

/** What SessionStart and UserPromptSubmit decided before the first request of a run. */
export interface PromptHooksOutcome {
  /** A hook said `continue: false`: the run stops (hook_stopped). */
  stopped?: string;
  /** UserPromptSubmit blocked the prompt (prompt_blocked); the reason is for the user. */
  blocked?: string;
  /** Context appended to the history before the request (hook_context). */
  context?: string;
}

export const PROMPT_EVENTS: readonly HookEvent[] = ['SessionStart', 'UserPromptSubmit'];

export function promptHooksOutcome(records: readonly Recorded[]): PromptHooksOutcome {
  const mine = of(records, PROMPT_EVENTS);
  const stopped = stopReasonOf(mine);
  if (stopped !== undefined) return { stopped };
  const blocks = mine.filter((r) => r.hook === 'UserPromptSubmit' && r.decision === 'block');
  if (blocks.length) return { blocked: blocks.map((r) => r.reason ?? 'blocked').join('\n') };
  const context = contextOf(mine);
  return context !== undefined ? { context } : {};
}

/** What PreCompact decided, and the SessionStart (source compact) context after a compaction. */
export interface CompactHooksOutcome {
  stopped?: string;
  /** PreCompact blocked the compaction: auto goes on uncompacted, reactive lets the overflow stand. */
  blocked?: string;
  context?: string;
}

export function preCompactOutcome(records: readonly Recorded[]): CompactHooksOutcome {
  const mine = of(records, ['PreCompact']);
  const stopped = stopReasonOf(mine);
  if (stopped !== undefined) return { stopped };
  const blocks = mine.filter((r) => r.decision === 'block');
  return blocks.length ? { blocked: blocks.map((r) => r.reason ?? 'blocked').join('\n') } : {};
}

export function afterCompactOutcome(records: readonly Recorded[]): CompactHooksOutcome {
  const mine = of(records, ['SessionStart']);
  const stopped = stopReasonOf(mine);
  if (stopped !== undefined) return { stopped };
  const context = contextOf(mine);
  return context !== undefined ? { context } : {};
}

/**
 * What the hooks of one tool call add to its tool_result: feedback (a PostToolUse block, exit 2
 * after the tool ran) and context, in the order the hooks were logged.
 */
export function toolCallNotes(records: readonly Recorded[]): string | undefined {
  const parts: string[] = [];
  for (const r of records) {
    const feedback =
      (r.hook === 'PostToolUse' || r.hook === 'PostToolUseFailure') && r.decision === 'block' && r.reason;
    if (feedback) parts.push(`${r.hook} hook feedback: ${r.reason}`);
    if (r.output) parts.push(`${r.hook} hook additional context: ${r.output}`);
  }
  return parts.length ? parts.join('\n\n') : undefined;
}

/** How several PreToolUse answers combine: a stop, then deny > ask > allow > no decision. */
export function strongestPreToolUse<T extends { decision: string }>(answers: readonly T[]): T | undefined {
  for (const d of ['prevent', 'deny', 'ask', 'allow', 'continue']) {
    const found = answers.find((a) => a.decision === d);
    if (found) return found;
  }
  return undefined;
}
