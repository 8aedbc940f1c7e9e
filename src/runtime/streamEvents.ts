import { z } from 'zod';
import { ContentBlockSchema, type Message, textOf, type Usage, UsageSchema } from '../model/messages.ts';
import type { ModelStreamEvent } from '../model/types.ts';
import type { LogRecord } from '../store/records.ts';
import { startedInput } from '../store/refs.ts';
import type { SessionState } from '../store/sessionState.ts';
import { NEW_TURN_REASONS } from '../store/turns.ts';
import type { RecordListener } from './sessionWriter.ts';

/*
 * `session.stream(prompt)`: one run as an async iterator of events, in the shapes users of the
 * Claude Agent SDK's `query()` know — `system` (init, and reloop's own subtypes: each chart
 * transition with its reason, each tool call and result, permission answers), `stream_event`
 * (text as the model produces it), `assistant` / `user` (each message the history gains) and
 * one `result` at the end. Field names are snake_case as the SDK's. Every event but
 * `stream_event` is made from a log record as it is added (`seq` is that record's), so the
 * stream says nothing the log does not; `reloop run --output-format stream-json` prints these
 * events one per line.
 */

const Envelope = { session_id: z.string(), run_id: z.string() };
const Logged = { ...Envelope, seq: z.number().int().positive() };

export const SystemInitEventSchema = z.object({
  type: z.literal('system'),
  subtype: z.literal('init'),
  ...Logged,
  model: z.string(),
  cwd: z.string(),
  tools: z.array(z.string()),
  /** Set when the run continues one whose process died (the id of that run). */
  resumed_from: z.string().optional(),
});

export const TransitionEventSchema = z.object({
  type: z.literal('system'),
  subtype: z.literal('transition'),
  ...Logged,
  from: z.string(),
  to: z.string(),
  trigger: z.string(),
  /** The typed reason of the edge (src/machines/reasons.ts). */
  reason: z.string(),
  /** The turn the edge was taken in. */
  turn: z.number().int().nonnegative(),
  /** Cost of the run so far (USD). */
  cost_usd: z.number().nonnegative(),
});

export const ToolCallEventSchema = z.object({
  type: z.literal('system'),
  subtype: z.literal('tool_call'),
  ...Logged,
  tool_use_id: z.string(),
  name: z.string(),
  input: z.unknown(),
  read_only: z.boolean(),
});

export const ToolResultEventSchema = z.object({
  type: z.literal('system'),
  subtype: z.literal('tool_result'),
  ...Logged,
  tool_use_id: z.string(),
  name: z.string(),
  /** As `tool.finished` says: ok, error, denied, hook_blocked, invalid_input, unknown_tool, timeout, interrupted. */
  outcome: z.string(),
  is_error: z.boolean(),
  /** The result's content as the model gets it (a string or content blocks). */
  content: z.unknown(),
  duration_ms: z.number().nonnegative(),
});

export const PermissionEventSchema = z.object({
  type: z.literal('system'),
  subtype: z.literal('permission'),
  ...Logged,
  tool_use_id: z.string(),
  name: z.string(),
  decision: z.enum(['allow', 'deny', 'ask']),
  resolved: z.enum(['allow', 'deny']),
  /** Who decided (`<source> <behavior> <rule>`, `mode:<mode>`, `user`, …). */
  by: z.string(),
  message: z.string().optional(),
});

/** What the model is producing, before the response is whole (Anthropic's stream event shapes, abridged). */
export const RawStreamEventSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('content_block_delta'),
    delta: z.discriminatedUnion('type', [
      z.object({ type: z.literal('text_delta'), text: z.string() }),
      z.object({ type: z.literal('thinking_delta'), thinking: z.string() }),
    ]),
  }),
  z.object({
    type: z.literal('content_block_start'),
    content_block: z.object({ type: z.literal('tool_use'), id: z.string(), name: z.string() }),
  }),
]);

export const StreamEventSchema = z.object({
  type: z.literal('stream_event'),
  ...Envelope,
  event: RawStreamEventSchema,
  /** Always null: a sub-agent's events are in its own session. */
  parent_tool_use_id: z.null(),
});

export const AssistantEventSchema = z.object({
  type: z.literal('assistant'),
  ...Logged,
  message: z.object({ role: z.literal('assistant'), content: z.array(ContentBlockSchema) }),
  parent_tool_use_id: z.null(),
});

