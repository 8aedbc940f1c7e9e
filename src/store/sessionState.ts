import { AppendOnlyList } from '../lib/appendOnlyList.ts';
import type { TodoItem } from '../lib/todos.ts';
import type { ContentBlock, Message, Usage } from '../model/messages.ts';
import { ZERO_USAGE } from '../model/messages.ts';
import type { McpToolFact, RecordData, RunConfig, RunStatus, SetupTool } from './records.ts';

export interface RunSummary {
  id: string;
  startedSeq: number;
  endedSeq: number | null;
  status: RunStatus | 'running';
  reason: string | null;
  turns: number;
  /** Usage of every model call of the run (turns and compactions). */
  usage: Usage;
  /** The chart state the run was last seen in (from its last transition). */
  state: string;
  config: RunConfig;
  resumedFrom: string | null;
}

export interface Denial {
  seq: number;
  toolUseId: string;
  name: string;
  by: string;
  message: string | undefined;
}

export interface FileReadEntry {
  path: string;
  sha256: string;
  mtimeMs: number;
  seq: number;
}

/** A tool call parked for approval (approval.requested), and the answer once someone gave it. */
export interface ApprovalEntry {
  toolUseId: string;
  tool: string;
  input: unknown;
  message: string | undefined;
  /** Seq and time of the first request (a resumed run that parks again asks again). */
  seq: number;
  at: number;
  decision: { allow: boolean; by: string; message: string | undefined; seq: number; at: number } | null;
  /**
   * A `Task` call parked because its sub-agent parked: it waits for that child session's
   * approvals, and is never decided itself (undefined for a call that needs its own answer).
   */
  child: string | undefined;
}

/** A tool that started and has not finished: after a crash it may or may not have run. */
export interface InFlightTool {
  toolUseId: string;
  name: string;
  input: unknown;
  readOnly: boolean;
  index: number;
  /** A `Task` call whose child session was announced (`child.started`): resume continues that child. */
  child?: { session: string; agent: string };
}

export interface UnappendedResult {
  seq: number;
  toolUseId: string;
  content: unknown;
  isError: boolean;
}

/** An MCP server of the session: its last event, and the tool list of its last connection. */
export interface McpServerState {
  server: string;
  status: 'connected' | 'failed' | 'skipped' | 'closed';
  seq: number;
  serverInfo: { name: string; version: string } | null;
  /** The tools it listed when it last connected, and the seq of the record that holds the list. */
  tools: readonly McpToolFact[];
  toolsSeq: number | null;
  message: string | undefined;
}

/** The latest `run.setup` of the session, its tool list resolved (and the seq of the record that holds it). */
export interface RecordedSetup extends Omit<RecordData<'run.setup'>, 'tools' | 'toolsFrom'> {
  seq: number;
  /** The run it was recorded in. */
  run: string | null;
  tools: readonly SetupTool[];
  toolsSeq: number;
}

/** Everything the log says about a session, as of `lastSeq`. Built only by `evolve`. */
export interface SessionState {
  id: string | null;
  title: string;
  createdAt: number | null;
  cwd: string | null;
  forkedFrom: { session: string; seq: number } | null;
  lastSeq: number;
  lastAt: number | null;
  messages: AppendOnlyList<Message>;
  /** Every model call of the session, turns and compactions, and those of its finished sub-agents. */
  usage: Usage;
  denials: AppendOnlyList<Denial>;
  filesRead: Readonly<Record<string, FileReadEntry>>;
  /** Ended runs, oldest first; the open one (if any) is `currentRun`. */
  runs: AppendOnlyList<RunSummary>;
  currentRun: RunSummary | null;
  /** Model request sent and not answered (only meaningful while `currentRun` is open). */
  modelInFlight: boolean;
  toolsInFlight: ReadonlyMap<string, InFlightTool>;
  /**
   * Tool results logged but not yet appended to the history (a crash can fall in between), by
   * toolUseId, with the seq of their `tool.finished` (what a v2 `message.appended` refers to).
   */
  unappendedResults: ReadonlyMap<string, UnappendedResult>;
  /** The latest `model.responded` (turn or compaction): what v2 records that reuse its content refer to. */
  lastResponse: { seq: number; content: readonly ContentBlock[] } | null;
  autoCompactFailures: number;
  compactions: number;
  transitions: number;
  /** Approval requests by toolUseId, answered or not. */
  approvals: ReadonlyMap<string, ApprovalEntry>;
  /** MCP servers by name, as their latest `mcp.server` record left them. */
  mcpServers: ReadonlyMap<string, McpServerState>;
  /** The todo list as the last successful `TodoWrite` call left it, with that call's seq. */
  todos: { seq: number; items: readonly TodoItem[] } | null;
  /** What the latest run offered the model (`run.setup`); null in logs written before it was recorded. */
  setup: RecordedSetup | null;
  /** The CLAUDE.md memory of the latest run that read any (`memory.loaded`), with the seq holding its files. */
  memory: { seq: number; files: readonly LoadedMemoryFile[] } | null;
}

/** One memory file as `memory.loaded` records it. */
export type LoadedMemoryFile = NonNullable<RecordData<'memory.loaded'>['files']>[number];

/** The shared empty map of a fresh state (typed read-only: nothing may add to it). */
export const EMPTY_MAP: ReadonlyMap<string, never> = new Map<string, never>();

export function emptySessionState(): SessionState {
  return {
    id: null,
    title: '',
    createdAt: null,
    cwd: null,
    forkedFrom: null,
    lastSeq: 0,
    lastAt: null,
    messages: AppendOnlyList.empty(),
    usage: ZERO_USAGE,
    denials: AppendOnlyList.empty(),
    filesRead: {},
    runs: AppendOnlyList.empty(),
    currentRun: null,
    modelInFlight: false,
    toolsInFlight: EMPTY_MAP,
    unappendedResults: EMPTY_MAP,
    lastResponse: null,
    autoCompactFailures: 0,
    compactions: 0,
    transitions: 0,
    approvals: EMPTY_MAP,
    mcpServers: EMPTY_MAP,
    todos: null,
    setup: null,
    memory: null,
  };
}
