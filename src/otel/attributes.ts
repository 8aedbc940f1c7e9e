import type { Usage } from '../model/messages.ts';
import type { ModelFailure } from '../model/types.ts';
import { A, R } from './semconv.ts';
import type { Attributes, AttributeValue } from './spanData.ts';

/**
 * Usage in the conventions' terms. Anthropic's `input_tokens` leaves out the cached ones; the
 * conventions' `gen_ai.usage.input_tokens` counts them (input + cache read + cache creation).
 */
export function usageAttributes(usage: Usage, into: Attributes): void {
  into[A.inputTokens] = usage.inputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens;
  into[A.outputTokens] = usage.outputTokens;
  into[A.cacheReadTokens] = usage.cacheReadInputTokens;
  into[A.cacheCreationTokens] = usage.cacheCreationInputTokens;
  if (usage.costUsd > 0) into[R.costUsd] = usage.costUsd;
}

/**
 * A failed model call's `error.type`: the API's error type (`overloaded_error`,
 * `rate_limit_error`), else its HTTP status, else how the loop classified it.
 */
export function modelErrorType(f: ModelFailure): string {
  return f.errorType ?? (f.status !== undefined ? String(f.status) : f.kind);
}

/** Fields whose values are conversation content: on events only when content is opted in. */
const CONTENT_KEYS = new Set([
  'input',
  'output',
  'text',
  'content',
  'prompt',
  'stdout',
  'stderr',
  'additionalContext',
  'updatedInput',
]);

const snakeNames = new Map<string, string>();

function snake(key: string): string {
  let name = snakeNames.get(key);
  if (name === undefined) {
    name = key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    // Record fields are a small fixed set; anything past that is not worth remembering.
    if (snakeNames.size < 1_000) snakeNames.set(key, name);
  }
  return name;
}

/**
 * A record's data as event attributes: every top-level field with a primitive value (or a list
 * of strings), under its snake_case name, plus `seq`. Fields are read from whatever the record
 * holds, so a field added to a record type later shows up without a change here; content fields
 * only with `content` (then as JSON when they are not strings).
 */
export function eventAttributes(
  data: object,
  seq: number,
  content: ((v: unknown) => string) | null,
  omit?: ReadonlySet<string>,
): Attributes {
  const out: Attributes = {};
  for (const key in data) {
    const value = (data as Record<string, unknown>)[key];
    if (value === undefined || value === null || omit?.has(key)) continue;
    const name = snake(key);
    if (CONTENT_KEYS.has(key)) {
      if (content) out[name] = content(value);
      continue;
    }
    const v = primitive(value);
    if (v !== undefined) out[name] = v;
  }
  out.seq = seq;
  return out;
}

function primitive(value: unknown): AttributeValue | undefined {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : undefined;
    default:
      if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value as string[];
      return undefined;
  }
}
