import type { AppendOnlyList } from '../lib/appendOnlyList.ts';
import type { Message, ToolResultBlock, ToolUseBlock, Usage } from '../model/messages.ts';
import type { ModelFailure, ModelRequest } from '../model/types.ts';
import type { RunConfig } from '../store/records.ts';

export type { RunConfig };

/** What one run of the loop starts from. */
export interface RunInput {
  config: RunConfig;
  /** The session's history, ending with the message that starts this run. */
  messages: AppendOnlyList<Message>;
  /** Auto-compaction failures in a row so far in the session (the breaker outlives runs). */
  autoCompactFailures: number;
}

/**
 * The run's working state. Only counters and the facts guards read live here; every
 * decision made on them is a guarded edge of the chart. Grouped so the top level stays
 * small: xstate copies the context on every assign with Object.assign, which V8 makes ~20×
 * slower past ~20 keys (measured: 0.7 µs at 18 keys, 10 µs at 21).
 */
export interface RunContext {
  config: RunConfig;
  messages: AppendOnlyList<Message>;
  /** Model turn of this run, from 1; maxTurns is checked as `turn + 1 > maxTurns` after tools. */
  turn: number;
  usage: Usage;
  /** Estimated size of the context: last response's usage plus an estimate of what was appended since. */
  contextTokens: number;
  request: ModelRequest | null;
  error: string | null;
  /** The current request's transport state. */
  transport: {
    model: string;
    /** Attempt number of the current request, from 1; reset by every response. */
    attempt: number;
    consecutiveOverloads: number;
    fellBack: boolean;
    lastFailure: ModelFailure | null;
  };
  /** Output cut at max_tokens, this turn. */
  output: {
    /** max_tokens of the next request; raised once by max_tokens_escalation. */
    maxTokens: number;
    escalated: boolean;
    recoveries: number;
  };
  compaction: {
    mode: 'auto' | 'reactive' | 'manual';
    /** Reactive compaction already tried for the current overflow. */
    reactiveTried: boolean;
    autoFailures: number;
  };
  stop: {
    blocks: number;
    hookActive: boolean;
    budgetContinuations: number;
  };
}

// ---- Actor contracts: the machine names them; the runtime (live) or replay (recorded) provides them.

export interface BuildQueryInput {
  messages: readonly Message[];
  model: string;
  maxTokens: number;
  system: string | undefined;
  turn: number;
  /** The run is a manual compaction (config.compactNow). */
  compact?: true;
}

/**
 * What the hooks that run before a run's first request (SessionStart, UserPromptSubmit)
 * decided: the buildQuery effect runs them and answers with the request and this.
 */
export interface PromptHooks {
  /** A hook said `continue: false` (hook_stopped). */
  stopped?: string;
  /** UserPromptSubmit blocked the prompt (prompt_blocked). */
  blocked?: string;
  /** Context for the model: appended to the history before the request (hook_context). */
  context?: string;
}

/**
 * The built request; `hooks` when the run's prompt hooks ran in this build; `compact` when the
 * run was started to compact the history (manual_compact): nothing is sent.
 */
export type BuiltQuery = ModelRequest & { hooks?: PromptHooks; compact?: true };

export interface CallModelInput {
  request: ModelRequest;
  attempt: number;
}

export interface RunToolsInput {
  toolUses: ToolUseBlock[];
  turn: number;
}

export interface ToolBatchResult {
  /** One tool_result per tool_use, in the original order. */
  results: ToolResultBlock[];
  /** The batch stopped because the run was aborted (missing results are synthetic "interrupted"). */
  aborted: boolean;
  /** Estimated tokens the results add to the context. */
  appendedTokens: number;
  /** Model usage the tools spent (sub-agents that finished): it counts towards the run's budget. */
  usage?: Usage;
  /**
   * Calls waiting for an approval nobody attached can give (nothing in the batch ran), or `Task`
   * calls whose sub-agents parked on theirs (the rest of the batch ran; its results are logged and
   * carried into the resumed batch): the run parks (awaiting_approval). Absent or empty otherwise.
   */
  parked?: ParkedCall[];
  /** A hook of the batch said `continue: false`: the run stops after its results (hook_stopped). */
  stopped?: string;
}

/** A tool call the batch parked on: what the approver is asked about. */
export interface ParkedCall {
  toolUseId: string;
  tool: string;
  input: unknown;
  message?: string;
  /** A `Task` call whose sub-agent parked: it waits for that session's approvals. */
  child?: string;
}

export interface CompactInput {
  messages: readonly Message[];
  mode: 'auto' | 'reactive' | 'manual';
  model: string;
  /** The context size the trigger measured (the last usage plus an estimate of what followed). */
  contextTokens?: number;
}

export interface CompactResult {
  messages: Message[];
  /** Usage of the summarisation call (it counts towards the run's budget). */
  usage: Usage;
  summary: string;
  /** The context as the trigger measured it, before and after: the same measure on both sides. */
  tokensBefore: number;
  tokensAfter: number;
  /** SessionStart (source compact) hooks' context: appended after the compacted history. */
  hookContext?: string;
  /** A SessionStart hook said `continue: false` after the compaction (hook_stopped). */
  hookStopped?: string;
}

/** A compaction PreCompact hooks refused: `blocked` (a block) or `stopped` (continue: false). */
export interface CompactRefused {
  refused: 'blocked' | 'stopped';
  reason: string;
}

export type CompactOutput = CompactResult | CompactRefused;

export interface BackoffInput {
  attempt: number;
  retryAfterMs: number | undefined;
}

export interface StopChecksInput {
  lastAssistant: Message;
  stopHookActive: boolean;
  turn: number;
  usage: Usage;
  budgetContinuations: number;
}

/** `hook`: the event that decided, when it is not Stop (inside a sub-agent: SubagentStop). */
export type StopDecision =
  | { decision: 'allow' }
  | { decision: 'block'; reason: string; hook?: 'SubagentStop' }
  | { decision: 'prevent'; reason: string; hook?: 'SubagentStop' }
  | { decision: 'budget_continue'; message: string };

/** How non-model actors fail: aborted, or broken. */
export interface ActorFailure {
  kind: 'aborted' | 'failed';
  message: string;
}

/** Emitted by the machine for every message it adds to the history (becomes `message.appended`). */
export interface MessageEmitted {
  type: 'message';
  message: Message;
  origin:
    | 'assistant'
    | 'tool_results'
    | 'max_tokens_continue'
    | 'stop_hook_feedback'
    | 'budget_continue'
    | 'max_turns_marker'
    | 'interrupted'
    | 'hook_context';
}
