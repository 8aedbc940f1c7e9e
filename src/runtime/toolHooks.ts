import type { HookEvent } from '../hooks/events.ts';
import { stopReasonOf, strongestPreToolUse, toolCallNotes } from '../hooks/folds.ts';
import type { HookRun, HookRunner } from '../hooks/runner.ts';
import type {
  HookReport,
  PermissionRequest,
  PostToolHookVerdict,
  PreToolUseDecision,
  ToolHooks,
  ToolHookVerdict,
  ToolOutput,
} from '../tools/types.ts';

/**
 * The hooks around a tool call, as the orchestrator sees them (tools/types.ts `ToolHooks`):
 * the session's hooks of PreToolUse, PermissionRequest, Notification, PostToolUse and
 * PostToolUseFailure, together with the first hook API's `toolHooks` (which run beside them).
 * Every hook that ran is one record; an event with no matching hook runs nothing and logs
 * nothing (a `Bash` PreToolUse hook is not even mentioned for a `Read`).
 */
export function toolHooksFor(
  runner: HookRunner | null,
  legacy: ToolHooks | undefined,
  signal: AbortSignal,
  now: () => number,
): ToolHooks | undefined {
  if (!runner) return legacy;
  const has = (e: HookEvent) => runner.has(e);
  const run = (event: HookEvent, req: PermissionRequest, fields: Record<string, unknown>) =>
    runner.run(
      event,
      { tool_name: req.tool.name, tool_input: req.input, ...fields },
      { signal, toolUseId: req.toolUseId },
    );
  const hooks: ToolHooks = {};
  if (has('PreToolUse') || legacy?.preToolUse) {
    hooks.preToolUse = async (req) => {
      const [old, runs] = await Promise.all([
        legacyPreToolUse(legacy, req, now),
        has('PreToolUse') ? run('PreToolUse', req, { tool_use_id: req.toolUseId }) : [],
      ]);
      return preToolUseVerdict(old, runs);
    };
  }
  if (has('PermissionRequest')) {
    hooks.permissionRequest = async (req) => permissionVerdict(await run('PermissionRequest', req, {}));
  }
  if (has('Notification')) {
    hooks.notify = async (req, n) => {
      const runs = await runner.run(
        'Notification',
        { message: n.message, ...(n.title ? { title: n.title } : {}), notification_type: n.type },
        { signal, toolUseId: req.toolUseId },
      );
      return runs.length ? { decision: 'continue', ...afterVerdict(runs) } : undefined;
    };
  }
  if (has('PostToolUse') || legacy?.postToolUse) {
    hooks.postToolUse = async (req, output) => {
      const [old, runs] = await Promise.all([
        legacyPostToolUse(legacy, req, output, now),
        has('PostToolUse')
          ? run('PostToolUse', req, { tool_response: output.content, tool_use_id: req.toolUseId })
          : [],
      ]);
      const verdict = afterVerdict(runs);
      return {
        ...verdict,
        ...(old?.additionalContext ? { additionalContext: old.additionalContext } : {}),
        records: [...(old ? [old.record] : []), ...(verdict.records ?? [])],
      };
    };
  }
  if (has('PostToolUseFailure')) {
    hooks.postToolUseFailure = async (req, failure) =>
      afterVerdict(
        await run('PostToolUseFailure', req, {
          tool_use_id: req.toolUseId,
          error: failure.error,
          is_interrupt: failure.interrupted,
        }),
      );
  }
  return hooks;
}

type Answered = { decision: string; record: HookReport; updatedInput?: unknown; reason?: string };

/** The first hook API's PreToolUse answer, as one more hook run (logged as it always was). */
async function legacyPreToolUse(
  legacy: ToolHooks | undefined,
  req: PermissionRequest,
  now: () => number,
): Promise<Answered | null> {
  if (!legacy?.preToolUse) return null;
  const t0 = now();
  try {
    const d = await legacy.preToolUse(req);
    const record: HookReport = {
      hook: 'PreToolUse',
      decision: d.decision,
      ...(d.reason !== undefined ? { reason: d.reason } : {}),
      toolUseId: req.toolUseId,
      durationMs: now() - t0,
    };
    return { decision: d.decision, record, updatedInput: d.updatedInput, reason: d.reason };
  } catch (e) {
    const reason = (e as Error).message;
    return {
      decision: 'error',
      record: {
        hook: 'PreToolUse',
        decision: 'error',
        reason,
        toolUseId: req.toolUseId,
        durationMs: now() - t0,
      },
    };
  }
}

