import { z } from 'zod';
import { messageOf } from '../lib/errors.ts';
import { childEnv } from '../lib/secrets.ts';
import { type GroupRunResult, runInProcessGroup } from '../tools/processGroup.ts';
import type { PermissionRequest, PreToolUseDecision } from '../tools/types.ts';
import type { StopHook, StopHookInput, StopHookResult } from './types.ts';

/**
 * Command hooks, the Claude Code contract: `bash -c <command>` gets the event as JSON on stdin.
 * Exit 0 + empty stdout: no objection. Exit 2: block, stderr is the reason. Exit 0 + JSON on
 * stdout: a structured decision. Anything else (other exit codes, bad JSON, a hang past the
 * timeout, a crash) is an `error`: reported, never treated as a block, so a broken hook cannot
 * wedge the loop.
 */
export const HOOK_DEFAULT_TIMEOUT_MS = 60_000;
const MAX_HOOK_OUTPUT_CHARS = 1_000_000;

export interface CommandHookOptions {
  /** Where the command runs; defaults to the cwd of the event. */
  cwd?: string;
  timeoutMs?: number;
  /** SIGTERM → SIGKILL grace when a hung hook is killed. */
  killGraceMs?: number;
  /** Secret variables the hook may see after all (see src/lib/secrets.ts); none by default. */
  passEnv?: readonly string[];
}

export interface PreToolUseCommandHookOptions extends CommandHookOptions {
  /** PermissionRequest carries no session id; the session wiring the hook knows it. */
  sessionId?: string;
  /** Hook failures do not change the decision (it stays `continue`); this is where they are reported. */
  onError?: (message: string) => void;
}

const nullish = <T extends z.ZodType>(t: T) => t.nullable().optional();

const StopOutput = z.looseObject({
  continue: nullish(z.boolean()),
  stopReason: nullish(z.string()),
  decision: nullish(z.enum(['block', 'approve'])),
  reason: nullish(z.string()),
});

const PreToolUseOutput = z.looseObject({
  continue: nullish(z.boolean()),
  stopReason: nullish(z.string()),
  decision: nullish(z.enum(['approve', 'allow', 'block', 'deny'])),
  reason: nullish(z.string()),
  hookSpecificOutput: nullish(
    z.looseObject({
      hookEventName: z.string().optional(),
      permissionDecision: nullish(z.enum(['allow', 'deny', 'ask'])),
      permissionDecisionReason: nullish(z.string()),
      updatedInput: z.unknown().optional(),
    }),
  ),
});

type Parsed<T> = { ok: true; value: T | undefined } | { ok: false; error: string };

function clip(s: string, n = 500): string {
  const t = s.trim();
  return t.length > n ? `${t.slice(0, n)}…` : t;
}

function run(command: string, stdin: object, cwd: string, opts: CommandHookOptions, signal?: AbortSignal) {
  return runInProcessGroup(command, {
    cwd,
    timeoutMs: opts.timeoutMs ?? HOOK_DEFAULT_TIMEOUT_MS,
    signal,
    stdin: JSON.stringify(stdin),
    env: { ...childEnv(process.env, opts.passEnv), CLAUDE_PROJECT_DIR: cwd, RELOOP_PROJECT_DIR: cwd },
    maxOutputChars: MAX_HOOK_OUTPUT_CHARS,
    killGraceMs: opts.killGraceMs,
  });
}

/** Why the run itself failed (could not start, hung, aborted, crashed), or undefined if it exited 0/2. */
function runFailure(label: string, r: GroupRunResult, opts: CommandHookOptions): string | undefined {
  if (r.spawnError) return `${label} could not be started: ${r.spawnError.message}`;
  if (r.timedOut) {
    const s = (opts.timeoutMs ?? HOOK_DEFAULT_TIMEOUT_MS) / 1000;
    return `${label} did not finish within ${s} s and was killed`;
  }
  if (r.aborted) return `${label} was aborted`;
  if (r.exitCode === null) return `${label} was killed by signal ${r.signal ?? 'unknown'}`;
  if (r.exitCode !== 0 && r.exitCode !== 2) {
    const err = clip(r.stderr);
    return `${label} failed with exit code ${r.exitCode}${err ? `: ${err}` : ''}`;
  }
  return undefined;
}

