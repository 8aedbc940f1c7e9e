import { z } from 'zod';
import { messageOf } from '../lib/errors.ts';
import { nestedDeeperThan } from '../lib/jsonDepth.ts';
import type { HookJSONOutput } from './types.ts';

/**
 * A hook's output is untrusted input: a project's settings file may name any script. It is
 * bounded (stdout and stderr are capped where they are read, context and reasons here),
 * parsed without recursion past a depth limit, and a shape that is not a hook answer is a
 * non-blocking error naming the hook, never a decision.
 */

/** Claude Code caps what a hook injects into the context at 10 000 characters. */
export const MAX_CONTEXT_CHARS = 10_000;
/** Reasons (stderr of exit 2, a block's reason) go to the model too: the same cap. */
export const MAX_REASON_CHARS = 10_000;
/**
 * JSON nested deeper than this is refused before it is parsed or walked: no hook answer needs
 * more (an `updatedInput` is a tool input; the runtime's general limit is MAX_JSON_DEPTH).
 */
export const MAX_HOOK_JSON_DEPTH = 64;

/** `s`, cut to `max` characters with a note saying how much was cut. */
export function bounded(s: string, max: number): string {
  if (s.length <= max) return s;
  return `${s.slice(0, max)}… [${s.length - max} more characters cut]`;
}

export function clip(s: string, n = 500): string {
  const t = s.trim();
  return t.length > n ? `${t.slice(0, n)}…` : t;
}

/** How deep `text` nests arrays and objects, counted without parsing (strings skipped). */
export function jsonDepth(text: string, stopAt = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      depth++;
      if (depth > max) {
        max = depth;
        if (max > stopAt) return max;
      }
    } else if (c === 125 /* } */ || c === 93 /* ] */) depth--;
  }
  return max;
}

const opt = <T extends z.ZodType>(t: T) => t.nullable().optional();

const PermissionRequestDecision = z.looseObject({
  behavior: z.enum(['allow', 'deny']),
  updatedInput: z.unknown().optional(),
  updatedPermissions: z.array(z.unknown()).optional(),
  message: opt(z.string()),
  interrupt: opt(z.boolean()),
});

const OutputSchema = z.looseObject({
  continue: opt(z.boolean()),
  stopReason: opt(z.string()),
  suppressOutput: opt(z.boolean()),
  systemMessage: opt(z.string()),
  decision: opt(z.enum(['block', 'approve', 'allow', 'deny'])),
  reason: opt(z.string()),
  hookSpecificOutput: opt(
    z.looseObject({
      hookEventName: opt(z.string()),
      permissionDecision: opt(z.enum(['allow', 'deny', 'ask', 'defer'])),
      permissionDecisionReason: opt(z.string()),
      updatedInput: z.unknown().optional(),
      additionalContext: opt(z.string()),
      decision: opt(PermissionRequestDecision),
    }),
  ),
});

export type ParsedOutput =
  | { kind: 'empty' }
  /** Not JSON: context for the events whose plain stdout is context, ignored by the others. */
  | { kind: 'text'; text: string }
  | { kind: 'json'; value: HookJSONOutput }
  | { kind: 'invalid'; error: string };

/**
 * Reads stdout as Claude Code does: empty is no answer; text that starts with `{` must be a
 * valid JSON hook answer (otherwise an error); anything else is plain text.
 */
export function parseHookStdout(stdout: string, event: string): ParsedOutput {
  const text = stdout.trim();
  if (text === '') return { kind: 'empty' };
  if (!text.startsWith('{')) return { kind: 'text', text };
  if (jsonDepth(text, MAX_HOOK_JSON_DEPTH) > MAX_HOOK_JSON_DEPTH)
    return { kind: 'invalid', error: `printed JSON nested deeper than ${MAX_HOOK_JSON_DEPTH} levels` };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return { kind: 'invalid', error: `printed invalid JSON on stdout (${messageOf(e)}): ${clip(text, 200)}` };
  }
  return validateOutput(json, event);
}

/** An in-process hook's answer: the same checks as a command's JSON (it is turned into text first). */
export function parseCallbackAnswer(value: unknown, event: string): ParsedOutput {
  if (value === undefined || value === null) return { kind: 'empty' };
  if (nestedDeeperThan(value, MAX_HOOK_JSON_DEPTH))
    return { kind: 'invalid', error: `answered JSON nested deeper than ${MAX_HOOK_JSON_DEPTH} levels` };
  let text: string;
  try {
    text = JSON.stringify(value);
  } catch (e) {
    return { kind: 'invalid', error: `answered a value that is not JSON (${messageOf(e)})` };
  }
  if (text === undefined) return { kind: 'invalid', error: 'answered a value that is not JSON' };
  return validateOutput(JSON.parse(text), event);
}

function validateOutput(json: unknown, event: string): ParsedOutput {
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    return { kind: 'invalid', error: 'answered JSON that is not an object' };
  const parsed = OutputSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const at = issue?.path.length ? issue.path.join('.') : '(output)';
    return {
      kind: 'invalid',
      error: `answered an invalid hook output: ${at}: ${issue?.message ?? 'invalid'}`,
    };
  }
  const named = parsed.data.hookSpecificOutput?.hookEventName;
  if (named && named !== event)
    return {
      kind: 'invalid',
      error: `answered hookSpecificOutput for ${named}, but the event is ${event}`,
    };
  return { kind: 'json', value: withoutNulls(parsed.data) as HookJSONOutput };
}

/** JSON null where a field is optional means "not given". */
function withoutNulls(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    if (v === null) continue;
    out[k] =
      k === 'hookSpecificOutput' || (k === 'decision' && typeof v === 'object')
        ? withoutNulls(v as Record<string, unknown>)
        : v;
  }
  return out;
}
