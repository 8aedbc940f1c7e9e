/**
 * The hook events reloop fires, as Claude Code names and documents them (docs/claude-code.md,
 * "Hooks", says when each one fires here and what its output can do).
 */
export const HOOK_EVENTS = [
  'SessionStart',
  'UserPromptSubmit',
  'PreToolUse',
  'PermissionRequest',
  'PostToolUse',
  'PostToolUseFailure',
  'Notification',
  'SubagentStart',
  'SubagentStop',
  'Stop',
  'PreCompact',
  'SessionEnd',
] as const;

export type HookEvent = (typeof HOOK_EVENTS)[number];

export function isHookEvent(name: string): name is HookEvent {
  return (HOOK_EVENTS as readonly string[]).includes(name);
}

/**
 * Claude Code events this runtime has no moment for (no teams, worktrees, file watching, MCP
 * elicitation, …). A settings file naming one gets a warning that says so, never silence.
 */
export const EVENTS_NOT_FIRED: ReadonlySet<string> = new Set([
  'Setup',
  'UserPromptExpansion',
  'PermissionDenied',
  'PostToolBatch',
  'MessageDisplay',
  'TaskCreated',
  'TaskCompleted',
  'StopFailure',
  'TeammateIdle',
  'InstructionsLoaded',
  'ConfigChange',
  'CwdChanged',
  'DirectoryAdded',
  'FileChanged',
  'WorktreeCreate',
  'WorktreeRemove',
  'PostCompact',
  'PreModelSwitch',
  'PostModelSwitch',
  'Elicitation',
  'ElicitationResult',
]);

/**
 * The input field each event's matcher is compared with; null where Claude Code ignores matchers
 * (UserPromptSubmit and Stop always fire).
 */
export const MATCHER_FIELD: Record<HookEvent, string | null> = {
  SessionStart: 'source',
  UserPromptSubmit: null,
  PreToolUse: 'tool_name',
  PermissionRequest: 'tool_name',
  PostToolUse: 'tool_name',
  PostToolUseFailure: 'tool_name',
  Notification: 'notification_type',
  SubagentStart: 'agent_type',
  SubagentStop: 'agent_type',
  Stop: null,
  PreCompact: 'trigger',
  SessionEnd: 'reason',
};

/** Claude Code's default for a command hook: 10 minutes. */
export const DEFAULT_TIMEOUT_S = 600;
/** SessionEnd hooks get 1.5 s unless they set their own timeout, which is capped at 60 s. */
export const SESSION_END_TIMEOUT_S = 1.5;
export const SESSION_END_MAX_TIMEOUT_S = 60;

/** The timeout a hook runs with, in ms: its own, or the event's default. */
export function timeoutMsOf(event: HookEvent, timeoutS: number | undefined): number {
  if (event === 'SessionEnd')
    return Math.min(timeoutS ?? SESSION_END_TIMEOUT_S, SESSION_END_MAX_TIMEOUT_S) * 1000;
  return (timeoutS ?? DEFAULT_TIMEOUT_S) * 1000;
}

/** Where exit code 2's stderr goes, per event (Claude Code's "exit code 2 behavior per event"). */
export type ExitTwo =
  /** The action is blocked; stderr is the reason the model (or, for a prompt, the user) gets. */
  | 'blocks'
  /** The action already happened: stderr is shown to the model as feedback. */
  | 'feedback'
  /** Nothing to block and the model does not see it: stderr is shown to the user. */
  | 'user';

export const EXIT_TWO: Record<HookEvent, ExitTwo> = {
  SessionStart: 'user',
  UserPromptSubmit: 'blocks',
  PreToolUse: 'blocks',
  PermissionRequest: 'blocks',
  PostToolUse: 'feedback',
  PostToolUseFailure: 'feedback',
  Notification: 'user',
  SubagentStart: 'user',
  SubagentStop: 'blocks',
  Stop: 'blocks',
  PreCompact: 'blocks',
  SessionEnd: 'user',
};