async function legacyPostToolUse(
  legacy: ToolHooks | undefined,
  req: PermissionRequest,
  output: ToolOutput,
  now: () => number,
): Promise<{ record: HookReport; additionalContext?: string } | null> {
  if (!legacy?.postToolUse) return null;
  const t0 = now();
  try {
    const extra = await legacy.postToolUse(req, output);
    const record: HookReport = {
      hook: 'PostToolUse',
      decision: 'continue',
      toolUseId: req.toolUseId,
      durationMs: now() - t0,
    };
    return { record, ...(extra?.additionalContext ? { additionalContext: extra.additionalContext } : {}) };
  } catch (e) {
    const reason = (e as Error).message;
    return {
      record: {
        hook: 'PostToolUse',
        decision: 'error',
        reason,
        toolUseId: req.toolUseId,
        durationMs: now() - t0,
      },
    };
  }
}

const answered = (r: HookRun): Answered => ({
  decision: r.record.decision,
  record: r.record as HookReport,
  updatedInput: r.answer.updatedInput,
  reason: r.record.reason,
});

/** A stop, then deny > ask > allow > no decision; the rewritten input of the deciding kind. */
function preToolUseVerdict(old: Answered | null, runs: readonly HookRun[]): PreToolUseDecision {
  const all = [...(old ? [old] : []), ...runs.map(answered)];
  const records = all.map((a) => a.record);
  const notes = toolCallNotes(runs.map((r) => r.record));
  const base = { records, ...(notes ? { notes } : {}) };
  const stop = stopReasonOf(records);
  if (stop !== undefined) return { ...base, decision: 'deny', stop };
  const top = strongestPreToolUse(all.filter((a) => a.decision !== 'error'));
  if (!top) return { ...base, decision: 'continue' };
  const decision = top.decision as PreToolUseDecision['decision'];
  const rewrite =
    decision === 'deny'
      ? undefined
      : all.find((a) => a.decision === decision && a.updatedInput !== undefined);
  return {
    ...base,
    decision,
    ...(top.reason !== undefined ? { reason: top.reason } : {}),
    ...(rewrite ? { updatedInput: rewrite.updatedInput } : {}),
    by: byOf('PreToolUse', top.record),
  };
}

function permissionVerdict(runs: readonly HookRun[]): ToolHookVerdict | undefined {
  if (runs.length === 0) return undefined;
  const records = runs.map((r) => r.record as HookReport);
  const notes = toolCallNotes(records);
  const base = { records, ...(notes ? { notes } : {}) };
  const stopper = runs.find((r) => r.record.decision === 'prevent');
  if (stopper)
    return {
      ...base,
      decision: 'deny',
      stop: stopper.record.reason ?? 'a hook stopped the run',
      by: byOf('PermissionRequest', stopper.record),
    };
  const top =
    runs.find((r) => r.record.decision === 'deny') ?? runs.find((r) => r.record.decision === 'allow');
  if (!top) return { ...base, decision: 'continue' };
  return {
    ...base,
    decision: top.record.decision as 'allow' | 'deny',
    ...(top.record.reason !== undefined ? { reason: top.record.reason } : {}),
    ...(top.record.decision === 'allow' && top.answer.updatedInput !== undefined
      ? { updatedInput: top.answer.updatedInput }
      : {}),
    by: byOf('PermissionRequest', top.record),
  };
}

/** After a call (or for a notification): feedback and context for its result, or a stop. */
function afterVerdict(runs: readonly HookRun[]): PostToolHookVerdict {
  const records = runs.map((r) => r.record as HookReport);
  const notes = toolCallNotes(records);
  const stop = stopReasonOf(records);
  return { records, ...(notes ? { notes } : {}), ...(stop !== undefined ? { stop } : {}) };
}

/** `permission.decided.by` for a hook's decision: `hook <event> <command>`. */
function byOf(event: string, record: HookReport): string {
  return `hook ${event} ${record.command ?? 'callback'}`;
}
