import { EXIT_TWO, type HookEvent } from './events.ts';
import { bounded, clip, MAX_CONTEXT_CHARS, MAX_REASON_CHARS, type ParsedOutput } from './output.ts';
import type { HookDecision, HookJSONOutput } from './types.ts';

/** How one hook's run ended, before the event gives it a meaning. */
export interface RawAnswer {
  /** A command hook's exit code; undefined for an in-process hook. */
  exitCode?: number | null;
  /** It could not be started, hung past its timeout, was killed, or (a callback) threw. */
  failure?: string;
  stderr: string;
  parsed: ParsedOutput;
}

/** What one hook decided, for the record, plus what only the live run needs. */
export interface HookAnswer {
  decision: HookDecision;
  reason?: string;
  /** Context for the model. */
  output?: string;
  systemMessage?: string;
  exitCode?: number | null;
  /** PreToolUse / PermissionRequest: the input the tool is to run with instead. */
  updatedInput?: unknown;
}

/** An event whose "no objection" is logged `allow` (the stop checks' vocabulary since v1). */
const stopLike = (event: HookEvent) => event === 'Stop' || event === 'SubagentStop';
/** Events whose plain stdout (exit 0, not JSON) is context for the model. */
const stdoutIsContext = (event: HookEvent) => event === 'UserPromptSubmit' || event === 'SessionStart';

/** Claude Code's exit-code contract, then its JSON contract, for one event. */
export function interpret(event: HookEvent, label: string, raw: RawAnswer): HookAnswer {
  const code = raw.exitCode !== undefined ? { exitCode: raw.exitCode } : {};
  if (raw.failure) return { decision: 'error', reason: raw.failure, ...code };
  if (raw.exitCode === 2) return { ...exitTwo(event, label, raw.stderr), ...code };
  if (raw.exitCode !== undefined && raw.exitCode !== 0) {
    const err = clip(raw.stderr.split('\n').find((l) => l.trim() !== '') ?? '');
    return {
      decision: 'error',
      reason: `${label} failed with exit code ${raw.exitCode}${err ? `: ${err}` : ''}`,
      ...code,
    };
  }
  const idle: HookDecision = stopLike(event) ? 'allow' : 'continue';
  switch (raw.parsed.kind) {
    case 'empty':
      return { decision: idle, ...code };
    case 'invalid':
      return { decision: 'error', reason: `${label} ${raw.parsed.error}`, ...code };
    case 'text':
      return stdoutIsContext(event)
        ? { decision: 'continue', output: bounded(raw.parsed.text, MAX_CONTEXT_CHARS), ...code }
        : { decision: idle, ...code };
    case 'json':
      return { ...fromJson(event, label, raw.parsed.value), ...code };
  }
}

function exitTwo(event: HookEvent, label: string, stderr: string): HookAnswer {
  const reason = bounded(stderr.trim(), MAX_REASON_CHARS) || `${label} exited with code 2 (no reason given)`;
  switch (EXIT_TWO[event]) {
    case 'blocks':
      return { decision: event === 'PreToolUse' || event === 'PermissionRequest' ? 'deny' : 'block', reason };
    case 'feedback':
      return { decision: 'block', reason };
    case 'user':
      return { decision: 'continue', reason };
  }
}

const text = (s: string | undefined, max: number) => (s ? bounded(s, max) : undefined);

function fromJson(event: HookEvent, label: string, v: HookJSONOutput): HookAnswer {
  const base: HookAnswer = { decision: stopLike(event) ? 'allow' : 'continue' };
  const systemMessage = text(v.systemMessage, MAX_CONTEXT_CHARS);
  if (systemMessage) base.systemMessage = systemMessage;
  // continue: false wins over any decision of the event.
  if (v.continue === false)
    return {
      ...base,
      decision: 'prevent',
      reason: text(v.stopReason, MAX_REASON_CHARS) ?? `${label} stopped the run`,
    };
  const specific = v.hookSpecificOutput;
  const context = text(specific?.additionalContext, MAX_CONTEXT_CHARS);
  if (context && event !== 'SessionEnd' && event !== 'PreCompact') base.output = context;
  const reason = text(v.reason, MAX_REASON_CHARS);
  switch (event) {
    case 'PreToolUse': {
      const why = text(specific?.permissionDecisionReason, MAX_REASON_CHARS) ?? reason;
      const legacy =
        v.decision === 'approve' || v.decision === 'allow'
          ? 'allow'
          : v.decision === 'block' || v.decision === 'deny'
            ? 'deny'
            : undefined;
      const said = specific?.permissionDecision ?? legacy;
      if (said === 'deny') return { ...base, decision: 'deny', reason: why || `denied by ${label}` };
      const updated = specific?.updatedInput !== undefined ? { updatedInput: specific.updatedInput } : {};
      if (said === 'defer')
        return {
          ...base,
          ...updated,
          reason: 'permissionDecision "defer" is not supported here: the normal permission flow applies',
        };
      if (said === 'allow' || said === 'ask')
        return { ...base, ...updated, decision: said, ...(why ? { reason: why } : {}) };
      return { ...base, ...updated };
    }
    case 'PermissionRequest': {
      const d = specific?.decision;
      if (!d) return base;
      if (d.behavior === 'allow')
        return {
          ...base,
          decision: 'allow',
          ...(d.updatedInput !== undefined ? { updatedInput: d.updatedInput } : {}),
        };
      const message = text(d.message ?? undefined, MAX_REASON_CHARS) ?? `denied by ${label}`;
      return { ...base, decision: d.interrupt ? 'prevent' : 'deny', reason: message };
    }
    case 'Stop':
    case 'SubagentStop':
      if (v.decision !== 'block') return base;
      if (!reason) return { decision: 'error', reason: `${label} blocked without a reason` };
      return { ...base, decision: 'block', reason };
    case 'UserPromptSubmit':
    case 'PostToolUse':
    case 'PostToolUseFailure':
    case 'PreCompact':
      if (v.decision !== 'block') return base;
      return { ...base, decision: 'block', reason: reason ?? `blocked by ${label}` };
    default:
      return base;
  }
}
