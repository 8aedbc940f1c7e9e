import { hasToolUse } from '../model/messages.ts';
import type { ImportedFrom, LogRecord, RecordData, RecordOf } from '../store/records.ts';
import { type Chart, chartOf, transitionKey } from '../viz/edgeCatalog.ts';
import type { Divergence, ReplayReport, VerifyOptions } from './verify.ts';

/**
 * Verify for imported sessions. An imported run was not driven by reloop's chart, so there is
 * nothing to re-drive: instead its path must be a walk on the chart — each transition an edge,
 * leaving the state the previous one reached — and each edge's trigger must match the fact
 * recorded before it (a `model.responded` for `xstate.done.actor.callModel`, a tool result for
 * every call before `xstate.done.actor.runTools`, …), its reason agreeing with that fact. The
 * first record where that fails is reported like a replay divergence. Runs reloop itself ran on
 * the session afterwards (a resume, a fork) are verified by re-driving, as always.
 */

export function importedFromOf(records: readonly LogRecord[]): ImportedFrom | null {
  const first = records[0];
  return first?.type === 'session.created' ? (first.data.importedFrom ?? null) : null;
}

type NativeVerify = (records: LogRecord[], options: VerifyOptions) => Promise<ReplayReport>;

class Nonconformance extends Error {
  constructor(readonly divergence: Divergence) {
    super(divergence.detail);
  }
}

export async function verifyImported(
  all: readonly LogRecord[],
  options: VerifyOptions,
  native: NativeVerify,
): Promise<ReplayReport> {
  const records = options.toSeq !== undefined ? all.filter((r) => r.seq <= options.toSeq!) : [...all];
  const imported = importedFromOf(records)!;
  const chart = chartOf(options.machine);
  const importedRuns = new Set<string>();
  const byRun = new Map<string, LogRecord[]>();
  for (const r of records) {
    if (r.type === 'run.started' && r.seq <= imported.records && r.run) importedRuns.add(r.run);
    if (!r.run || !importedRuns.has(r.run)) continue;
    const list = byRun.get(r.run);
    if (list) list.push(r);
    else byRun.set(r.run, [r]);
  }
  let transitions = 0;
  try {
    for (const run of byRun.values()) transitions += checkRun(chart, run);
  } catch (e) {
    if (!(e instanceof Nonconformance)) throw e;
    return {
      ok: false,
      records: records.length,
      transitions,
      runs: importedRuns.size,
      divergence: e.divergence,
    };
  }
  const rest = nativeRecords(records, importedRuns);
  const hasNative = rest.some((r) => r.type === 'run.started');
  if (!hasNative) {
    return { ok: true, records: records.length, transitions, runs: importedRuns.size, divergence: null };
  }
  const report = await native(rest, { ...(options.machine ? { machine: options.machine } : {}) });
  return {
    ok: report.ok,
    records: records.length,
    transitions: transitions + report.transitions,
    runs: importedRuns.size + report.runs,
    divergence: report.divergence,
  };
}

/**
 * The log as the native verifier should see it: imported runs become history (their records
 * fold into the state the first native run starts from; without their run.started/run.ended
 * nothing of them is re-driven).
 */
function nativeRecords(records: readonly LogRecord[], importedRuns: ReadonlySet<string>): LogRecord[] {
  const out: LogRecord[] = [];
  for (const r of records) {
    if (r.type === 'session.created') {
      const { importedFrom: _, ...data } = r.data;
      out.push({ ...r, data });
      continue;
    }
    const importedEdge =
      (r.type === 'run.started' || r.type === 'run.ended') && r.run && importedRuns.has(r.run);
    if (!importedEdge) out.push(r);
  }
  return out;
}

interface WalkContext {
  /** tool_use ids of the response that sent the run to its tools. */
  toolUses: string[];
  aborted: boolean;
}

