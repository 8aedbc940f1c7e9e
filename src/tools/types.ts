import type { z } from 'zod';
import type { ContentBlock, Usage } from '../model/messages.ts';

/** What a tool learned about a file it read; kept in the session so Edit can refuse stale files. */
export interface FileReadFact {
  path: string;
  sha256: string;
  mtimeMs: number;
}

/** Read access to session facts a tool may need (files read so far). */
export interface ToolSessionView {
  readonly sessionId: string;
  fileRead(path: string): FileReadFact | undefined;
}

/**
 * What lives as long as one run and no longer: things a tool starts that outlast its call (a
 * background shell) belong to the run, are stopped when its signal aborts and ended when it ends.
 */
export interface RunScope {
  readonly runId: string;
  /** Aborted when the run is aborted. */
  readonly signal: AbortSignal;
  /** The run's instance of a resource, made on first use (one per key per run). */
  resource<T>(key: symbol, make: (scope: RunScope) => T): T;
  /** Called once when the run ends (after its last tool call, before `run.ended`). */
  onEnd(cleanup: () => Promise<void> | void): void;
}

export interface ToolContext {
  signal: AbortSignal;
  cwd: string;
  toolUseId: string;
  session: ToolSessionView;
  /** The run the call belongs to; absent where no run owns it (a re-run on resume, a bare batch). */
  run?: RunScope;
}

/** What a tool returns. Facts it produced (files read) travel with the result into the log. */
export interface ToolOutput {
  content: string | ContentBlock[];
  isError?: boolean;
  filesRead?: FileReadFact[];
  /** Model usage the tool spent (a sub-agent's calls): it counts towards the run's budget. */
  usage?: Usage;
  /**
   * The call is not finished: its sub-agent (this session) parked on approvals. The batch parks
   * with the call open, and the call is resumed (the same sub-agent) when the session is.
   */
  parkedOn?: string;
  /** A hook of the call said `continue: false` (SubagentStart): no further call runs, the run stops. */
  stopRun?: string;
}

export interface Tool<I = unknown> {
  readonly name: string;
  /** What the model is told about the tool: when to use it, what it returns. */
  readonly description: string;
  readonly inputSchema: z.ZodType<I>;
  /** Read-only tools may be re-run on resume after a crash; others get an "interrupted" result. */
  readonly isReadOnly: boolean;
  /** Consecutive concurrency-safe calls run in parallel (at most 10 at once). */
  isConcurrencySafe(input: I): boolean;
  /** Per-call timeout; the orchestrator aborts the call's signal and reports an error past it. */
  readonly timeoutMs?: number;
  /**
   * The input schema the model is shown, as JSON Schema, when it is not derived from
   * `inputSchema` (an MCP server's tool: the server's own schema, sent as it gave it).
   */
  readonly jsonSchema?: Record<string, unknown>;

  call(input: I, ctx: ToolContext): Promise<ToolOutput>;
}

// biome-ignore lint/suspicious/noExplicitAny: a registry holds tools of every input type
export type AnyTool = Tool<any>;

export type PermissionBehavior = 'allow' | 'deny' | 'ask';

export interface PermissionRequest {
  tool: AnyTool;
  input: unknown;
  toolUseId: string;
  cwd: string;
}

export type PermissionResult =
  | { behavior: 'allow'; updatedInput?: unknown; by?: string }
  | { behavior: 'deny'; message: string; by?: string }
  | { behavior: 'ask'; message?: string; by?: string };

/** The policy: decides allow / deny / ask for one call (rules, modes, or a user callback). */
export type CanUseTool = (request: PermissionRequest) => Promise<PermissionResult> | PermissionResult;

/**
 * A person's answer to an ask: yes or no, or no with the reason the model is told (the
 * interactive session's "no, because …").
 */
export type AskAnswer = boolean | { allow: boolean; message?: string };

/** Asked when the policy says `ask`. Absent in non-interactive runs: `ask` then means deny. */
export type AskUser = (request: PermissionRequest, message: string | undefined) => Promise<AskAnswer>;

/**
 * One hook's answer as the log keeps it (`hook.decided`; the hooks module makes these). Tools
 * pass them through to the log untouched, in the order given.
 */
export interface HookReport {
  /** The event (`PreToolUse`, …). */
  hook: string;
  /**
   * `continue` (no decision), `allow`, `deny`, `ask`, `block`, `prevent` (continue: false: the
   * run stops), `error` (a non-blocking error: shown, logged, otherwise ignored).
   */
  decision: 'allow' | 'block' | 'prevent' | 'continue' | 'deny' | 'ask' | 'error';
  /** Why: the block or deny reason, the stop reason, the error. */
  reason?: string;
  /** The command, or `callback <name>` for an in-process hook. */
  command?: string;
  matcher?: string;
  /** `projectSettings`, …, `cliArg`, `session`. */
  source?: string;
  toolUseId?: string;
  /** What of the hook's output reached the model as context. */
  output?: string;
  /** A message for the user. */
  systemMessage?: string;
  /** A command hook's exit code (null: killed, timed out or never started). */
  exitCode?: number | null;
  durationMs: number;
}

/** What the hooks of one moment of a tool call said, folded into one answer. */
export interface ToolHookVerdict {
  /** `continue`: no decision (the permission policy decides). */
  decision: 'allow' | 'deny' | 'ask' | 'continue';
  reason?: string;
  /** The input to run the tool with instead (checked against the tool's schema). */
  updatedInput?: unknown;
  /** Text for the model: appended to the call's tool_result. */
  notes?: string;
  /** A hook said `continue: false`: the call is not run (or its result is the last) and the run stops. */
  stop?: string;
  /** What each hook that ran answered, to be logged as is. Absent: one record is made from this verdict. */
  records?: readonly HookReport[];
  /** How `permission.decided.by` names the hook whose decision counted (`hook PreToolUse <command>`). */
  by?: string;
}

/** The PreToolUse answer (the first hook API's shape is a subset: allow / deny / continue). */
export type PreToolUseDecision = ToolHookVerdict;

/** After the tool ran: feedback and context for the model, or a stop. */
export interface PostToolHookVerdict {
  /** The first hook API: text appended to the result as it is. */
  additionalContext?: string;
  notes?: string;
  stop?: string;
  records?: readonly HookReport[];
}

/** A notification the runtime sends (Claude Code's Notification event). */
export interface ToolNotification {
  type: 'permission_prompt';
  message: string;
  title?: string;
}

/**
 * The hooks around a tool call. `preToolUse` runs before the permission policy (a deny blocks the
 * call; an allow only skips the policy's mode-default ask), `permissionRequest` when the call is
 * about to be asked about, `notify` as someone is asked (or the run parks), `postToolUse` after
 * it succeeded and `postToolUseFailure` after it failed.
 */
export interface ToolHooks {
  preToolUse?(request: PermissionRequest): Promise<PreToolUseDecision>;
  permissionRequest?(
    request: PermissionRequest,
    ask: { message?: string },
  ): Promise<ToolHookVerdict | undefined>;
  notify?(request: PermissionRequest, notification: ToolNotification): Promise<ToolHookVerdict | undefined>;
  postToolUse?(request: PermissionRequest, output: ToolOutput): Promise<PostToolHookVerdict | undefined>;
  postToolUseFailure?(
    request: PermissionRequest,
    failure: { error: string; interrupted: boolean },
  ): Promise<PostToolHookVerdict | undefined>;
}
