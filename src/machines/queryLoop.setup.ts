import { assign, emit, enqueueActions, sendTo, setup } from 'xstate';
import { AppendOnlyList } from '../lib/appendOnlyList.ts';
import { addUsage, contextTokensOf, estimateTokens, type Message, toolUsesOf } from '../model/messages.ts';
import type { ModelRequest, ModelResponse } from '../model/types.ts';
import type {
  BuiltQuery,
  CompactOutput,
  MessageEmitted,
  RunContext,
  RunInput,
  ToolBatchResult,
} from './context.ts';
import type { EdgeFact, EdgeTaken } from './edgeReport.ts';
import { effectCommand } from './effectInputs.ts';
import {
  EFFECTS_ACTOR_ID,
  type EffectName,
  type EffectReply,
  effectsActor,
  missingEffects,
} from './effects.ts';
import { failureText } from './failureText.ts';
import * as g from './guards.ts';
import {
  assistantMessage,
  MAX_TOKENS_CONTINUE_TEXT,
  MAX_TURNS_MARKER,
  partialOutput,
  STOP_HOOK_FEEDBACK_PREFIX,
  SUBAGENT_STOP_HOOK_FEEDBACK_PREFIX,
  syntheticResults,
  toolResultsMessage,
  userText,
} from './loopMessages.ts';
import type { TerminalReason } from './reasons.ts';

type Emit = MessageEmitted | EdgeTaken;
const emitted = (message: Message, origin: MessageEmitted['origin']): MessageEmitted => ({
  type: 'message',
  message,
  origin,
});

const outputOf = <T>(event: unknown): T => (event as { output: T }).output;

/** What every model response changes: usage, the context estimate, the transport's retry state. */
function responseUpdate(context: RunContext, res: ModelResponse) {
  const t = context.transport;
  return {
    usage: addUsage(context.usage, res.usage),
    contextTokens: contextTokensOf(res.usage),
    // Unchanged parts are kept, not copied: most turns have nothing to reset.
    transport:
      t.attempt === 1 && t.consecutiveOverloads === 0 && t.lastFailure === null
        ? t
        : { ...t, attempt: 1, consecutiveOverloads: 0, lastFailure: null },
    compaction:
      res.stopReason === 'model_context_window_exceeded' || !context.compaction.reactiveTried
        ? context.compaction
        : { ...context.compaction, reactiveTried: false },
  };
}

/** The request the chart keeps: what buildQuery built, without what its hooks said. */
function requestOf(event: unknown): ModelRequest {
  const { hooks: _, ...request } = outputOf<BuiltQuery>(event);
  return request;
}

/** What a new turn resets: per-turn output recovery and the consecutive stop-hook blocks. */
function nextTurnUpdate(context: RunContext) {
  const o = context.output;
  return {
    turn: context.turn + 1,
    output:
      o.maxTokens === context.config.defaultMaxTokens && !o.escalated && o.recoveries === 0
        ? o
        : { maxTokens: context.config.defaultMaxTokens, escalated: false, recoveries: 0 },
    stop: context.stop.blocks === 0 ? context.stop : { ...context.stop, blocks: 0 },
  };
}

/**
 * The query loop's vocabulary: context, input and event types, the effects actor it invokes
 * (its handlers provided by the runtime or by replay, see effects.ts), its named pure guards
 * and its pure actions. The chart itself —
 * states and guarded edges — is queryLoop.machine.ts. Assigns are O(1) per turn: the history
 * is an AppendOnlyList, never copied.
 */