function checkRun(chart: Chart, run: readonly LogRecord[]): number {
  const edges = new Set(chart.edges.map((e) => e.key));
  const finals = new Set(chart.states.filter((s) => s.final).map((s) => s.id));
  const ctx: WalkContext = { toolUses: [], aborted: false };
  let state = chart.initial;
  let last: RecordData<'transition'> | null = null;
  let facts: LogRecord[] = [];
  let count = 0;
  const fail = (seq: number, expected: unknown, actual: unknown, detail: string): never => {
    throw new Nonconformance({ seq, expected, actual, detail });
  };
  for (const r of run) {
    if (r.type === 'run.started') continue;
    if (r.type === 'abort.requested') ctx.aborted = true;
    if (r.type === 'transition') {
      const t = r.data;
      const label = `${t.from} → ${t.to} (${t.reason}) on ${t.trigger}`;
      if (!edges.has(transitionKey(t)))
        fail(r.seq, 'an edge of the chart', t, `${label} is not an edge of the chart`);
      if (t.from !== state)
        fail(
          r.seq,
          { from: state },
          t,
          `the walk breaks: the run is in ${state}, the transition leaves ${t.from}`,
        );
      const problem = factProblem(t, facts, ctx);
      if (problem) fail(r.seq, problem.expected, problem.actual, `${label}: ${problem.detail}`);
      state = t.to;
      last = t;
      facts = [];
      count++;
      continue;
    }
    if (r.type === 'run.ended') {
      if (r.data.reason === 'interrupted') {
        if (finals.has(state))
          fail(
            r.seq,
            { state: 'not final' },
            { state },
            `the run was closed as interrupted in final state ${state}`,
          );
      } else if (!finals.has(state) || last?.reason !== r.data.reason) {
        fail(
          r.seq,
          { state: 'final', reason: last?.reason ?? null },
          { state, reason: r.data.reason },
          `the run ends ${r.data.reason} but its walk ${finals.has(state) ? `ended ${last?.reason}` : `is in ${state}`}`,
        );
      }
      continue;
    }
    facts.push(r);
  }
  return count;
}

interface Problem {
  expected: unknown;
  actual: unknown;
  detail: string;
}

function lastOf<T extends LogRecord['type']>(facts: readonly LogRecord[], type: T): RecordOf<T> | undefined {
  for (let i = facts.length - 1; i >= 0; i--) if (facts[i]!.type === type) return facts[i] as RecordOf<T>;
  return undefined;
}

const types = (facts: readonly LogRecord[]) => facts.map((f) => f.type);
const missing = (fact: string, facts: readonly LogRecord[]): Problem => ({
  expected: { fact },
  actual: { facts: types(facts) },
  detail: `no ${fact} recorded before it`,
});

/** Whether the facts recorded since the last transition account for this one (trigger and reason). */
function factProblem(
  t: RecordData<'transition'>,
  facts: readonly LogRecord[],
  ctx: WalkContext,
): Problem | null {
  const effect = /^xstate\.(done|error)\.actor\.(.+)$/.exec(t.trigger);
  if (!effect)
    return { expected: 'an effect outcome', actual: t.trigger, detail: 'no rule for this trigger' };
  const ok = effect[1] === 'done';
  const broken = facts.some((f) => f.type === 'actor.failed');
  if (!ok && t.reason === 'runtime_error') return broken ? null : missing('actor.failed', facts);
  if (!ok && t.reason === 'aborted' && effect[2] !== 'callModel')
    return ctx.aborted ? null : missing('abort.requested', facts);
  switch (effect[2]) {
    case 'buildQuery':
      return null;
    case 'callModel':
      return ok ? responseProblem(t, facts, ctx) : failureProblem(t, facts, ctx);
    case 'runTools': {
      const finished = new Set(facts.flatMap((f) => (f.type === 'tool.finished' ? [f.data.toolUseId] : [])));
      const unanswered = ctx.toolUses.filter((id) => !finished.has(id));
      if (unanswered.length)
        return {
          expected: { toolFinished: ctx.toolUses },
          actual: { toolFinished: [...finished] },
          detail: `no tool.finished for ${unanswered.join(', ')}`,
        };
      if (t.reason === 'aborted' && !ctx.aborted) return missing('abort.requested', facts);
      return null;
    }
    case 'compact': {
      const c = lastOf(facts, 'compaction.finished');
      if (!c) return missing('compaction.finished', facts);
      return c.data.ok === ok
        ? null
        : mismatch(`a compaction that ${ok ? 'succeeded' : 'failed'}`, c.data.ok);
    }
    case 'backoff':
      return lastOf(facts, 'backoff.scheduled') ? null : missing('backoff.scheduled', facts);
    case 'stopChecks':
      return stopProblem(t, facts);
    default:
      return { expected: 'a known effect', actual: effect[2], detail: 'no rule for this trigger' };
  }
}

