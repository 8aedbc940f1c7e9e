import { type ContentBlock, type Message, StopReasonSchema, textOf } from '../../model/messages.ts';
import { parseBlocks, parseContent } from './contentBlocks.ts';
import type { RawUsage, TranscriptEvent } from './events.ts';

/**
 * What one Claude Code transcript line means (docs/import.md has the table). Pure: a parsed
 * JSON line in, events out — usually one; a line with content reloop cannot hold adds an
 * `unmapped` note for what was left out.
 */

/** Lines Claude Code writes for itself (UI, rewind, titles, queued input): counted, never mapped. */
const BOOKKEEPING_TYPES = new Set([
  'progress',
  'file-history-snapshot',
  'queue-operation',
  'summary',
  'ai-title',
  'custom-title',
  'agent-name',
  'last-prompt',
  'permission-mode',
  'attachment',
  'tag',
]);

/** `system` subtypes that only inform the person at the terminal. */
const BOOKKEEPING_SYSTEM = new Set(['turn_duration', 'informational', 'away_summary', 'local_command']);

/** Titles, lowest rank first: a title the person set beats the generated one, which beats `summary`. */
const TITLE_FIELDS: Record<string, [field: string, rank: number]> = {
  summary: ['summary', 1],
  'ai-title': ['aiTitle', 2],
  'custom-title': ['customTitle', 3],
};

/** User text Claude Code wraps around slash commands and `!` bash mode: history, not a prompt. */
const COMMAND_WRAPPER =
  /^\s*<(command-name|command-message|command-args|local-command-stdout|local-command-stderr|local-command-caveat|bash-input|bash-stdout|bash-stderr|user-memory-input)>/;
