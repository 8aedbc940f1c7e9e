import type {
  ActorFailure,
  BuiltQuery,
  CompactRefused,
  CompactResult,
  StopDecision,
  ToolBatchResult,
} from '../machines/context.ts';
import type { ContentBlock, Usage } from '../model/messages.ts';
import type { ModelFailure, ModelRequest, ModelResponse } from '../model/types.ts';
import {
  type ActorId,
  type Driver,
  type FactVariant,
  type ScriptEntry,
  TRAVERSAL_BUDGET_TOKENS,
  TRAVERSAL_COMPACT_THRESHOLD,
} from './traversal.ts';

/**
 * The finite list of facts the chart's guards tell apart, per invoked actor, each with the
 * event graph traversal feeds the machine and the driver that makes the real runtime produce
 * it (see traversal.ts for the types and the traversal configuration, docs/coverage.md for
 * the table).
 */

// ---- Synthetic payloads. Only the fields the guards read matter; usage is zero except where
// a variant is about usage, so budget totals do not multiply the state space.

const ZERO: Usage = {
  inputTokens: 0,
  outputTokens: 0,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 0,
  costUsd: 0,
};
const TEXT: ContentBlock[] = [{ type: 'text', text: 'synthetic' }];

const response = (stopReason: ModelResponse['stopReason'], content = TEXT, usage = ZERO): ModelResponse => ({
  id: 'msg_synthetic',
  model: 'synthetic',
  content,
  stopReason,
  usage,
});
const modelFailure = (kind: ModelFailure['kind'], overloaded = false): ModelFailure => ({
  kind,
  overloaded,
  message: `synthetic ${kind}`,
});
const actorFailure = (kind: ActorFailure['kind']): ActorFailure => ({ kind, message: `synthetic ${kind}` });
const batch = (appendedTokens: number, aborted = false): ToolBatchResult => ({
  results: [],
  aborted,
  appendedTokens,
});
const parkedBatch: ToolBatchResult = {
  results: [],
  aborted: false,
  appendedTokens: 0,
  parked: [{ toolUseId: 't', tool: 'needsApproval', input: {} }],
};
const request: ModelRequest = { model: 'synthetic', messages: [], tools: [], maxTokens: 1 };
const hooked = (hooks: BuiltQuery['hooks']): BuiltQuery => ({ ...request, hooks });
const resumingRequest: ModelRequest = {
  ...request,
  messages: [
    { role: 'user', content: 'synthetic' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'needsApproval', input: {} }] },
  ],
};
const compacted: CompactResult = { messages: [], usage: ZERO, summary: 's', tokensBefore: 1, tokensAfter: 1 };
const stop = (d: StopDecision) => d;
const refused = (r: CompactRefused) => r;

function done(
  actor: ActorId,
  name: string,
  output: unknown,
  driver: Driver | null,
  doc: string,
): FactVariant {
  return {
    id: `${actor}.${name}`,
    actor,
    name,
    event: { type: `xstate.done.actor.${actor}`, output },
    driver,
    doc,
  };
}
function failed(
  actor: ActorId,
  name: string,
  error: unknown,
  driver: Driver | null,
  doc: string,
): FactVariant {
  return {
    id: `${actor}.${name}`,
    actor,
    name,
    event: { type: `xstate.error.actor.${actor}`, error },
    driver,
    doc,
  };
}

const turn = (entry: ScriptEntry): Driver => ({ kind: 'modelTurn', turn: entry });
const apiError = (status: number, type: string, message: string) =>
  turn({ error: { status, type, message } });

/**
 * Order matters: graph traversal tries events in this order, so on equal length the earlier
 * (more ordinary) variant wins.
 */