export const UserEventSchema = z.object({
  type: z.literal('user'),
  ...Logged,
  /** `prompt` for the user's own message; otherwise where the message came from (tool results, a hook, …). */
  origin: z.string(),
  message: z.object({
    role: z.literal('user'),
    content: z.union([z.string(), z.array(ContentBlockSchema)]),
  }),
  parent_tool_use_id: z.null(),
});

export const ResultEventSchema = z.object({
  type: z.literal('result'),
  /** As the SDK names them: `success`, `error_max_turns`, `error_max_budget_usd`, `error_during_execution`; and `aborted`, `paused`. */
  subtype: z.string(),
  ...Logged,
  status: z.enum(['completed', 'failed', 'aborted', 'paused']),
  /** The terminal reason of the chart (`end_turn`, `max_turns_reached`, `aborted`, …). */
  reason: z.string(),
  is_error: z.boolean(),
  num_turns: z.number().int().nonnegative(),
  /** The last assistant message's text. */
  result: z.string(),
  usage: UsageSchema,
  total_cost_usd: z.number().nonnegative(),
  error: z.string().optional(),
});

export const SessionEventSchema = z.union([
  SystemInitEventSchema,
  TransitionEventSchema,
  ToolCallEventSchema,
  ToolResultEventSchema,
  PermissionEventSchema,
  StreamEventSchema,
  AssistantEventSchema,
  UserEventSchema,
  ResultEventSchema,
]);

export type SessionEvent = z.infer<typeof SessionEventSchema>;
export type ResultEvent = z.infer<typeof ResultEventSchema>;
export type TransitionEvent = z.infer<typeof TransitionEventSchema>;

/** What `streamRun` needs of a session (kept narrow so the session's internals stay its own). */
export interface StreamSource<R> {
  readonly id: string;
  readonly cwd: string;
  tools(): readonly string[];
  onRecord(listener: RecordListener): () => void;
  onStreamEvent(listener: (e: ModelStreamEvent) => void): () => void;
  submit(): Promise<R>;
  abort(reason: string): void;
}

/**
 * Runs `source.submit()` and yields its events as they happen; the generator's return value is
 * the run's result. Leaving the loop early (`break`, `return()`) aborts the run and waits for it
 * to end, so the log is closed properly either way. A run that throws (bad usage, a busy
 * session) throws from the iterator after the events it had.
 */