const mismatch = (expected: unknown, actual: unknown): Problem => ({
  expected,
  actual,
  detail: `the recorded fact does not match: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`,
});

function responseProblem(t: RecordData<'transition'>, facts: readonly LogRecord[], ctx: WalkContext) {
  const r = lastOf(facts, 'model.responded');
  if (!r || r.data.purpose !== 'turn') return missing('model.responded (turn)', facts);
  const { content, stopReason } = r.data.response;
  const tools = hasToolUse(content);
  ctx.toolUses = tools ? content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : [])) : [];
  const wants: Partial<Record<string, () => boolean>> = {
    tool_use_requested: () => tools,
    finish_requested: () => !tools,
    refused: () => stopReason === 'refusal',
    max_tokens_escalation: () => stopReason === 'max_tokens',
    max_tokens_recovery: () => stopReason === 'max_tokens',
    max_tokens_exhausted: () => stopReason === 'max_tokens',
    pause_turn_continuation: () => stopReason === 'pause_turn',
    max_turns_reached: () => stopReason === 'pause_turn',
    compact_retry: () => stopReason === 'model_context_window_exceeded',
    prompt_too_long: () => stopReason === 'model_context_window_exceeded',
  };
  const check = wants[t.reason];
  if (check && !check())
    return {
      expected: { reason: t.reason },
      actual: { stopReason, toolUse: tools },
      detail: `the response (stop_reason ${stopReason}, ${tools ? 'with' : 'without'} tool_use) does not lead to ${t.reason}`,
    };
  return null;
}

function failureProblem(t: RecordData<'transition'>, facts: readonly LogRecord[], ctx: WalkContext) {
  const f = lastOf(facts, 'model.failed');
  if (!f) return missing('model.failed', facts);
  const { kind, overloaded } = f.data.failure;
  const wants: Partial<Record<string, () => boolean>> = {
    aborted: () => kind === 'aborted' || ctx.aborted,
    transport_retry: () => kind === 'retryable',
    model_fallback: () => kind === 'retryable' && overloaded,
    compact_retry: () => kind === 'prompt_too_long',
    prompt_too_long: () => kind === 'prompt_too_long',
    model_error: () => kind === 'fatal' || kind === 'retryable',
  };
  const check = wants[t.reason];
  if (check && !check())
    return {
      expected: { reason: t.reason },
      actual: { kind, overloaded },
      detail: `a ${kind} failure does not lead to ${t.reason}`,
    };
  return null;
}

function stopProblem(t: RecordData<'transition'>, facts: readonly LogRecord[]): Problem | null {
  const decided = facts.flatMap((f) => (f.type === 'hook.decided' ? [f.data] : []));
  const stop = (d: string) => decided.some((h) => h.hook === 'Stop' && h.decision === d);
  const wants: Partial<Record<string, () => boolean>> = {
    stop_hook_prevented: () => stop('prevent'),
    stop_hook_continuation: () => stop('block'),
    stop_hook_block_limit: () => stop('block'),
    budget_continuation: () => decided.some((h) => h.hook === 'Budget' && h.decision === 'continue'),
    completed: () => !stop('block') && !stop('prevent'),
  };
  const check = wants[t.reason];
  if (check && !check())
    return {
      expected: { reason: t.reason },
      actual: { hooks: decided.map((h) => `${h.hook}:${h.decision}`) },
      detail: `the stop checks recorded (${decided.map((h) => `${h.hook} ${h.decision}`).join(', ') || 'none'}) do not lead to ${t.reason}`,
    };
  return null;
}
