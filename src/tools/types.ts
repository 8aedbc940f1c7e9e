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

/** Asked when the policy says `ask`. Absent in non-interactive runs: `ask` then means deny. */
export type AskUser = (request: PermissionRequest, message: string | undefined) => Promise<boolean>;

export interface PreToolUseDecision {
  decision: 'allow' | 'deny' | 'continue';
  reason?: string;
  updatedInput?: unknown;
}

export interface ToolHooks {
  preToolUse?(request: PermissionRequest): Promise<PreToolUseDecision>;
  postToolUse?(
    request: PermissionRequest,
    output: ToolOutput,
  ): Promise<{ additionalContext?: string } | undefined>;
}
