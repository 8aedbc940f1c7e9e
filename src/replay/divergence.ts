import { sameJson } from '../lib/sameJson.ts';
import type { Message } from '../model/messages.ts';
import type { ModelRequest, ToolSpec } from '../model/types.ts';
import type { RecordedRequest } from './requests.ts';

/**
 * What differs first between a recorded session and the current code: `request` (a model request
 * — `path` names its part: `system`, `tools[lookupTicket].input_schema`, `messages[3].content[0]`,
 * `model`, `max_tokens`), `tool_result`, `permission`, `hook`, `transition`, `end`.
 */
export type DivergenceKind = 'request' | 'tool_result' | 'permission' | 'hook' | 'transition' | 'end';

/** The first divergence of a rerun: the recorded record's seq, the kind, where, and both values. */
export interface RerunDivergence {
  seq: number;
  kind: DivergenceKind;
  path: string;
  recorded: unknown;
  current: unknown;
}

/** One difference inside a value: where (a path from its root), and both sides there. */
export interface Difference {
  path: string;
  recorded: unknown;
  current: unknown;
}

/** The first place two JSON values differ (depth first, keys in order), or null when equal. */
export function firstDifference(recorded: unknown, current: unknown, path = ''): Difference | null {
  const stack: [unknown, unknown, string][] = [[recorded, current, path]];
  while (stack.length > 0) {
    const [a, b, at] = stack.pop()!;
    if (a === b || sameJson(a, b)) continue;
    const objects = typeof a === 'object' && typeof b === 'object' && a !== null && b !== null;
    if (!objects || Array.isArray(a) !== Array.isArray(b)) return { path: at, recorded: a, current: b };
    const next: [unknown, unknown, string][] = [];
    if (Array.isArray(a) && Array.isArray(b)) {
      const n = Math.max(a.length, b.length);
      for (let i = 0; i < n; i++) next.push([a[i], b[i], `${at}[${i}]`]);
    } else {
      const x = a as Record<string, unknown>;
      const y = b as Record<string, unknown>;
      const keys = [...new Set([...Object.keys(x), ...Object.keys(y)])];
      for (const k of keys) {
        if (x[k] === undefined && y[k] === undefined) continue;
        next.push([x[k], y[k], at === '' ? k : `${at}.${k}`]);
      }
    }
    // Depth first, in order: the first differing child is reported.
    for (let i = next.length - 1; i >= 0; i--) stack.push(next[i]!);
  }
  return null;
}

/** What earlier comparisons of one rerun found equal (see requestDifference). */
export interface RequestsSeen {
  /** The current and the recorded history of the last request compared, equal up to `checked`. */
  messages: readonly Message[] | null;
  recorded: readonly Message[] | null;
  checked: number;
  /** The current tool list last found equal to the recorded one (`recordedTools`). */
  tools: readonly ToolSpec[] | null;
  recordedTools: readonly ToolSpec[] | null;
}

export function requestsSeen(): RequestsSeen {
  return { messages: null, recorded: null, checked: 0, tools: null, recordedTools: null };
}

/**
 * Where the request the current code built first differs from the recorded one. `checked` counts
 * the leading messages an earlier comparison found equal, kept by the caller per rerun: a history
 * only grows between two requests of a run, so each message is compared once (flat per turn).
 */