function parseStdout<T>(label: string, stdout: string, schema: z.ZodType<T>): Parsed<T> {
  const text = stdout.trim();
  if (text === '') return { ok: true, value: undefined };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    const why = messageOf(e);
    return { ok: false, error: `${label} printed invalid JSON on stdout (${why}): ${clip(text, 200)}` };
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    return { ok: false, error: `${label} printed JSON that is not an object: ${clip(text, 200)}` };
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const at = issue?.path.length ? issue.path.join('.') : '(output)';
    return {
      ok: false,
      error: `${label} printed an invalid decision: ${at}: ${issue?.message ?? 'invalid'}`,
    };
  }
  return { ok: true, value: parsed.data };
}

export function createCommandStopHook(command: string, opts: CommandHookOptions = {}): StopHook {
  const label = `Stop hook \`${command}\``;
  return {
    name: command,
    async run(input: StopHookInput, signal: AbortSignal): Promise<StopHookResult> {
      const r = await run(command, input, opts.cwd ?? input.cwd, opts, signal);
      const failed = runFailure(label, r, opts);
      if (failed) return { decision: 'error', reason: failed };
      if (r.exitCode === 2) {
        return {
          decision: 'block',
          reason: clip(r.stderr, 10_000) || `${label} exited with code 2 (no reason given)`,
        };
      }
      const out = parseStdout(label, r.stdout, StopOutput);
      if (!out.ok) return { decision: 'error', reason: out.error };
      const v = out.value;
      if (v?.continue === false)
        return { decision: 'prevent', reason: v.stopReason || `${label} stopped the run` };
      if (v?.decision === 'block') {
        if (!v.reason) return { decision: 'error', reason: `${label} blocked without a reason` };
        return { decision: 'block', reason: v.reason };
      }
      return { decision: 'allow' };
    },
  };
}

export function createCommandPreToolUseHook(
  command: string,
  opts: PreToolUseCommandHookOptions = {},
): (request: PermissionRequest) => Promise<PreToolUseDecision> {
  const label = `PreToolUse hook \`${command}\``;
  const failed = (reason: string): PreToolUseDecision => {
    opts.onError?.(reason);
    return { decision: 'continue', reason: `hook error: ${reason}` };
  };
  return async (req) => {
    const cwd = opts.cwd ?? req.cwd;
    const stdin = {
      session_id: opts.sessionId ?? '',
      hook_event_name: 'PreToolUse',
      tool_name: req.tool.name,
      tool_input: req.input,
      tool_use_id: req.toolUseId,
      cwd,
    };
    const r = await run(command, stdin, cwd, opts);
    const failure = runFailure(label, r, opts);
    if (failure) return failed(failure);
    if (r.exitCode === 2) {
      return {
        decision: 'deny',
        reason: clip(r.stderr, 10_000) || `${label} exited with code 2 (no reason given)`,
      };
    }
    const out = parseStdout(label, r.stdout, PreToolUseOutput);
    if (!out.ok) return failed(out.error);
    const v = out.value;
    if (!v) return { decision: 'continue' };
    if (v.continue === false)
      return { decision: 'deny', reason: v.stopReason || `${label} stopped the call` };
    const specific = v.hookSpecificOutput;
    if (specific?.permissionDecision) {
      const reason = specific.permissionDecisionReason ?? undefined;
      if (specific.permissionDecision === 'deny')
        return { decision: 'deny', reason: reason || `denied by ${label}` };
      // `ask` has no counterpart here: let the permission policy (which may ask) decide.
      if (specific.permissionDecision === 'ask') return { decision: 'continue', reason };
      return { decision: 'allow', reason, updatedInput: specific.updatedInput };
    }
    if (v.decision === 'approve' || v.decision === 'allow')
      return { decision: 'allow', reason: v.reason ?? undefined };
    if (v.decision === 'block' || v.decision === 'deny') {
      return { decision: 'deny', reason: v.reason || `denied by ${label}` };
    }
    return { decision: 'continue' };
  };
}