export const queryLoopSetup = setup({
  types: {
    context: {} as RunContext,
    input: {} as RunInput,
    emitted: {} as Emit,
    events: {} as EffectReply,
  },
  actors: {
    effects: effectsActor(missingEffects()),
  },
  guards: {
    isAborted: g.isAborted,
    effectBroken: g.effectBroken,
    responseRefused: g.responseRefused,
    budgetExceeded: g.budgetExceeded,
    responseHasToolUse: g.responseHasToolUse,
    contextWindowExceeded: g.contextWindowExceeded,
    overflowCanCompact: g.overflowCanCompact,
    promptTooLongCanCompact: g.promptTooLongCanCompact,
    maxTokensCanEscalate: g.maxTokensCanEscalate,
    maxTokensCanRecover: g.maxTokensCanRecover,
    maxTokensStop: g.maxTokensStop,
    pauseTurn: g.pauseTurn,
    pauseTurnPastMaxTurns: g.pauseTurnPastMaxTurns,
    promptTooLong: g.promptTooLong,
    shouldFallBack: g.shouldFallBack,
    canRetryTransport: g.canRetryTransport,
    toolsAborted: g.toolsAborted,
    toolsParked: g.toolsParked,
    resumesToolBatch: g.resumesToolBatch,
    maxTurnsReached: g.maxTurnsReached,
    needsAutoCompact: g.needsAutoCompact,
    compactionWasReactive: g.compactionWasReactive,
    compactionWasManual: g.compactionWasManual,
    compactionBlockedManual: g.compactionBlockedManual,
    compactRequested: g.compactRequested,
    stopPrevented: g.stopPrevented,
    stopBlockedPastCap: g.stopBlockedPastCap,
    stopBlocked: g.stopBlocked,
    budgetContinue: g.budgetContinue,
    promptStopped: g.promptStopped,
    promptBlocked: g.promptBlocked,
    hookContextGiven: g.hookContextGiven,
    toolsStopped: g.toolsStopped,
    compactionStopped: g.compactionStopped,
    compactionBlocked: g.compactionBlocked,
    compactionBlockedReactive: g.compactionBlockedReactive,
    subagentStopBlocked: g.subagentStopBlocked,
  },
  actions: {
    /** First on every edge (see edgeReport.ts): the edge taken, as the `transition` record. */
    reportEdge: emit((_, edge: EdgeFact): EdgeTaken => ({ type: 'edge', ...edge })),
    /** The state's effect: a command to the effects actor, answered by `xstate.done|error.actor.<effect>`. */
    perform: sendTo(EFFECTS_ACTOR_ID, ({ context }, effect: EffectName) => effectCommand(effect, context)),
    /** Every response: add its usage, note its size as the new context estimate, reset retry state. */
    takeResponse: assign(({ context, event }) => responseUpdate(context, outputOf<ModelResponse>(event))),
    /**
     * takeResponse and the response appended to the history, in one assign (xstate copies the
     * whole snapshot per assign). `announce` follows, to emit the appended message.
     */
    takeAndAppendResponse: assign(({ context, event }) => {
      const res = outputOf<ModelResponse>(event);
      return { ...responseUpdate(context, res), messages: context.messages.append(assistantMessage(res)) };
    }),
    /** The message the previous action appended, emitted for the log (`message.appended`). */
    announce: emit(({ context }, origin: MessageEmitted['origin']) =>
      emitted(context.messages.last()!, origin),
    ),
    /** For terminal edges from `requesting`: tool_use blocks that will never run get results. */
    closeToolUses: enqueueActions(({ context, event, enqueue }, why: string) => {
      const res = (event as unknown as { output: ModelResponse }).output;
      const uses = toolUsesOf(res.content);
      if (uses.length === 0) return;
      const msg = toolResultsMessage(syntheticResults(uses, why));
      enqueue.assign({ messages: context.messages.append(msg) });
      enqueue.emit(emitted(msg, 'interrupted'));
    }),
    /** For a failed tool batch: the tool_use blocks of the last assistant message get results. */
    closePendingToolUses: enqueueActions(({ context, enqueue }, why: string) => {
      const last = context.messages.last();
      const uses = last?.role === 'assistant' ? toolUsesOf(last.content) : [];
      if (uses.length === 0) return;
      const msg = toolResultsMessage(syntheticResults(uses, why));
      enqueue.assign({ messages: context.messages.append(msg) });
      enqueue.emit(emitted(msg, 'interrupted'));
    }),
    appendPartialAndContinue: enqueueActions(({ context, event, enqueue }) => {
      const res = (event as unknown as { output: ModelResponse }).output;
      const partial = partialOutput(res);
      const cont = userText(MAX_TOKENS_CONTINUE_TEXT);
      const added: Message[] = partial ? [partial, cont] : [cont];
      enqueue.assign({
        messages: context.messages.append(...added),
        output: { ...context.output, recoveries: context.output.recoveries + 1 },
        contextTokens: context.contextTokens + estimateTokens(cont.content),
      });
      if (partial) enqueue.emit(emitted(partial, 'assistant'));
      enqueue.emit(emitted(cont, 'max_tokens_continue'));
    }),
    escalateMaxTokens: assign(({ context }) => ({
      output: { ...context.output, maxTokens: context.config.escalatedMaxTokens, escalated: true },
    })),
    appendToolResults: enqueueActions(({ context, event, enqueue }) => {
      const out = (event as unknown as { output: ToolBatchResult }).output;
      const msg = toolResultsMessage(out.results);
      enqueue.assign({
        messages: context.messages.append(msg),
        contextTokens: context.contextTokens + out.appendedTokens,
        usage: out.usage ? addUsage(context.usage, out.usage) : context.usage,
      });
      enqueue.emit(emitted(msg, out.aborted ? 'interrupted' : 'tool_results'));
    }),
    appendMaxTurnsMarker: enqueueActions(({ context, enqueue }) => {
      const msg = userText(MAX_TURNS_MARKER);
      enqueue.assign({ messages: context.messages.append(msg) });
      enqueue.emit(emitted(msg, 'max_turns_marker'));
    }),
    /** The results of a batch that was not aborted appended, and a new turn begun (per-turn recovery state starts over). `announce` follows. */
    appendResultsAndContinue: assign(({ context, event }) => {
      const out = outputOf<ToolBatchResult>(event);
      return {
        ...nextTurnUpdate(context),
        messages: context.messages.append(toolResultsMessage(out.results)),
        contextTokens: context.contextTokens + out.appendedTokens,
        usage: out.usage ? addUsage(context.usage, out.usage) : context.usage,
      };
    }),
    countPausedTurn: assign(({ context }) => ({ turn: context.turn + 1 })),
    takeRequest: assign({ request: ({ event }) => requestOf(event) }),
    /** The request, and the prompt hooks' context appended to the history (it is in the request). `announce` follows. */
    takeRequestWithContext: assign(({ context, event }) => ({
      request: requestOf(event),
      messages: context.messages.append(userText(outputOf<BuiltQuery>(event).hooks!.context!)),
    })),
    noteFailure: assign(({ context, event }) => {
      const f = (event as unknown as { error: RunContext['transport']['lastFailure'] }).error;
      return {
        transport: {
          ...context.transport,
          lastFailure: f,
          consecutiveOverloads: f?.overloaded ? context.transport.consecutiveOverloads + 1 : 0,
        },
      };
    }),
    nextAttempt: assign(({ context }) => ({
      transport: { ...context.transport, attempt: context.transport.attempt + 1 },
    })),
    fallBack: assign(({ context }) => ({
      transport: {
        ...context.transport,
        model: context.config.fallbackModel ?? context.transport.model,
        fellBack: true,
        consecutiveOverloads: 0,
        attempt: 1,
      },
    })),
    compactReactively: assign(({ context }) => ({
      compaction: { ...context.compaction, mode: 'reactive' as const, reactiveTried: true },
    })),
    compactAuto: assign(({ context }) => ({ compaction: { ...context.compaction, mode: 'auto' as const } })),
    compactManually: assign(({ context }) => ({
      compaction: { ...context.compaction, mode: 'manual' as const },
    })),
    /** The compacted history (nothing when hooks refused the compaction), then SessionStart's context. */
    takeCompaction: enqueueActions(({ context, event, enqueue }) => {
      const out = outputOf<CompactOutput>(event);
      if ('refused' in out) return;
      let messages = AppendOnlyList.from(out.messages);
      const note =
        out.hookContext !== undefined && out.hookStopped === undefined ? userText(out.hookContext) : null;
      if (note) messages = messages.append(note);
      enqueue.assign({
        messages,
        usage: addUsage(context.usage, out.usage),
        contextTokens: out.tokensAfter + (note ? estimateTokens(note.content) : 0),
        compaction:
          context.compaction.mode === 'auto'
            ? { ...context.compaction, autoFailures: 0 }
            : context.compaction,
      });
      if (note) enqueue.emit(emitted(note, 'hook_context'));
    }),
    countCompactionFailure: assign(({ context }) => ({
      compaction: { ...context.compaction, autoFailures: context.compaction.autoFailures + 1 },
    })),
    appendStopFeedback: enqueueActions(({ context, event, enqueue }) => {
      const out = (event as unknown as { output: { reason: string } }).output;
      const msg = userText(`${STOP_HOOK_FEEDBACK_PREFIX}${out.reason}`);
      enqueue.assign({
        messages: context.messages.append(msg),
        stop: { ...context.stop, blocks: context.stop.blocks + 1, hookActive: true },
        contextTokens: context.contextTokens + estimateTokens(msg.content),
      });
      enqueue.emit(emitted(msg, 'stop_hook_feedback'));
    }),
    appendSubagentStopFeedback: enqueueActions(({ context, event, enqueue }) => {
      const out = (event as unknown as { output: { reason: string } }).output;
      const msg = userText(`${SUBAGENT_STOP_HOOK_FEEDBACK_PREFIX}${out.reason}`);
      enqueue.assign({
        messages: context.messages.append(msg),
        stop: { ...context.stop, blocks: context.stop.blocks + 1, hookActive: true },
        contextTokens: context.contextTokens + estimateTokens(msg.content),
      });
      enqueue.emit(emitted(msg, 'stop_hook_feedback'));
    }),
    appendBudgetContinue: enqueueActions(({ context, event, enqueue }) => {
      const out = (event as unknown as { output: { message: string } }).output;
      const msg = userText(out.message);
      enqueue.assign({
        messages: context.messages.append(msg),
        stop: { ...context.stop, budgetContinuations: context.stop.budgetContinuations + 1 },
        contextTokens: context.contextTokens + estimateTokens(msg.content),
      });
      enqueue.emit(emitted(msg, 'budget_continue'));
    }),
    /** A failed run says why in words, not only by its reason. */
    explainFailure: assign(({ context, event }, why: TerminalReason) => ({
      error: failureText(why, context, event),
    })),
    noteError: assign({
      error: ({ event }) => {
        const e = (event as unknown as { error?: unknown }).error;
        if (e && typeof e === 'object' && 'message' in e) return String((e as { message: unknown }).message);
        return String(e);
      },
    }),
  },
});