export function requestDifference(
  recorded: RecordedRequest,
  recordedRequest: ModelRequest,
  current: ModelRequest,
  seen: RequestsSeen,
): Difference | null {
  if (recordedRequest.model !== current.model)
    return { path: 'model', recorded: recordedRequest.model, current: current.model };
  if ((recordedRequest.system ?? null) !== (current.system ?? null))
    return { path: 'system', recorded: recordedRequest.system ?? null, current: current.system ?? null };
  if (recorded.tools !== null && (seen.tools !== current.tools || seen.recordedTools !== recorded.tools)) {
    const d = toolsDifference(recordedRequest.tools, current.tools);
    if (d) return d;
    seen.tools = current.tools;
    seen.recordedTools = recorded.tools;
  }
  const a = recordedRequest.messages;
  const b = current.messages;
  // Messages already compared (the same objects as in the previous request) are not compared again.
  const prev = seen.messages;
  const prevRecorded = seen.recorded;
  const known = prev !== null && prevRecorded !== null ? Math.min(seen.checked, a.length, b.length) : 0;
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i];
    const y = b[i];
    if (x === y) continue;
    // Both sides hold the objects an earlier request compared equal (the memory's first message is new each time).
    if (i < known && prev![i] === y && prevRecorded![i] === x) continue;
    if (x === undefined || y === undefined)
      return { path: `messages[${i}]`, recorded: x ?? null, current: y ?? null };
    const d = firstDifference(x, y, `messages[${i}]`);
    if (d) return d;
  }
  seen.messages = b;
  seen.recorded = a;
  seen.checked = b.length;
  if (recordedRequest.maxTokens !== current.maxTokens)
    return { path: 'max_tokens', recorded: recordedRequest.maxTokens, current: current.maxTokens };
  return null;
}

/** Tools by name: a missing or added tool, then a changed one (`tools[name].input_schema`), then the order. */
function toolsDifference(recorded: readonly ToolSpec[], current: readonly ToolSpec[]): Difference | null {
  const now = new Map(current.map((t) => [t.name, t]));
  const before = new Map(recorded.map((t) => [t.name, t]));
  for (const t of recorded) {
    const c = now.get(t.name);
    if (!c) return { path: `tools[${t.name}]`, recorded: t, current: null };
    const d = firstDifference(t, c, `tools[${t.name}]`);
    if (d) return d;
  }
  for (const t of current)
    if (!before.has(t.name)) return { path: `tools[${t.name}]`, recorded: null, current: t };
  const order = (l: readonly ToolSpec[]) => l.map((t) => t.name);
  if (!sameJson(order(recorded), order(current)))
    return { path: 'tools', recorded: order(recorded), current: order(current) };
  return null;
}

const MAX_DIFF_LINES = 60;

/** Both values as indented JSON, line against line: `-` recorded, `+` current, two lines of context. */
export function readableDiff(recorded: unknown, current: unknown): string {
  const a = pretty(recorded);
  const b = pretty(current);
  const ops = lineDiff(a, b);
  const keep = new Set<number>();
  ops.forEach((op, i) => {
    if (op.kind !== ' ') for (let j = i - 2; j <= i + 2; j++) keep.add(j);
  });
  const out: string[] = [];
  let skipped = false;
  ops.forEach((op, i) => {
    if (!keep.has(i)) {
      if (!skipped) out.push('  …');
      skipped = true;
      return;
    }
    skipped = false;
    out.push(`${op.kind} ${op.line}`);
  });
  return (out.length > MAX_DIFF_LINES ? [...out.slice(0, MAX_DIFF_LINES), '  … (diff cut)'] : out).join('\n');
}

function pretty(v: unknown): string[] {
  if (v === undefined) return ['(nothing)'];
  const text = typeof v === 'string' ? v : JSON.stringify(v, null, 2);
  return text.split('\n');
}

/** A longest-common-subsequence line diff (values here are small: one message, one record). */
function lineDiff(a: string[], b: string[]): { kind: ' ' | '-' | '+'; line: string }[] {
  // Bounded: past a few thousand lines a plain "all removed, all added" is as readable.
  if (a.length * b.length > 4_000_000)
    return [
      ...a.map((line) => ({ kind: '-' as const, line })),
      ...b.map((line) => ({ kind: '+' as const, line })),
    ];
  const n = a.length;
  const m = b.length;
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const out: { kind: ' ' | '-' | '+'; line: string }[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      out.push({ kind: ' ', line: a[i]! });
      i++;
      j++;
    } else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) out.push({ kind: '-', line: a[i++]! });
    else out.push({ kind: '+', line: b[j++]! });
  }
  while (i < n) out.push({ kind: '-', line: a[i++]! });
  while (j < m) out.push({ kind: '+', line: b[j++]! });
  return out;
}