export const FACT_VARIANTS: readonly FactVariant[] = [
  done('buildQuery', 'ok', request, { kind: 'live' }, 'the request is assembled'),
  {
    ...done(
      'buildQuery',
      'parkedBatch',
      resumingRequest,
      { kind: 'parkedBatch' },
      'the history ends with a batch parked for approval (approved since)',
    ),
    firstStepOnly: true,
  },
  {
    ...done(
      'buildQuery',
      'compactRequested',
      { ...request, compact: true },
      { kind: 'manualCompact' },
      'the run was started as a manual compaction (/compact, Session.compact)',
    ),
    firstStepOnly: true,
  },
  {
    ...done(
      'buildQuery',
      'hookContext',
      hooked({ context: 'synthetic context' }),
      { kind: 'promptHook', answer: 'context' },
      'the prompt hooks give context for the model',
    ),
    firstStepOnly: true,
  },
  {
    ...done(
      'buildQuery',
      'promptBlocked',
      hooked({ blocked: 'synthetic block' }),
      { kind: 'promptHook', answer: 'block' },
      'UserPromptSubmit blocks the prompt',
    ),
    firstStepOnly: true,
  },
  {
    ...done(
      'buildQuery',
      'promptStopped',
      hooked({ stopped: 'synthetic stop' }),
      { kind: 'promptHook', answer: 'stop' },
      'a prompt hook says continue: false',
    ),
    firstStepOnly: true,
  },
  failed(
    'buildQuery',
    'aborted',
    actorFailure('aborted'),
    { kind: 'abortAtStart' },
    'aborted before the request',
  ),
  failed(
    'buildQuery',
    'throws',
    actorFailure('failed'),
    { kind: 'brokenActor' },
    'the query builder is broken',
  ),

  done(
    'callModel',
    'toolUse',
    response('tool_use', [{ type: 'tool_use', id: 't', name: 'echo', input: {} }]),
    { kind: 'modelTurn', turn: 'toolUse' },
    'content holds tool_use blocks',
  ),
  done(
    'callModel',
    'endTurn',
    response('end_turn'),
    turn({ text: 'All tests pass now.', stop_reason: 'end_turn' }),
    'text only: the model wants to finish',
  ),
  done(
    'callModel',
    'refusal',
    response('refusal'),
    turn({ text: 'I cannot help with that.', stop_reason: 'refusal' }),
    'stop_reason refusal',
  ),
  done(
    'callModel',
    'maxTokens',
    response('max_tokens'),
    turn({ text: 'The fix is to chan', stop_reason: 'max_tokens' }),
    'output cut at max_tokens',
  ),
  done(
    'callModel',
    'pauseTurn',
    response('pause_turn'),
    turn({ text: 'Still searching…', stop_reason: 'pause_turn' }),
    'the server paused the turn',
  ),
  done(
    'callModel',
    'contextWindowExceeded',
    response('model_context_window_exceeded', []),
    turn({ content: [], stop_reason: 'model_context_window_exceeded' }),
    'stop_reason model_context_window_exceeded',
  ),
  done(
    'callModel',
    'overBudget',
    response('end_turn', TEXT, { ...ZERO, inputTokens: TRAVERSAL_BUDGET_TOKENS + 1 }),
    turn({ text: 'Done.', stop_reason: 'end_turn', usage: { input_tokens: TRAVERSAL_BUDGET_TOKENS + 1 } }),
    'the response spends more than the token budget',
  ),
  failed(
    'callModel',
    'retryable',
    modelFailure('retryable'),
    apiError(500, 'api_error', 'Internal server error'),
    'HTTP 500',
  ),
  failed(
    'callModel',
    'overloaded',
    modelFailure('retryable', true),
    apiError(529, 'overloaded_error', 'Overloaded'),
    'HTTP 529 overloaded',
  ),
  failed(
    'callModel',
    'promptTooLong',
    modelFailure('prompt_too_long'),
    apiError(400, 'invalid_request_error', 'prompt is too long: 210000 tokens > 200000 maximum'),
    'HTTP 400 prompt is too long',
  ),
  failed(
    'callModel',
    'fatal',
    modelFailure('fatal'),
    apiError(401, 'authentication_error', 'invalid x-api-key'),
    'HTTP 401: not retryable',
  ),
  failed(
    'callModel',
    'aborted',
    modelFailure('aborted'),
    turn({ abort: true }),
    'the user aborts while the response streams',
  ),
  failed(
    'callModel',
    'throws',
    actorFailure('failed'),
    { kind: 'brokenActor' },
    'the request cannot be made (its log cannot be written)',
  ),

  done('runTools', 'ok', batch(10), { kind: 'tool', tool: 'echo' }, 'a small tool result'),
  done(
    'runTools',
    'overThreshold',
    batch(TRAVERSAL_COMPACT_THRESHOLD * 2),
    { kind: 'tool', tool: 'bigOutput' },
    'a result that pushes the context past the auto-compact threshold',
  ),
  done(
    'runTools',
    'aborted',
    batch(10, true),
    { kind: 'tool', tool: 'interrupt' },
    'the session is aborted while a tool runs',
  ),
  done(
    'runTools',
    'parked',
    parkedBatch,
    { kind: 'tool', tool: 'needsApproval' },
    'a call the policy asks about, and nobody attached to answer',
  ),
  done(
    'runTools',
    'stopped',
    { ...batch(10), stopped: 'synthetic stop' },
    { kind: 'tool', tool: 'stopper' },
    "the call's PostToolUse hook says continue: false",
  ),
  failed(
    'runTools',
    'throws',
    actorFailure('failed'),
    { kind: 'brokenActor' },
    'the tool orchestrator is broken',
  ),

  done(
    'compact',
    'ok',
    compacted,
    turn({ text: 'Goal: fix the failing test. Next step: run it.' }),
    'the summary comes back',
  ),
  done(
    'compact',
    'blocked',
    refused({ refused: 'blocked', reason: 'synthetic block' }),
    { kind: 'preCompact', answer: 'block' },
    'a PreCompact hook blocks the compaction',
  ),
  done(
    'compact',
    'stopped',
    refused({ refused: 'stopped', reason: 'synthetic stop' }),
    { kind: 'preCompact', answer: 'stop' },
    'a PreCompact hook says continue: false',
  ),
  failed(
    'compact',
    'fails',
    actorFailure('failed'),
    apiError(500, 'api_error', 'Internal server error'),
    'the summarisation request fails',
  ),
  failed(
    'compact',
    'aborted',
    actorFailure('aborted'),
    turn({ abort: true }),
    'the user aborts while the summary streams',
  ),

  done('backoff', 'ok', { delayMs: 1 }, { kind: 'live' }, 'the wait elapses (virtual clock)'),
  failed('backoff', 'aborted', actorFailure('aborted'), { kind: 'abortAtStart' }, 'aborted during the wait'),
  failed('backoff', 'throws', actorFailure('failed'), { kind: 'brokenActor' }, 'the backoff timer is broken'),

  done(
    'stopChecks',
    'allow',
    stop({ decision: 'allow' }),
    { kind: 'stopAnswer', answer: 'allow' },
    'every stop hook allows',
  ),
  done(
    'stopChecks',
    'block',
    stop({ decision: 'block', reason: 'tests still fail' }),
    { kind: 'stopAnswer', answer: 'block' },
    'a stop hook blocks',
  ),
  done(
    'stopChecks',
    'prevent',
    stop({ decision: 'prevent', reason: 'stop now' }),
    { kind: 'stopAnswer', answer: 'prevent' },
    'a stop hook prevents continuation',
  ),
  done(
    'stopChecks',
    'budgetContinue',
    stop({ decision: 'budget_continue', message: 'keep going' }),
    { kind: 'stopAnswer', answer: 'budgetContinue' },
    'the budget policy asks for more work',
  ),
  done(
    'stopChecks',
    'subagentBlock',
    stop({ decision: 'block', reason: 'synthetic sub-agent block', hook: 'SubagentStop' }),
    { kind: 'stopAnswer', answer: 'subagentBlock' },
    "a sub-agent's SubagentStop hook blocks",
  ),
  failed(
    'stopChecks',
    'aborted',
    actorFailure('aborted'),
    { kind: 'abortAtStart' },
    'aborted before the hooks answer',
  ),
  failed(
    'stopChecks',
    'throws',
    actorFailure('failed'),
    { kind: 'brokenActor' },
    'the stop-check runner is broken',
  ),
];

export function variantById(id: string, variants: readonly FactVariant[] = FACT_VARIANTS): FactVariant {
  const v = variants.find((x) => x.id === id);
  if (!v) throw new Error(`no fact variant named ${id}`);
  return v;
}
