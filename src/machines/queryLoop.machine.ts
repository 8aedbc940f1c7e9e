import type { ActorRefFrom } from 'xstate';
import { ZERO_USAGE } from '../model/messages.ts';
import { reportEdges } from './edgeReport.ts';
import { EFFECTS_ACTOR_ID, type EffectHandlers, effectsActor } from './effects.ts';
import { queryLoopSetup } from './queryLoop.setup.ts';
import type { TransitionReason } from './reasons.ts';

const r = (reason: TransitionReason) => ({ reason });

/**
 * The query loop. Control flow lives here and only here: every decision is a guarded edge
 * with a reason. Side effects live in the run's one invoked effects actor (effects.ts): each
 * state `perform`s its effect on entry and routes on the effect's outcome,
 * `xstate.done.actor.<effect>` or `xstate.error.actor.<effect>`, as it would on an invoke's
 * onDone / onError. Every edge reports itself when taken (`reportEdges`, edgeReport.ts).
 */
export const queryLoopMachine = queryLoopSetup.createMachine(
  reportEdges({
    id: 'queryLoop',
    initial: 'building',
    invoke: { id: EFFECTS_ACTOR_ID, src: 'effects' },
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
        entry: { type: 'perform', params: 'buildQuery' },
        on: {
          'xstate.done.actor.buildQuery': [
            // A run's first build runs its SessionStart / UserPromptSubmit hooks: they may end it.
            {
              guard: 'promptStopped',
              target: 'failed',
              actions: { type: 'explainFailure', params: 'hook_stopped' },
              meta: r('hook_stopped'),
            },
            {
              guard: 'promptBlocked',
              target: 'failed',
              actions: { type: 'explainFailure', params: 'prompt_blocked' },
              meta: r('prompt_blocked'),
            },
            // `/compact`, Session.compact(): the history is summarised and nothing is sent.
            {
              guard: 'compactRequested',
              target: 'compacting',
              actions: 'compactManually',
              meta: r('manual_compact'),
            },
            { guard: 'resumesToolBatch', target: 'dispatchingTools', meta: r('tool_batch_resumed') },
            {
              guard: 'hookContextGiven',
              target: 'requesting',
              actions: ['takeRequestWithContext', { type: 'announce', params: 'hook_context' }],
              meta: r('hook_context'),
            },
            { target: 'requesting', actions: 'takeRequest', meta: r('query_built') },
          ],
          'xstate.error.actor.buildQuery': [
            { guard: 'isAborted', target: 'aborted', meta: r('aborted') },
            { target: 'failed', actions: 'noteError', meta: r('runtime_error') },
          ],
        },
      },
      requesting: {
        entry: { type: 'perform', params: 'callModel' },
        on: {
          'xstate.done.actor.callModel': [
            {
              guard: 'responseRefused',
              target: 'failed',
              actions: [
                'takeAndAppendResponse',
                { type: 'announce', params: 'assistant' },
                { type: 'closeToolUses', params: 'the model refused' },
                { type: 'explainFailure', params: 'refused' },
              ],
              meta: r('refused'),
            },
            {
              guard: 'budgetExceeded',
              target: 'failed',
              actions: [
                'takeAndAppendResponse',
                { type: 'announce', params: 'assistant' },
                { type: 'closeToolUses', params: 'the budget is spent' },
                { type: 'explainFailure', params: 'budget_exhausted' },
              ],
              meta: r('budget_exhausted'),
            },
            {
              guard: 'responseHasToolUse',
              target: 'dispatchingTools',
              actions: ['takeAndAppendResponse', { type: 'announce', params: 'assistant' }],
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
                'takeAndAppendResponse',
                { type: 'announce', params: 'assistant' },
                { type: 'explainFailure', params: 'max_tokens_exhausted' },
              ],
              meta: r('max_tokens_exhausted'),
            },
            {
              // A paused turn is a model call like any other: maxTurns bounds a server that keeps pausing.
              guard: 'pauseTurnPastMaxTurns',
              target: 'failed',
              actions: [
                'takeAndAppendResponse',
                { type: 'announce', params: 'assistant' },
                { type: 'explainFailure', params: 'max_turns_reached' },
              ],
              meta: r('max_turns_reached'),
            },
            {
              guard: 'pauseTurn',
              target: 'building',
              actions: [
                'takeAndAppendResponse',
                { type: 'announce', params: 'assistant' },
                'countPausedTurn',
              ],
              meta: r('pause_turn_continuation'),
            },
            {
              target: 'awaitingStopHook',
              actions: ['takeAndAppendResponse', { type: 'announce', params: 'assistant' }],
              meta: r('finish_requested'),
            },
          ],
          'xstate.error.actor.callModel': [
            { guard: 'isAborted', target: 'aborted', meta: r('aborted') },
            // Not the model's failure: the request never left (its log could not be written).
            { guard: 'effectBroken', target: 'failed', actions: 'noteError', meta: r('runtime_error') },
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
        entry: { type: 'perform', params: 'backoff' },
        on: {
          'xstate.done.actor.backoff': {
            target: 'requesting',
            actions: 'nextAttempt',
            meta: r('backoff_elapsed'),
          },
          'xstate.error.actor.backoff': [
            { guard: 'isAborted', target: 'aborted', meta: r('aborted') },
            { target: 'failed', actions: 'noteError', meta: r('runtime_error') },
          ],
        },
      },
      dispatchingTools: {
        entry: { type: 'perform', params: 'runTools' },
        on: {
          'xstate.done.actor.runTools': [
            { guard: 'toolsAborted', target: 'aborted', actions: 'appendToolResults', meta: r('aborted') },
            // A hook said continue: false: the results (the calls after it did not run) close the run.
            {
              guard: 'toolsStopped',
              target: 'failed',
              actions: ['appendToolResults', { type: 'explainFailure', params: 'hook_stopped' }],
              meta: r('hook_stopped'),
            },
            // Nothing ran: the history keeps its open tool calls, which the resumed run runs.
            { guard: 'toolsParked', target: 'awaitingApproval', meta: r('awaiting_approval') },
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
              actions: [
                'appendResultsAndContinue',
                { type: 'announce', params: 'tool_results' },
                'compactAuto',
              ],
              meta: r('auto_compact'),
            },
            {
              target: 'building',
              actions: ['appendResultsAndContinue', { type: 'announce', params: 'tool_results' }],
              meta: r('tool_result_continuation'),
            },
          ],
          'xstate.error.actor.runTools': [
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
        entry: { type: 'perform', params: 'compact' },
        on: {
          'xstate.done.actor.compact': [
            {
              guard: 'compactionStopped',
              target: 'failed',
              actions: ['takeCompaction', { type: 'explainFailure', params: 'hook_stopped' }],
              meta: r('hook_stopped'),
            },
            // Blocking the compaction that would recover from an overflow lets the overflow stand.
            {
              guard: 'compactionBlockedReactive',
              target: 'failed',
              actions: { type: 'explainFailure', params: 'compaction_blocked_overflow' },
              meta: r('compaction_blocked_overflow'),
            },
            {
              guard: 'compactionBlockedManual',
              target: 'failed',
              actions: { type: 'explainFailure', params: 'manual_compaction_blocked' },
              meta: r('manual_compaction_blocked'),
            },
            { guard: 'compactionBlocked', target: 'building', meta: r('compaction_blocked') },
            {
              guard: 'compactionWasManual',
              target: 'completed',
              actions: 'takeCompaction',
              meta: r('manual_compacted'),
            },
            { target: 'building', actions: 'takeCompaction', meta: r('compacted') },
          ],
          'xstate.error.actor.compact': [
            { guard: 'isAborted', target: 'aborted', meta: r('aborted') },
            {
              guard: 'compactionWasReactive',
              target: 'failed',
              actions: 'noteError',
              meta: r('prompt_too_long'),
            },
            {
              guard: 'compactionWasManual',
              target: 'failed',
              actions: 'noteError',
              meta: r('manual_compaction_failed'),
            },
            { target: 'building', actions: 'countCompactionFailure', meta: r('compaction_failed') },
          ],
        },
      },
      awaitingStopHook: {
        entry: { type: 'perform', params: 'stopChecks' },
        on: {
          'xstate.done.actor.stopChecks': [
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
              guard: 'subagentStopBlocked',
              target: 'building',
              actions: 'appendSubagentStopFeedback',
              meta: r('subagent_stop_continuation'),
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
          'xstate.error.actor.stopChecks': [
            { guard: 'isAborted', target: 'aborted', meta: r('aborted') },
            { target: 'failed', actions: 'noteError', meta: r('runtime_error') },
          ],
        },
      },
      completed: { type: 'final' },
      failed: { type: 'final' },
      aborted: { type: 'final' },
      /** The run parked on an approval: the session rests here until it is answered and resumed. */
      awaitingApproval: { type: 'final' },
    },
  }),
);

export type QueryLoopMachine = typeof queryLoopMachine;
export type QueryLoopActor = ActorRefFrom<QueryLoopMachine>;

/** The chart with its effects performed by `handlers`: the runtime's live ones or replay's recorded ones. */
export function withEffects(machine: QueryLoopMachine, handlers: EffectHandlers): QueryLoopMachine {
  return machine.provide({ actors: { effects: effectsActor(handlers) } });
}