export async function* streamRun<R>(source: StreamSource<R>): AsyncGenerator<SessionEvent, R, undefined> {
  const queue: SessionEvent[] = [];
  let head = 0;
  let wake: (() => void) | null = null;
  const push = (e: SessionEvent) => {
    queue.push(e);
    const w = wake;
    wake = null;
    w?.();
  };
  // Only the records of the run this call starts: a dead run closed first ends before it.
  let runId: string | null = null;
  const offRecord = source.onRecord((r, state) => {
    if (r.type === 'run.started') runId = r.run;
    if (runId === null || r.run !== runId) return;
    const e = sessionEventOf(r, state, source);
    if (e) push(e);
  });
  const offStream = source.onStreamEvent((e) => {
    if (runId === null) return;
    const event = rawEventOf(e);
    if (event)
      push({ type: 'stream_event', session_id: source.id, run_id: runId, event, parent_tool_use_id: null });
  });
  let settled = false;
  let outcome: { ok: true; value: R } | { ok: false; error: unknown } | null = null;
  const done = source.submit().then(
    (value) => {
      outcome = { ok: true, value };
    },
    (error: unknown) => {
      outcome = { ok: false, error };
    },
  );
  void done.finally(() => {
    settled = true;
    const w = wake;
    wake = null;
    w?.();
  });
  try {
    for (;;) {
      while (head < queue.length) {
        const e = queue[head]!;
        // Let go of what was yielded: a long run's deltas are not all held until its end.
        queue[head++] = undefined as unknown as SessionEvent;
        yield e;
      }
      if (settled) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
    const o = outcome as { ok: true; value: R } | { ok: false; error: unknown } | null;
    if (!o || !o.ok) throw o?.error;
    return o.value;
  } finally {
    if (!settled) {
      source.abort('the stream was closed by its reader');
      await done;
    }
    offRecord();
    offStream();
  }
}

function rawEventOf(e: ModelStreamEvent): z.infer<typeof RawStreamEventSchema> | null {
  if (e.type === 'text') return { type: 'content_block_delta', delta: { type: 'text_delta', text: e.text } };
  if (e.type === 'thinking')
    return { type: 'content_block_delta', delta: { type: 'thinking_delta', thinking: e.text } };
  if (e.type === 'tool_use_start')
    return { type: 'content_block_start', content_block: { type: 'tool_use', id: e.id, name: e.name } };
  return null;
}

/** The event a record becomes, or null for records the stream does not show (model requests, hooks, …). */
export function sessionEventOf(
  r: LogRecord,
  state: SessionState,
  source: { readonly id: string; readonly cwd: string; tools(): readonly string[] },
): SessionEvent | null {
  const base = { session_id: source.id, run_id: r.run ?? '', seq: r.seq };
  switch (r.type) {
    case 'run.started':
      return {
        type: 'system',
        subtype: 'init',
        ...base,
        model: r.data.config.model,
        cwd: state.cwd ?? source.cwd,
        tools: [...source.tools()],
        ...(r.data.resumedFrom ? { resumed_from: r.data.resumedFrom } : {}),
      };
    case 'transition': {
      const run = state.currentRun;
      return {
        type: 'system',
        subtype: 'transition',
        ...base,
        ...r.data,
        // The state is already past the edge: the turn it was taken in (src/store/turns.ts).
        turn: run ? Math.max(0, run.turns - (NEW_TURN_REASONS.has(r.data.reason) ? 1 : 0)) : 0,
        cost_usd: run?.usage.costUsd ?? 0,
      };
    }
    case 'tool.started':
      return {
        type: 'system',
        subtype: 'tool_call',
        ...base,
        tool_use_id: r.data.toolUseId,
        name: r.data.name,
        input: state.toolsInFlight.get(r.data.toolUseId)?.input ?? startedInput(state, r),
        read_only: r.data.readOnly,
      };
    case 'tool.finished':
      return {
        type: 'system',
        subtype: 'tool_result',
        ...base,
        tool_use_id: r.data.toolUseId,
        name: r.data.name,
        outcome: r.data.outcome,
        is_error: r.data.result.isError,
        content: r.data.result.content,
        duration_ms: r.data.durationMs,
      };
    case 'permission.decided':
      return {
        type: 'system',
        subtype: 'permission',
        ...base,
        tool_use_id: r.data.toolUseId,
        name: r.data.name,
        decision: r.data.decision,
        resolved: r.data.resolved,
        by: r.data.by,
        ...(r.data.message !== undefined ? { message: r.data.message } : {}),
      };
    case 'user.message':
      return userEvent(base, r.data.message, 'prompt');
    case 'message.appended': {
      const message = state.messages.last();
      if (!message) return null;
      if (message.role === 'assistant')
        return {
          type: 'assistant',
          ...base,
          message: { role: 'assistant', content: message.content as z.infer<typeof ContentBlockSchema>[] },
          parent_tool_use_id: null,
        };
      return userEvent(base, message, r.data.origin);
    }
    case 'run.ended':
      return resultEvent(base, r.data, state);
    default:
      return null;
  }
}

function userEvent(
  base: z.infer<z.ZodObject<typeof Logged>>,
  message: Message,
  origin: string,
): SessionEvent {
  return {
    type: 'user',
    ...base,
    origin,
    message: { role: 'user', content: message.content as string | z.infer<typeof ContentBlockSchema>[] },
    parent_tool_use_id: null,
  };
}

const SUBTYPES: Record<string, string> = {
  max_turns_reached: 'error_max_turns',
  budget_exhausted: 'error_max_budget_usd',
};

function resultEvent(
  base: z.infer<z.ZodObject<typeof Logged>>,
  d: { status: ResultEvent['status']; reason: string; turns: number; usage: Usage; error?: string },
  state: SessionState,
): ResultEvent {
  const last = state.messages.last();
  const subtype =
    d.status === 'completed'
      ? 'success'
      : d.status === 'aborted' || d.status === 'paused'
        ? d.status
        : (SUBTYPES[d.reason] ?? 'error_during_execution');
  return {
    type: 'result',
    subtype,
    ...base,
    status: d.status,
    reason: d.reason,
    is_error: d.status !== 'completed',
    num_turns: d.turns,
    result: last?.role === 'assistant' ? textOf(last.content) : '',
    usage: d.usage,
    total_cost_usd: d.usage.costUsd,
    ...(d.error ? { error: d.error } : {}),
  };
}
