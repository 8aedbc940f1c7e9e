import type { AnyEventObject } from 'xstate';
import { hasToolUse, toolUsesOf } from '../model/messages.ts';
import type { ModelFailure, ModelRequest, ModelResponse } from '../model/types.ts';
import type {
  ActorFailure,
  BuiltQuery,
  CompactOutput,
  RunContext,
  StopDecision,
  ToolBatchResult,
} from './context.ts';

/**
 * Pure guards, one per decision. They read the context and the event payload only, so the
 * same facts always take the same edge: the property verify-replay relies on.
 */
type Args = { context: RunContext; event: AnyEventObject };

/** Typed views of the done / error event payloads the guards read. */
export const response = (e: AnyEventObject) => e.output as ModelResponse;
export const toolBatch = (e: AnyEventObject) => e.output as ToolBatchResult;
export const stopDecision = (e: AnyEventObject) => e.output as StopDecision;
export const builtQuery = (e: AnyEventObject) => e.output as BuiltQuery;
export const compactOutput = (e: AnyEventObject) => e.output as CompactOutput;
export function failure(e: AnyEventObject): ModelFailure | ActorFailure | null {
  const err: unknown = e.error;
  return typeof err === 'object' && err !== null && 'kind' in err
    ? (err as ModelFailure | ActorFailure)
    : null;
}

export const isAborted = ({ event }: Args) => failure(event)?.kind === 'aborted';

// ---- building: the request was built
/**
 * The history ends with tool calls that have no results: a batch parked for approval, which a
 * resumed run runs before anything is asked of the model. Read from the built request (its
 * messages are the history), so the fact is the effect's answer, like every other guard's.
 */
export const resumesToolBatch = ({ event }: Args) => {
  const last = (event.output as ModelRequest).messages.at(-1);
  return last?.role === 'assistant' && toolUsesOf(last.content).length > 0;
};
/** SessionStart / UserPromptSubmit said `continue: false` before the first request. */
export const promptStopped = ({ event }: Args) => builtQuery(event).hooks?.stopped !== undefined;
/** UserPromptSubmit blocked the prompt. */
export const promptBlocked = ({ event }: Args) => builtQuery(event).hooks?.blocked !== undefined;
/** The run was started to compact the history (manual_compact). */
export const compactRequested = ({ event }: Args) => builtQuery(event).compact === true;
/** The prompt hooks gave context for the model. */
export const hookContextGiven = ({ event }: Args) => builtQuery(event).hooks?.context !== undefined;
/** The effect itself broke (not the model): e.g. the log could not be written before the request. */
export const effectBroken = ({ event }: Args) => failure(event)?.kind === 'failed';

// ---- requesting: a response arrived
export const responseRefused = ({ event }: Args) => response(event).stopReason === 'refusal';

export const budgetExceeded = ({ context, event }: Args) => {
  const { maxBudgetUsd, maxBudgetTokens } = context.config;
  const u = response(event).usage;
  if (maxBudgetUsd !== null && context.usage.costUsd + u.costUsd > maxBudgetUsd) return true;
  if (maxBudgetTokens !== null) {
    const used = context.usage.inputTokens + context.usage.outputTokens + u.inputTokens + u.outputTokens;
    if (used > maxBudgetTokens) return true;
  }
  return false;
};

export const responseHasToolUse = ({ event }: Args) => hasToolUse(response(event).content);

export const contextWindowExceeded = ({ event }: Args) =>
  response(event).stopReason === 'model_context_window_exceeded';

/** Reactive compaction is tried once per overflow. */
export const overflowCanCompact = (a: Args) =>
  contextWindowExceeded(a) && !a.context.compaction.reactiveTried;

export const maxTokensCanEscalate = ({ context, event }: Args) =>
  response(event).stopReason === 'max_tokens' &&
  !context.output.escalated &&
  context.output.maxTokens === context.config.defaultMaxTokens &&
  context.config.escalatedMaxTokens > context.config.defaultMaxTokens;

export const maxTokensCanRecover = ({ context, event }: Args) =>
  response(event).stopReason === 'max_tokens' &&
  context.output.recoveries < context.config.maxTokensRecoveries;

export const maxTokensStop = ({ event }: Args) => response(event).stopReason === 'max_tokens';

export const pauseTurn = ({ event }: Args) => response(event).stopReason === 'pause_turn';
export const pauseTurnPastMaxTurns = (a: Args) =>
  pauseTurn(a) && a.context.turn + 1 > a.context.config.maxTurns;

// ---- requesting: the call failed
export const promptTooLong = ({ event }: Args) => failure(event)?.kind === 'prompt_too_long';
export const promptTooLongCanCompact = (a: Args) => promptTooLong(a) && !a.context.compaction.reactiveTried;

export const shouldFallBack = ({ context, event }: Args) => {
  const f = failure(event) as ModelFailure | null;
  return (
    f?.kind === 'retryable' &&
    f.overloaded === true &&
    context.config.fallbackModel !== null &&
    !context.transport.fellBack &&
    context.transport.consecutiveOverloads + 1 >= context.config.overloadsBeforeFallback
  );
};

export const canRetryTransport = ({ context, event }: Args) =>
  failure(event)?.kind === 'retryable' && context.transport.attempt < context.config.maxTransportAttempts;

// ---- dispatchingTools: the batch finished
export const toolsAborted = ({ event }: Args) => toolBatch(event).aborted;
export const toolsParked = ({ event }: Args) => (toolBatch(event).parked?.length ?? 0) > 0;
/** A hook of the batch said `continue: false`. */
export const toolsStopped = ({ event }: Args) => toolBatch(event).stopped !== undefined;

export const maxTurnsReached = ({ context }: Args) => context.turn + 1 > context.config.maxTurns;

export const needsAutoCompact = ({ context, event }: Args) =>
  context.compaction.autoFailures < context.config.autoCompactBreaker &&
  context.contextTokens + toolBatch(event).appendedTokens > context.config.autoCompactThreshold;

// ---- compacting: done, refused or failed
const refused = (e: AnyEventObject) => {
  const out = compactOutput(e);
  return 'refused' in out ? out.refused : null;
};
/** PreCompact (or SessionStart after the compaction) said `continue: false`. */
export const compactionStopped = ({ event }: Args) => {
  const out = compactOutput(event);
  return refused(event) === 'stopped' || ('hookStopped' in out && out.hookStopped !== undefined);
};
export const compactionBlocked = ({ event }: Args) => refused(event) === 'blocked';
export const compactionBlockedReactive = (a: Args) => compactionBlocked(a) && compactionWasReactive(a);
export const compactionWasReactive = ({ context }: Args) => context.compaction.mode === 'reactive';
export const compactionWasManual = ({ context }: Args) => context.compaction.mode === 'manual';
export const compactionBlockedManual = (a: Args) => compactionBlocked(a) && compactionWasManual(a);

// ---- awaitingStopHook: the stop checks answered
export const stopPrevented = ({ event }: Args) => stopDecision(event).decision === 'prevent';
export const stopBlockedPastCap = ({ context, event }: Args) =>
  stopDecision(event).decision === 'block' && context.stop.blocks >= context.config.stopHookBlockCap;
export const stopBlocked = ({ event }: Args) => stopDecision(event).decision === 'block';
/** A sub-agent's SubagentStop hooks blocked its finish. */
export const subagentStopBlocked = ({ event }: Args) => {
  const d = stopDecision(event);
  return d.decision === 'block' && d.hook === 'SubagentStop';
};
export const budgetContinue = ({ event }: Args) => stopDecision(event).decision === 'budget_continue';
