import { z } from 'zod';

/**
 * The transition vocabulary. Every edge of the query-loop chart carries exactly one of these
 * as `meta.reason`; logs, CLI output, coverage reports and tests use the same names.
 * Add new ones only with a doc line here (docs/reasons.md is checked against this table);
 * never rename one: old logs must keep replaying.
 */
export const REASON_DOCS = {
  // Continuation reasons: the run goes on.
  tool_result_continuation: 'tools ran, their results were appended, next turn',
  max_tokens_escalation: 'output cut at the default cap: same request again with a higher max_tokens',
  max_tokens_recovery: 'partial output plus a "continue where you stopped" message appended (at most 3)',
  compact_retry: 'the context overflowed (prompt too long / context window exceeded): compact, then retry',
  auto_compact: 'estimated context past the threshold after tool results: compact before the next turn',
  transport_retry: 'retryable API or network error: wait (backoff, retry-after), then retry',
  model_fallback: 'repeated overload (529): switch to the fallback model and retry',
  stop_hook_continuation: 'a stop hook blocked the finish: its feedback was appended, next turn',
  subagent_stop_continuation:
    "a SubagentStop hook blocked a sub-agent's finish: its feedback was appended, the sub-agent goes on",
  budget_continuation: 'the budget policy asked the model to keep working',
  pause_turn_continuation: 'the server paused a long turn: send it back so the server continues',
  // Terminal reasons: the run ends.
  completed: 'the model finished and every stop hook allowed it',
  manual_compacted:
    'a manual compaction (/compact, Session.compact) replaced the history with a summary: the run ends there, no request',
  manual_compaction_blocked: 'a PreCompact hook blocked the manual compaction: the history stays as it was',
  manual_compaction_failed: 'the manual compaction failed (the summary request failed or came back empty)',
  refused: 'the model refused (stop_reason refusal): no retry, no stop hooks',
  max_turns_reached: 'maxTurns tool rounds done: a [max_turns_reached] marker was appended',
  max_tokens_exhausted: 'output still cut after escalation and every max-tokens recovery',
  prompt_too_long: 'the context overflowed again after reactive compaction, or compaction failed',
  model_error: 'a non-retryable model error, or retryable ones past the attempt limit',
  budget_exhausted: 'the token or USD budget of the run is spent',
  stop_hook_prevented: 'a stop hook said the run must not continue (continue: false)',
  stop_hook_block_limit: 'stop hooks blocked the finish more times in a row than the cap allows',
  prompt_blocked:
    'a UserPromptSubmit hook blocked the prompt: no request was sent, and the prompt is erased from the history',
  hook_stopped: 'a hook answered continue: false (outside the stop checks): the run stops there',
  compaction_blocked_overflow:
    'the context overflowed and a PreCompact hook blocked the compaction that would have made room: the overflow stands',
  runtime_error:
    'an effect of the runtime itself failed unexpectedly (a bug, a broken plug-in, or a log that cannot be written)',
  aborted: 'the run was aborted (AbortSignal); every tool_use got a tool_result',
  awaiting_approval:
    'a tool call needs approval and nobody is attached to answer: the run parks (status paused) until it is approved or denied and resumed',
  // Intra-turn reasons: steps inside one turn.
  query_built: 'the request was assembled from the history: send it',
  tool_use_requested: 'the response holds tool_use blocks (content decides, whatever stop_reason says)',
  finish_requested: 'the response holds no tool_use: run the stop checks',
  backoff_elapsed: 'the backoff wait is over: send the same request again',
  compacted: 'compaction replaced the history with a summary: rebuild the query',
  compaction_failed: 'auto-compaction failed: go on uncompacted (three failures in a row open the breaker)',
  tool_batch_resumed:
    'the history ends with tool calls that have no results (a batch parked for approval): run them, no model call',
  hook_context:
    "SessionStart / UserPromptSubmit hooks gave context: it was appended to the history, send the run's first request",
  compaction_blocked: 'a PreCompact hook blocked auto-compaction: go on uncompacted',
  manual_compact:
    'the run was started to compact the history (/compact, Session.compact): compact it, send nothing',
} as const;

export type TransitionReason = keyof typeof REASON_DOCS;
export const TransitionReasonSchema = z.enum(
  Object.keys(REASON_DOCS) as [TransitionReason, ...TransitionReason[]],
);

export const CONTINUATION_REASONS = [
  'tool_result_continuation',
  'max_tokens_escalation',
  'max_tokens_recovery',
  'compact_retry',
  'auto_compact',
  'transport_retry',
  'model_fallback',
  'stop_hook_continuation',
  'subagent_stop_continuation',
  'budget_continuation',
  'pause_turn_continuation',
] as const satisfies readonly TransitionReason[];

export const TERMINAL_STATUS = {
  completed: 'completed',
  manual_compacted: 'completed',
  manual_compaction_blocked: 'failed',
  manual_compaction_failed: 'failed',
  refused: 'failed',
  max_turns_reached: 'failed',
  max_tokens_exhausted: 'failed',
  prompt_too_long: 'failed',
  model_error: 'failed',
  budget_exhausted: 'failed',
  stop_hook_prevented: 'failed',
  stop_hook_block_limit: 'failed',
  prompt_blocked: 'failed',
  hook_stopped: 'failed',
  compaction_blocked_overflow: 'failed',
  runtime_error: 'failed',
  aborted: 'aborted',
  awaiting_approval: 'paused',
} as const satisfies Partial<Record<TransitionReason, 'completed' | 'failed' | 'aborted' | 'paused'>>;

export type TerminalReason = keyof typeof TERMINAL_STATUS;

export const INTRA_TURN_REASONS = [
  'query_built',
  'tool_use_requested',
  'finish_requested',
  'backoff_elapsed',
  'compacted',
  'compaction_failed',
  'tool_batch_resumed',
  'hook_context',
  'compaction_blocked',
  'manual_compact',
] as const satisfies readonly TransitionReason[];

/**
 * Not an edge of the chart: the reason `run.ended` carries when resume closes a run whose
 * process died before it ended.
 */
export const INTERRUPTED_RUN_REASON = 'interrupted';

export function isTerminalReason(r: string): r is TerminalReason {
  return Object.hasOwn(TERMINAL_STATUS, r);
}