const INTERRUPTED = /^\[Request interrupted by user/;
const COMPACT_PREAMBLE = 'This session is being continued from a previous conversation';
const STOP_FEEDBACK = 'Stop hook feedback:';

export const UNMAPPED_TEXT_MAX = 2_000;

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const count = (v: unknown): number => Math.max(0, Math.round(num(v) ?? 0));

export function clipText(text: string, max = UNMAPPED_TEXT_MAX): string {
  return text.length > max ? `${text.slice(0, max)}… [${text.length - max} more characters]` : text;
}

/** The line's timestamp in ms, NaN when it has none (the reader fills it from a neighbour). */
export function timestampOf(line: Json): number {
  const t = line.timestamp;
  if (typeof t === 'string') return Date.parse(t);
  if (typeof t === 'number') return t;
  return Number.NaN;
}

function lineTypeOf(line: Json): string {
  const type = str(line.type) ?? '(no type)';
  const subtype = str(line.subtype);
  return subtype ? `${type}:${subtype}` : type;
}

export function classifyLine(line: Json, lineNo: number, rawText: () => string): TranscriptEvent[] {
  const at = timestampOf(line);
  const base = { line: lineNo, at };
  const unmapped = (why: string): TranscriptEvent => ({
    ...base,
    kind: 'unmapped',
    lineType: lineTypeOf(line),
    why,
    text: clipText(rawText()),
  });
  const type = line.type;
  switch (type) {
    case 'user':
      return classifyUser(line, base, unmapped);
    case 'assistant':
      return classifyAssistant(line, base, unmapped);
    case 'system':
      return classifySystem(line, base, unmapped);
    default: {
      if (typeof type === 'string' && BOOKKEEPING_TYPES.has(type)) return [bookkeeping(line, type, base)];
      return [unmapped(typeof type === 'string' ? 'unknown line type' : 'the line has no type')];
    }
  }
}

function bookkeeping(line: Json, type: string, base: { line: number; at: number }): TranscriptEvent {
  const event: TranscriptEvent = { ...base, kind: 'bookkeeping', lineType: type };
  const titleField = TITLE_FIELDS[type];
  if (titleField) {
    const text = str(line[titleField[0]]);
    if (text?.trim()) event.title = { text: text.trim(), rank: titleField[1] };
  }
  if (type === 'progress' && isObject(line.data)) {
    // A sub-agent's progress names its agent and the Task call that runs it.
    const agentId = str(line.data.agentId);
    const toolUseId = str(line.parentToolUseID) ?? str(line.toolUseID);
    if (agentId && toolUseId) event.agentLink = { agentId, toolUseId };
  }
  return event;
}

type Unmapped = (why: string) => TranscriptEvent;

function droppedNotes(dropped: string[], unmapped: Unmapped): TranscriptEvent[] {
  return dropped.map((why) => unmapped(why));
}

function classifyUser(line: Json, base: { line: number; at: number }, unmapped: Unmapped): TranscriptEvent[] {
  const message = line.message;
  if (!isObject(message)) return [unmapped('user line without a message')];
  const parsed = parseContent(message.content);
  if (!parsed) return [unmapped('user message content is neither a string nor a list of blocks')];
  const notes = droppedNotes(parsed.dropped, unmapped);
  const content = parsed.content;
  if (typeof content !== 'string' && content.some((b) => b.type === 'tool_result')) {
    return [{ ...base, kind: 'toolResults', blocks: content, agentIds: agentIdsOf(line, content) }, ...notes];
  }
  if (typeof content !== 'string' && content.length === 0) {
    return notes.length ? notes : [unmapped('user message with no content')];
  }
  const msg: Message = { role: 'user', content };
  const text = textOf(content);
  if (line.isCompactSummary === true || text.startsWith(COMPACT_PREAMBLE)) {
    return [{ ...base, kind: 'compactSummary', message: msg, text }, ...notes];
  }
  if (INTERRUPTED.test(text)) return [{ ...base, kind: 'interrupt', message: msg }, ...notes];
  if (text.startsWith(STOP_FEEDBACK)) {
    const reason = text.slice(STOP_FEEDBACK.length).trim();
    return [{ ...base, kind: 'stopFeedback', message: msg, reason }, ...notes];
  }
  if (line.isMeta === true || COMMAND_WRAPPER.test(text)) {
    return [{ ...base, kind: 'userMeta', message: msg }, ...notes];
  }
  return [{ ...base, kind: 'prompt', message: msg, text }, ...notes];
}

/** A Task call's result names the sub-agent that ran it (`toolUseResult.agentId`). */
function agentIdsOf(line: Json, content: ContentBlock[]): [string, string][] {
  const result = line.toolUseResult;
  const agentId = isObject(result) ? str(result.agentId) : null;
  if (!agentId) return [];
  const first = content.find((b) => b.type === 'tool_result');
  return first?.type === 'tool_result' ? [[first.tool_use_id, agentId]] : [];
}

function usageOf(raw: unknown): RawUsage | null {
  if (!isObject(raw)) return null;
  return {
    inputTokens: count(raw.input_tokens),
    outputTokens: count(raw.output_tokens),
    cacheReadInputTokens: count(raw.cache_read_input_tokens),
    cacheCreationInputTokens: count(raw.cache_creation_input_tokens),
  };
}

function classifyAssistant(
  line: Json,
  base: { line: number; at: number },
  unmapped: Unmapped,
): TranscriptEvent[] {
  const message = line.message;
  if (!isObject(message)) return [unmapped('assistant line without a message')];
  const rawContent = message.content;
  const content = Array.isArray(rawContent)
    ? parseBlocks(rawContent)
    : typeof rawContent === 'string'
      ? { blocks: [{ type: 'text' as const, text: rawContent }], dropped: [] }
      : null;
  if (!content) return [unmapped('assistant message content is not a list of blocks')];
  const notes = droppedNotes(content.dropped, unmapped);
  const model = str(message.model) ?? 'unknown';
  if (line.isApiErrorMessage === true) {
    const text = textOf(content.blocks);
    const status = num(line.apiErrorStatus) ?? statusIn(text);
    return [{ ...base, kind: 'apiError', text, status, errorType: str(line.error) }, ...notes];
  }
  if (model === '<synthetic>') {
    return [{ ...base, kind: 'syntheticAssistant', message: { role: 'assistant', content: content.blocks } }];
  }
  if (content.blocks.length === 0)
    return notes.length ? notes : [unmapped('assistant message with no content')];
  const stop = StopReasonSchema.safeParse(message.stop_reason);
  return [
    {
      ...base,
      kind: 'assistant',
      // A line without an id is a response of its own.
      id: str(message.id) ?? str(line.uuid) ?? `line-${base.line}`,
      model,
      blocks: content.blocks,
      stopReason: stop.success ? stop.data : null,
      usage: usageOf(message.usage),
    },
    ...notes,
  ];
}

function statusIn(text: string): number | null {
  const m = /API Error:\s*(\d{3})\b/.exec(text);
  return m ? Number(m[1]) : null;
}

function classifySystem(
  line: Json,
  base: { line: number; at: number },
  unmapped: Unmapped,
): TranscriptEvent[] {
  const subtype = str(line.subtype);
  switch (subtype) {
    case 'compact_boundary': {
      const meta = isObject(line.compactMetadata) ? line.compactMetadata : {};
      return [
        {
          ...base,
          kind: 'compactBoundary',
          trigger: str(meta.trigger),
          preTokens: num(meta.preTokens),
          postTokens: num(meta.postTokens),
        },
      ];
    }
    case 'stop_hook_summary': {
      const infos = Array.isArray(line.hookInfos) ? line.hookInfos : [];
      const errors = Array.isArray(line.hookErrors) ? line.hookErrors : [];
      return [
        {
          ...base,
          kind: 'stopHookSummary',
          prevented: line.preventedContinuation === true,
          stopReason: str(line.stopReason) || null,
          commands: infos.map((h) => (isObject(h) ? str(h.command) : null)).filter((c): c is string => !!c),
          errors: errors.map((e) => (typeof e === 'string' ? e : JSON.stringify(e))),
          durationMs: infos.reduce((sum: number, h) => sum + (isObject(h) ? count(h.durationMs) : 0), 0),
        },
      ];
    }
    case 'api_error': {
      const error = isObject(line.error) ? line.error : {};
      const inner = isObject(error.error) ? error.error : {};
      const innerError = isObject(inner.error) ? inner.error : {};
      return [
        {
          ...base,
          kind: 'apiRetry',
          status: num(error.status) ?? num(inner.status),
          message:
            str(error.message) ??
            str(inner.message) ??
            str(innerError.message) ??
            str(line.content) ??
            'API error (the transcript does not say which)',
          retryInMs: num(line.retryInMs),
          attempt: num(line.retryAttempt),
          maxRetries: num(line.maxRetries),
        },
      ];
    }
    default:
      if (subtype && BOOKKEEPING_SYSTEM.has(subtype)) return [bookkeeping(line, `system:${subtype}`, base)];
      return [unmapped(subtype ? 'unknown system subtype' : 'system line without a subtype')];
  }
}
