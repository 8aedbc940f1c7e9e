/**
 * The names reloop's spans carry. GenAI names follow the OpenTelemetry GenAI semantic
 * conventions as released in semantic-conventions-genai v0.1.0 (their first standalone release,
 * status Development; the names used here are those of semantic-conventions v1.41.0 too).
 * `reloop.*` names are this project's own (docs/otel.md lists them all).
 */
export const SEMCONV_GENAI_VERSION = '0.1.0';
export const SEMCONV_SCHEMA_URL = 'https://opentelemetry.io/schemas/1.41.0';

export const PROVIDER = 'anthropic';

export const A = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  agentName: 'gen_ai.agent.name',
  conversationId: 'gen_ai.conversation.id',
  requestModel: 'gen_ai.request.model',
  requestMaxTokens: 'gen_ai.request.max_tokens',
  responseId: 'gen_ai.response.id',
  responseModel: 'gen_ai.response.model',
  finishReasons: 'gen_ai.response.finish_reasons',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cacheReadTokens: 'gen_ai.usage.cache_read.input_tokens',
  cacheCreationTokens: 'gen_ai.usage.cache_creation.input_tokens',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  errorType: 'error.type',
  // Opt-in content.
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  systemInstructions: 'gen_ai.system_instructions',
  toolArguments: 'gen_ai.tool.call.arguments',
  toolResult: 'gen_ai.tool.call.result',
  httpStatus: 'http.response.status_code',
} as const;

/** reloop's own attributes: where a span comes from in the log, and what the log says of it. */
export const R = {
  sessionId: 'reloop.session.id',
  runId: 'reloop.run.id',
  seq: 'reloop.seq',
  endSeq: 'reloop.end_seq',
  parentSession: 'reloop.parent.session.id',
  forkedFrom: 'reloop.forked_from.session.id',
  imported: 'reloop.imported_from',
  resumedFrom: 'reloop.run.resumed_from',
  status: 'reloop.run.status',
  reason: 'reloop.run.reason',
  turns: 'reloop.run.turns',
  error: 'reloop.run.error',
  interruptedState: 'reloop.run.interrupted.state',
  costUsd: 'reloop.usage.cost_usd',
  purpose: 'reloop.model.purpose',
  attempt: 'reloop.model.attempt',
  messageCount: 'reloop.model.message_count',
  failureKind: 'reloop.model.failure.kind',
  toolOutcome: 'reloop.tool.outcome',
  toolReadOnly: 'reloop.tool.read_only',
  toolDurationMs: 'reloop.tool.duration_ms',
  toolSynthetic: 'reloop.tool.synthetic',
  childSession: 'reloop.child.session.id',
} as const;

/** Span events (each carries `seq`, the record it comes from). */
export const E = {
  transition: 'reloop.transition',
  backoff: 'reloop.backoff',
  compaction: 'reloop.compaction',
  hook: 'reloop.hook',
  permission: 'reloop.permission',
  approvalRequested: 'reloop.approval.requested',
  approvalDecided: 'reloop.approval.decided',
  childStarted: 'reloop.child.started',
  childFinished: 'reloop.child.finished',
  abort: 'reloop.abort',
  actorFailed: 'reloop.actor.failed',
  unmapped: 'reloop.import.unmapped',
} as const;
