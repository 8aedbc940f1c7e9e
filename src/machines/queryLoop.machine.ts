import type { ActorRefFrom } from 'xstate';
import { toolUsesOf, ZERO_USAGE } from '../model/messages.ts';
import { queryLoopSetup } from './queryLoop.setup.ts';
import type { TransitionReason } from './reasons.ts';

const r = (reason: TransitionReason) => ({ reason });

/**
 * The query loop. Control flow lives here and only here: every decision is a guarded edge
 * with a reason; every side effect is an invoked actor (see queryLoop.setup.ts).
 */
export const queryLoopMachine = queryLoopSetup.createMachine({
  id: 'queryLoop',
  initial: 'building',
  context: ({ input }) => ({
    config: input.config,
    messages: input.messages,
    turn: 1,
    usage: ZERO_USAGE,
    contextTokens: 0,
    request: null,
    error: null,
    transport: {
      model: input.config.model,
      attempt: 1,
      consecutiveOverloads: 0,
      fellBack: false,
      lastFailure: null,
    },
    output: { maxTokens: input.config.defaultMaxTokens, escalated: false, recoveries: 0 },
    compaction: { mode: 'auto', reactiveTried: false, autoFailures: input.autoCompactFailures },
    stop: { blocks: 0, hookActive: false, budgetContinuations: 0 },
  }),
  states: {
    building: {
      invoke: {
        id: 'buildQuery',
        src: 'buildQuery',
        input: ({ context }) => ({
          messages: context.messages.view(),
          model: context.transport.model,
          maxTokens: context.output.maxTokens,
          system: context.config.system,
          turn: context.turn,
        }),
        onDone: { target: 'requesting', actions: 'takeRequest', meta: r('query_built') },
        onError: [
          { guard: 'isAborted', target: 'aborted', meta: r('aborted') },
          { target: 'failed', actions: 'noteError', meta: r('runtime_error') },
        ],
      },
    },
    requesting: {
      invoke: {
        id: 'callModel',
        src: 'callModel',
        input: ({ context }) => ({ request: context.request!, attempt: context.transport.attempt }),
        onDone: [
          {
            guard: 'responseRefused',
            target: 'failed',
            actions: [
              'takeResponse',
              'appendResponse',
              { type: 'closeToolUses', params: 'the model refused' },
              { type: 'explainFailure', params: 'refused' },
            ],
            meta: r('refused'),
          },
          {
            guard: 'budgetExceeded',
            target: 'failed',
            actions: [
              'takeResponse',
              'appendResponse',
              { type: 'closeToolUses', params: 'the budget is spent' },
              { type: 'explainFailure', params: 'budget_exhausted' },
            ],
            meta: r('budget_exhausted'),
          },
          {
            guard: 'responseHasToolUse',
            target: 'dispatchingTools',
            actions: ['takeResponse', 'appendResponse'],
            meta: r('tool_use_requested'),
          },
          {
            guard: 'overflowCanCompact',
            target: 'compacting',
            actions: ['takeResponse', 'compactReactively'],
            meta: r('compact_retry'),
          },
          {
            guard: 'contextWindowExceeded',
            target: 'failed',
            actions: ['takeResponse', { type: 'explainFailure', params: 'prompt_too_long' }],
            meta: r('prompt_too_long'),
          },
          {
            guard: 'maxTokensCanEscalate',
            target: 'building',
            actions: ['takeResponse', 'escalateMaxTokens'],
            meta: r('max_tokens_escalation'),
          },
          {
            guard: 'maxTokensCanRecover',
            target: 'building',
            actions: ['takeResponse', 'appendPartialAndContinue'],
            meta: r('max_tokens_recovery'),
          },
          {
            guard: 'maxTokensStop',
            target: 'failed',
            actions: [
              'takeResponse',
              'appendResponse',
              { type: 'explainFailure', params: 'max_tokens_exhausted' },
            ],
            meta: r('max_tokens_exhausted'),
          },
          {
            // A paused turn is a model call like any other: maxTurns bounds a server that keeps pausing.
            guard: 'pauseTurnPastMaxTurns',
            target: 'failed',
            actions: [
              'takeResponse',
              'appendResponse',
              { type: 'explainFailure', params: 'max_turns_reached' },
            ],
            meta: r('max_turns_reached'),
          },
          {
            guard: 'pauseTurn',
            target: 'building',
            actions: ['takeResponse', 'appendResponse', 'countPausedTurn'],
            meta: r('pause_turn_continuation'),
          },
          {
            target: 'awaitingStopHook',
            actions: ['takeResponse', 'appendResponse'],
            meta: r('finish_requested'),
          },
        ],
        onError: [
          { guard: 'isAborted', target: 'aborted', meta: r('aborted') },
          {
            guard: 'promptTooLongCanCompact',
            target: 'compacting',
            actions: ['noteFailure', 'compactReactively'],
            meta: r('compact_retry'),
          },
          {
            guard: 'promptTooLong',
            target: 'failed',
            actions: ['noteFailure', 'noteError'],
            meta: r('prompt_too_long'),
          },
          {
            guard: 'shouldFallBack',
            target: 'building',
            actions: ['noteFailure', 'fallBack'],
            meta: r('model_fallback'),
          },
          {
            guard: 'canRetryTransport',
            target: 'recovering',
            actions: 'noteFailure',
            meta: r('transport_retry'),
          },
          { target: 'failed', actions: ['noteFailure', 'noteError'], meta: r('model_error') },
        ],
      },
    },
    recovering: {
      invoke: {
        id: 'backoff',
        src: 'backoff',
        input: ({ context }) => ({
          attempt: context.transport.attempt,
          retryAfterMs: context.transport.lastFailure?.retryAfterMs,
        }),
        onDone: { target: 'requesting', actions: 'nextAttempt', meta: r('backoff_elapsed') },
        onError: [
          { guard: 'isAborted', target: 'aborted', meta: r('aborted') },
          { target: 'failed', actions: 'noteError', meta: r('runtime_error') },
        ],
      },
    },
    dispatchingTools: {
      invoke: {
        id: 'runTools',
        src: 'runTools',
        input: ({ context }) => ({
          toolUses: toolUsesOf(context.messages.last()?.content ?? []),
          turn: context.turn,
        }),
        onDone: [
          { guard: 'toolsAborted', target: 'aborted', actions: 'appendToolResults', meta: r('aborted') },
          {
            guard: 'maxTurnsReached',
            target: 'failed',
            actions: [
              'appendToolResults',
              'appendMaxTurnsMarker',
              { type: 'explainFailure', params: 'max_turns_reached' },
            ],
            meta: r('max_turns_reached'),
          },
          {
            guard: 'needsAutoCompact',
            target: 'compacting',
            actions: ['appendToolResults', 'nextTurn', 'compactAuto'],
            meta: r('auto_compact'),
          },
          {
            target: 'building',
            actions: ['appendToolResults', 'nextTurn'],
            meta: r('tool_result_continuation'),
          },
        ],
        onError: [
          {
            target: 'failed',
            actions: [
              'noteError',
              { type: 'closePendingToolUses', params: 'the tool batch failed (runtime error)' },
            ],
            meta: r('runtime_error'),
          },
        ],
      },
    },
    compacting: {
      invoke: {
        id: 'compact',
        src: 'compact',
        input: ({ context }) => ({
          messages: context.messages.view(),
          mode: context.compaction.mode,
          model: context.transport.model,
        }),
        onDone: { target: 'building', actions: 'takeCompaction', meta: r('compacted') },
        onError: [
          { guard: 'isAborted', target: 'aborted', meta: r('aborted') },
          {
            guard: 'compactionWasReactive',
            target: 'failed',
            actions: 'noteError',
            meta: r('prompt_too_long'),
          },
          { target: 'building', actions: 'countCompactionFailure', meta: r('compaction_failed') },
        ],
      },
    },
    awaitingStopHook: {
      invoke: {
        id: 'stopChecks',
        src: 'stopChecks',
        input: ({ context }) => ({
          lastAssistant: context.messages.last()!,
          stopHookActive: context.stop.hookActive,
          turn: context.turn,
          usage: context.usage,
          budgetContinuations: context.stop.budgetContinuations,
        }),
        onDone: [
          {
            guard: 'stopPrevented',
            target: 'failed',
            actions: { type: 'explainFailure', params: 'stop_hook_prevented' },
            meta: r('stop_hook_prevented'),
          },
          {
            guard: 'stopBlockedPastCap',
            target: 'failed',
            actions: { type: 'explainFailure', params: 'stop_hook_block_limit' },
            meta: r('stop_hook_block_limit'),
          },
          {
            guard: 'stopBlocked',
            target: 'building',
            actions: 'appendStopFeedback',
            meta: r('stop_hook_continuation'),
          },
          {
            guard: 'budgetContinue',
            target: 'building',
            actions: 'appendBudgetContinue',
            meta: r('budget_continuation'),
          },
          { target: 'completed', meta: r('completed') },
        ],
        onError: [
          { guard: 'isAborted', target: 'aborted', meta: r('aborted') },
          { target: 'failed', actions: 'noteError', meta: r('runtime_error') },
        ],
      },
    },
    completed: { type: 'final' },
    failed: { type: 'final' },
    aborted: { type: 'final' },
  },
});

export type QueryLoopMachine = typeof queryLoopMachine;
export type QueryLoopActor = ActorRefFrom<QueryLoopMachine>;
