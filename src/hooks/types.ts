import type { HookReport } from '../tools/types.ts';
import type { HookEvent } from './events.ts';

/** What a Stop hook is told (the Claude Code hook contract, snake_case on the wire). */
export interface StopHookInput {
  session_id: string;
  hook_event_name: 'Stop';
  stop_hook_active: boolean;
  last_assistant_message: string;
  cwd: string;
}

/**
 * A Stop hook's answer. `block` keeps the loop going with the reason as feedback; `prevent`
 * ends the run (`stop_hook_prevented`); `error` (crash, timeout, bad output) is logged and
 * treated as allow, never as a block.
 */
export type StopHookResult =
  | { decision: 'allow' }
  | { decision: 'block'; reason: string }
  | { decision: 'prevent'; reason: string }
  | { decision: 'error'; reason: string };

/**
 * The first hook API (SessionOptions.stopHooks): objects run one after the other, before the
 * Stop hooks of `SessionOptions.hooks`; the first `prevent` ends the checks.
 */
export interface StopHook {
  /** Label for the log (`command` for command hooks). */
  readonly name: string;
  run(input: StopHookInput, signal: AbortSignal): Promise<StopHookResult>;
}

/**
 * What a hook is told, as Claude Code sends it on stdin: the common fields, then the event's own
 * (`tool_name`, `tool_input`, `prompt`, `source`, …; docs/claude-code.md lists them per event).
 */
export interface HookInput {
  session_id: string;
  transcript_path: string;
  cwd: string;
  permission_mode: string;
  hook_event_name: HookEvent;
  /** Inside a sub-agent: its session id and agent name. */
  agent_id?: string;
  agent_type?: string;
  [field: string]: unknown;
}

/** A hook's structured answer (exit 0 with JSON on stdout, or what a callback returns). */
export interface HookJSONOutput {
  continue?: boolean;
  stopReason?: string;
  suppressOutput?: boolean;
  systemMessage?: string;
  decision?: 'block' | 'approve' | 'allow' | 'deny';
  reason?: string;
  hookSpecificOutput?: {
    hookEventName?: string;
    permissionDecision?: 'allow' | 'deny' | 'ask' | 'defer';
    permissionDecisionReason?: string;
    updatedInput?: unknown;
    additionalContext?: string;
    decision?: {
      behavior: 'allow' | 'deny';
      updatedInput?: unknown;
      updatedPermissions?: unknown[];
      message?: string;
      interrupt?: boolean;
    };
    [field: string]: unknown;
  };
  [field: string]: unknown;
}

/**
 * An in-process hook, as the Claude Agent SDK declares them:
 * `hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [async (input, toolUseId, { signal }) => ({ … })] }] }`.
 * It answers what a command hook prints; nothing (undefined) is "no objection". A callback that
 * throws, or answers something that is not a valid hook output, is a non-blocking error.
 */
// biome-ignore lint/suspicious/noConfusingVoidType: a callback with nothing to say may return nothing
type NoAnswer = undefined | void;

export type HookCallback = (
  input: HookInput,
  toolUseId: string | undefined,
  options: { signal: AbortSignal },
) => Promise<HookJSONOutput | NoAnswer> | HookJSONOutput | NoAnswer;

/** A command hook as Claude Code's settings files write it; `timeout` in seconds. */
export interface CommandHookSpec {
  type: 'command';
  command: string;
  timeout?: number;
}

/** One matcher group of an event: which occurrences it matches, and what runs then. */
export interface HookMatcherGroup {
  matcher?: string;
  hooks: readonly (HookCallback | CommandHookSpec)[];
  /** Seconds, for the group's callbacks (a command hook has its own). */
  timeout?: number;
  /** Where the group came from: a settings source (`projectSettings`, …), `cliArg`, `session`. */
  source?: string;
  /** The settings file it was read from, for messages. */
  file?: string;
}

/** `SessionOptions.hooks`: per event, its matcher groups (Claude Code's and the SDK's shape). */
export type HooksOption = Partial<Record<HookEvent, readonly HookMatcherGroup[]>>;

/**
 * What one hook decided, as logged (`hook.decided`; src/store/records.ts holds the schema).
 * `decision`: `continue` (no objection), `allow`, `deny`, `ask`, `block`, `prevent` (continue:
 * false: the run stops), `error` (a non-blocking error: shown, logged, otherwise ignored).
 */
export type HookDecision = 'allow' | 'block' | 'prevent' | 'continue' | 'deny' | 'ask' | 'error';

/** One hook's answer as logged: the tools' HookReport, its event one of Claude Code's. */
export interface HookRecord extends HookReport {
  hook: HookEvent | 'Budget';
  decision: HookDecision;
}
