import type { TracerProvider } from '@opentelemetry/api';
import { TASK_TOOL_NAME } from '../agents/definition.ts';
import type { HookRunner } from '../hooks/runner.ts';
import type { HookRecord, HooksOption, StopHook } from '../hooks/types.ts';
import { AppendOnlyList } from '../lib/appendOnlyList.ts';
import { sameJson } from '../lib/sameJson.ts';
import type { EffectHandlers } from '../machines/effects.ts';
import { type QueryLoopMachine, queryLoopMachine, withEffects } from '../machines/queryLoop.machine.ts';
import { INTERRUPTED_RUN_REASON, TERMINAL_STATUS, type TerminalReason } from '../machines/reasons.ts';
import type { McpLimits, McpServerDescription } from '../mcp/servers.ts';
import { loadMemory, type MemorySource, memoryContext } from '../memory/index.ts';
import { hasToolUse, type Message, type ToolResultBlock, textOf, type Usage } from '../model/messages.ts';
import type { ModelClient, ModelStreamEvent } from '../model/types.ts';
import { fold } from '../store/evolve.ts';
import type {
  DraftRecord,
  LogRecord,
  ParentLink,
  RecordData,
  RecordType,
  RunStatus,
} from '../store/records.ts';
import { appendedData, startedData } from '../store/refs.ts';
import { emptySessionState, type SessionState } from '../store/sessionState.ts';
import type { EventStore } from '../store/types.ts';
import { runToolBatch } from '../tools/orchestrator.ts';
import type { PermissionMode } from '../tools/permissions/modes.ts';
import { ToolRegistry } from '../tools/registry.ts';
import { RunResources } from '../tools/runScope.ts';
import type { AnyTool, AskUser, CanUseTool, ToolHooks } from '../tools/types.ts';
import {
  AwaitingApprovalError,
  parkedCalls,
  pendingBelow,
  SubAgentAwaitingApprovalError,
} from './approvals.ts';
import type { BackoffPolicy } from './backoff.ts';
import type { BudgetPolicy } from './budget.ts';
import { Children, type SubAgentsOptions, taskTool, withTaskTool } from './children/index.ts';
import { type RunSettings, resolveRunConfig } from './config.ts';
import {
  type Clock,
  type IdGenerator,
  nanoidIds,
  type Random,
  systemClock,
  systemRandom,
} from './determinism.ts';
import { driveMachine } from './driveMachine.ts';
import { liveEffects } from './liveEffects.ts';
import { type InterruptedRunPlan, planInterruptedRun } from './recovery.ts';
import {
  endSession,
  type HookOptions,
  hookRunnerFor,
  hooksForRun,
  type SessionHookSetup,
  type SubAgentIdentity,
} from './sessionHooks.ts';
import { type McpServersOption, SessionMcp } from './sessionMcp.ts';
import { applySettingSources } from './sessionSettings.ts';
import { type RecordListener, SessionWriter } from './sessionWriter.ts';
import {
  currentSetup,
  type MemoryFileFact,
  type PermissionSetup,
  SetupChangedError,
  setupData,
  setupDifferences,
  setupTools,
} from './setup.ts';
import { type SessionEvent, streamRun } from './streamEvents.ts';
import { type SystemPromptOption, systemPromptText } from './systemPrompt.ts';

export interface SessionOptions {
  store: EventStore;
  model: ModelClient;
  tools?: readonly AnyTool[] | ToolRegistry;
  /** Permission policy; default allows every call. */
  canUseTool?: CanUseTool;
  askUser?: AskUser;
  /**
   * What a policy's `ask` becomes when there is no `askUser` to answer it: `park` (default) ends
   * the run `paused` / awaiting_approval until `approve`/`deny` and a resume; `deny` denies it.
   */
  unattendedAsk?: 'park' | 'deny';
  /**
   * Hooks of every Claude Code event, as the Claude Agent SDK takes them
   * (`{ PreToolUse: [{ matcher: 'Bash', hooks: [async (input) => ({ … })] }] }`), and command
   * hooks read from settings files (`{ type: 'command', command, timeout }` in a group's
   * `hooks`). docs/claude-code.md says what each event is told and what its answer does.
   */
  hooks?: HooksOption;
  /** What hooks are told (`permission_mode`, `transcript_path`) and how command hooks run. */
  hookOptions?: HookOptions;
  /** The first hook API: a PreToolUse and a PostToolUse function (they run beside `hooks`'). */
  toolHooks?: ToolHooks;
  /** The first hook API: stop hooks run one after the other, before `hooks`' Stop hooks. */
  stopHooks?: readonly StopHook[];
  /** Set by the `Task` tool on a sub-agent's session: who its hooks report as (internal). */
  subAgent?: SubAgentIdentity;
  budgetPolicy?: BudgetPolicy;
  settings?: RunSettings;
  /**
   * The system prompt: a string replaces reloop's default; `{ preset: 'default', append }` is the
   * default with `append` after it. Wins over `settings.system`; recorded in `run.started.config`.
   */
  systemPrompt?: SystemPromptOption;
  /**
   * CLAUDE.md memory, read at the start of each run from the sources named (`user`: the user's
   * `~/.claude/CLAUDE.md`; `project`: CLAUDE.md and .claude/CLAUDE.md of the working directory and
   * its parents up to the repository root; `local`: CLAUDE.local.md), recorded in `memory.loaded`
   * and given to the model in front of the first user turn, as Claude Code does. Default: none.
   */
  memory?: { sources: readonly MemorySource[]; userDir?: string; home?: string };
  /**
   * The Claude Agent SDK's `settingSources` (`user`, `project`, `local`; default none): which
   * settings files (`~/.claude/settings.json`, `.claude/settings.json`, `.claude/settings.local.json`;
   * managed settings too) give the session their permission rules and hooks, as `reloop run`
   * reads them (src/runtime/sessionSettings.ts), and which CLAUDE.md memory is read when
   * `memory` is not given.
   */
  settingSources?: readonly MemorySource[];
  /** Where the user's settings and `~/` rules come from (default the process's home; tests: a scratch one). */
  settingsHome?: string;
  /** The managed settings file (default `/etc/claude-code/managed-settings.json`; null: none). */
  managedSettingsFile?: string | null;
  /** With `settingSources`: the permission mode (default: the settings' `defaultMode`, else default). */
  permissionMode?: PermissionMode;
  /** With `settingSources`: a rule or hook the files give that cannot be used, named. */
  onSettingsWarning?: (warning: string) => void;
  clock?: Clock;
  random?: Random;
  ids?: IdGenerator;
  cwd?: string;
  title?: string;
  /** The chart to run (tests pass a variant to check that replay catches the change). */
  machine?: QueryLoopMachine;
  /**
   * Wraps the live effects before the chart gets them: tracing, fault injection, or a
   * coverage driver that counts every effect and breaks one on purpose.
   */
  interposeEffects?: (live: EffectHandlers) => EffectHandlers;
  onRecord?: RecordListener;
  onStreamEvent?: (e: ModelStreamEvent) => void;
  backoff?: BackoffPolicy;
  toolTimeoutMs?: number;
  /** Cap on one tool call's input in JSON bytes (default 1 MiB): larger calls get an is_error result. */
  maxToolInputBytes?: number;
  compactTailTokens?: number;
  /** Offer the `Task` tool: sub-agents as child sessions on the same store (a child gets none). */
  subAgents?: SubAgentsOptions;
  /**
   * OpenTelemetry: every run of this session and of its sub-agents as GenAI spans, made from its
   * records as they are added (docs/otel.md). Export never holds up a run.
   */
  tracerProvider?: TracerProvider;
  /** Put conversation content on the spans (gen_ai.input.messages …), redacted as the log is. Default off. */
  traceContent?: boolean;
  /**
   * MCP servers whose tools the model gets (`mcp__<server>__<tool>`), started at the first run
   * and kept until `close()`: by name, a configuration as in `.mcp.json` (stdio, http, sse) or
   * an in-process server (`{ type: 'sdk', instance }`, or the SDK's `McpServer` itself); or
   * entries with their source and approval (what the CLI builds from `.mcp.json` and
   * `--mcp-config`). Every server's fate and tool list is logged (`mcp.server`).
   */
  mcpServers?: McpServersOption;
  /**
   * What `canUseTool` enforces, for the recorded setup (`run.setup.permissions`): the mode and
   * the rules with their source. The CLI passes them; a rule change then shows in the log.
   */
  permissions?: PermissionSetup;
  /** The memory files the system prompt was made with (CLAUDE.md …), for the recorded setup. */
  memoryFiles?: readonly MemoryFileFact[];
  /**
   * A session opened with `Session.open` whose recorded setup (tools, system prompt, hooks,
   * permission rules, MCP servers) differs from this one's refuses to run: its first `submit`
   * throws `SetupChangedError` before writing anything, unless this is set.
   */
  acceptSetupChange?: boolean;
  /** MCP timeouts and the result cap (default: MCP_TIMEOUT, MCP_TOOL_TIMEOUT, MAX_MCP_OUTPUT_TOKENS of the environment). */
  mcpLimits?: Partial<McpLimits>;
  /**
   * `mcp__` tools registered where servers' tools are (at the first run, after the others),
   * instead of starting any server: `rerun`'s toolMode 'recorded' answers them from the log.
   */
  mcpToolsFromLog?: readonly AnyTool[];
}

export interface RunResult {
  sessionId: string;
  runId: string;
  status: RunStatus;
  reason: string;
  turns: number;
  usage: Usage;
  error?: string;
}

export class SessionBusyError extends Error {
  readonly code = 'SESSION_BUSY';
  constructor(readonly sessionId: string) {
    super(`session ${sessionId} is already running a turn`);
    this.name = 'SessionBusyError';
  }
}

export class NothingToRunError extends Error {
  readonly code = 'NOTHING_TO_RUN';
  constructor(readonly sessionId: string) {
    super(`session ${sessionId} has no history to continue: give a prompt`);
    this.name = 'NothingToRunError';
  }
}

/**
 * A prompt was given to a session whose history ends with tool calls that have no results and
 * no run left to repair (a counterfactual fork whose new response asks for tools): the calls
 * must run first, so the session is continued without a prompt.
 */
export class OpenToolCallsError extends Error {
  readonly code = 'OPEN_TOOL_CALLS';
  constructor(
    readonly sessionId: string,
    readonly toolUseIds: readonly string[],
  ) {
    super(
      `session ${sessionId} ends with tool calls that have no results yet (${toolUseIds.join(', ')}): ` +
        'continue it without a prompt, so they run first',
    );
    this.name = 'OpenToolCallsError';
  }
}

const allowAll: CanUseTool = () => ({ behavior: 'allow', by: 'default' });

/**
 * One conversation (the QueryEngine of the seeds). Its state is the fold of its log; each
 * `submit` is one run of the query-loop chart, every record of which goes through the
 * session's writer.
 */
export class Session {
  private controller: AbortController | null = null;
  private abortLoggedFor: string | null = null;
  private readonly registry: ToolRegistry;
  private readonly clock: Clock;
  private readonly mcp: SessionMcp;
  private readonly children: Children | null = null;
  private readonly hookRunner: HookRunner | null;
  /** The current run's `memory.loaded` record, for its `run.setup` (null: it read no memory). */
  private memorySeq: number | null = null;
  /** Opened from a log: the first run refuses if the recorded setup differs (SetupChangedError). */
  private setupToCheck = false;
  /** SessionStart has been owed (the first run of this object fires it). */
  private sessionStarted = false;
  /** The next run is a manual compaction (`compact()`). */
  private compactNext = false;
  /** Listeners of `stream()` calls, beside `SessionOptions.onStreamEvent`. */
  private readonly streamTaps = new Set<(e: ModelStreamEvent) => void>();

  private constructor(
    private readonly writer: SessionWriter,
    private readonly opts: SessionOptions,
  ) {
    const tools = opts.tools instanceof ToolRegistry ? opts.tools : new ToolRegistry(opts.tools ?? []);
    this.clock = opts.clock ?? systemClock;
    this.hookRunner = hookRunnerFor(this.hookSetup(), writer.sessionId);
    if (opts.subAgents) {
      // A `tools` entry the session does not have (or `Task`) is left out here, with a warning in
      // `agents.warnings`: a child is never offered a tool its parent lacks, nor a Task of its own.
      opts.subAgents.agents.checkTools(tools.names());
      this.children = new Children(
        {
          writer,
          options: opts,
          registry: tools,
          clock: this.clock,
          ids: opts.ids ?? nanoidIds,
          hooks: this.hookRunner,
        },
        opts.subAgents,
        { create: (o) => Session.create(o), open: (id, o) => Session.open(id, o) },
      );
      this.registry = withTaskTool(tools, taskTool(this.children, opts.subAgents.agents));
    } else {
      this.registry = tools;
    }
    if (opts.onRecord) writer.onRecord(opts.onRecord);
    this.mcp = new SessionMcp({
      option: opts.mcpServers,
      limits: opts.mcpLimits,
      ...(opts.mcpToolsFromLog ? { fromLog: opts.mcpToolsFromLog } : {}),
      cwd: opts.cwd ?? process.cwd(),
      registries: this.registry === tools ? [tools] : [tools, this.registry],
      state: () => this.writer.state,
      rec: (run, data) => this.rec(run, 'mcp.server', data),
    });
  }

  static async create(
    opts: SessionOptions & {
      forkedFrom?: { session: string; seq: number };
      /** A sub-agent's session: its id was announced in the parent's log before it existed. */
      id?: string;
      parent?: ParentLink;
    },
  ): Promise<Session> {
    opts = await applySettingSources(opts);
    const id = opts.id ?? (opts.ids ?? nanoidIds)('session');
    const writer = new SessionWriter(id, opts.store, emptySessionState());
    const session = new Session(writer, opts);
    await session.traced([]);
    session.rec(null, 'session.created', {
      ...(opts.title ? { title: opts.title } : {}),
      ...(opts.cwd ? { cwd: opts.cwd } : {}),
      ...(opts.forkedFrom ? { forkedFrom: opts.forkedFrom } : {}),
      ...(opts.parent ? { parent: opts.parent } : {}),
    });
    await writer.commit();
    return session;
  }

  /** Rebuilds a session from its log; the next `submit` resumes it if its last run never ended. */
  static async open(sessionId: string, given: SessionOptions): Promise<Session> {
    const opts = await applySettingSources(given);
    const records: LogRecord[] = [];
    for await (const r of opts.store.read(sessionId)) records.push(r);
    const state = fold(records, emptySessionState());
    const session = new Session(new SessionWriter(sessionId, opts.store, state), opts);
    // Its first run checks the setup (a sub-agent is resumed under its parent, which was checked).
    session.setupToCheck = !opts.acceptSetupChange && !opts.subAgent;
    await session.traced(records);
    return session;
  }

  /**
   * How what this object offers differs from the setup the session last recorded (empty: the
   * same, or a log from before setups were recorded). MCP servers are compared by name: their
   * tools are known only once they start.
   */
  setupDifferences(): string[] {
    const recorded = this.state.setup;
    if (!recorded) return [];
    const run = this.state.currentRun?.id === recorded.run ? this.state.currentRun : this.state.runs.last();
    return setupDifferences(recorded, run?.config.system, {
      tools: setupTools(this.registry.specs()),
      system: this.runConfig().system,
      hooks: this.setupNow().hooks,
      permissions: this.setupNow().permissions,
      mcpServers: this.mcp.configuredNames(),
    });
  }

  private trySetupNow(): ReturnType<Session['setupNow']> | null {
    try {
      return this.setupNow();
    } catch {
      return null;
    }
  }

  private checkSetup(): void {
    const differences = this.setupDifferences();
    if (differences.length > 0) throw new SetupChangedError(this.id, differences);
  }

  /** The limits and the system prompt a run of this object gets (recorded in `run.started`). */
  private runConfig() {
    return resolveRunConfig(
      this.opts.systemPrompt !== undefined
        ? { ...this.opts.settings, system: systemPromptText(this.opts.systemPrompt) }
        : this.opts.settings,
    );
  }

  /** What this object offers the model now (its MCP servers as far as they started). */
  private setupNow() {
    const o = this.opts;
    return currentSetup({
      specs: this.registry.specs(),
      ...(o.hooks ? { hooks: o.hooks } : {}),
      ...(o.toolHooks ? { toolHooks: o.toolHooks } : {}),
      ...(o.stopHooks ? { stopHooks: o.stopHooks } : {}),
      ...(o.permissions ? { permissions: o.permissions } : {}),
      callback: o.canUseTool !== undefined,
      mcpServers: this.mcp.describe(),
      ...(o.memoryFiles ? { memory: o.memoryFiles } : {}),
    });
  }

  /** Traces this session's records from now on; `prior` are those already in its log. */
  private async traced(prior: readonly LogRecord[]): Promise<void> {
    const provider = this.opts.tracerProvider;
    if (!provider) return;
    try {
      const { liveTrace } = await import('../otel/live.ts');
      this.writer.onRecord(liveTrace(provider, this.id, prior, this.opts.traceContent === true));
    } catch (e) {
      // Tracing is an observer: a session runs the same without it, and says so.
      process.emitWarning(
        `reloop: session ${this.id} is not traced: ${e instanceof Error ? e.message : String(e)}`,
      );
    }
  }

  get id(): string {
    return this.writer.sessionId;
  }

  get state(): SessionState {
    return this.writer.state;
  }

  /** Sub-agents this object has run (started or resumed). */
  get subAgentsRun(): number {
    return this.children?.runCount ?? 0;
  }

  get running(): boolean {
    return this.controller !== null;
  }

  /**
   * The session object is done with: its SessionEnd hooks run (the CLI calls this as it exits;
   * `reason` as Claude Code names them, `other` by default). Their answers are logged between
   * runs. A sub-agent's session has none (its parent's hooks know it by SubagentStop).
   */
  async end(reason = 'other'): Promise<HookRecord[]> {
    if (this.controller) throw new SessionBusyError(this.id);
    if (this.opts.subAgent) return [];
    return endSession(this.hookRunner, this.writer, this.clock, reason);
  }

  /** The MCP servers of this session and what became of each (empty before the first run). */
  describeMcpServers(): McpServerDescription[] {
    return this.mcp.describe();
  }

  /** Ends what the session holds beyond a run: its MCP servers (their processes, connections). */
  async close(): Promise<void> {
    await this.mcp.close();
  }

  /** Aborts the run in progress: recorded first, then every effect sees the signal. */
  abort(reason = 'aborted by the user'): void {
    if (!this.controller || this.controller.signal.aborted) return;
    const run = this.writer.state.currentRun?.id ?? null;
    this.rec(run, 'abort.requested', { reason });
    this.abortLoggedFor = run;
    this.controller.abort(new Error(reason));
  }

  /**
   * Runs the loop once. With a prompt it is a new user turn; without one it continues the
   * history (after a crash: the interrupted run is closed first, honestly, then continued).
   */
  async submit(prompt?: string | Message | null, options: { signal?: AbortSignal } = {}): Promise<RunResult> {
    if (this.controller) throw new SessionBusyError(this.id);
    const controller = new AbortController();
    this.controller = controller;
    const onOuterAbort = () => this.abort('aborted by the caller');
    options.signal?.addEventListener('abort', onOuterAbort, { once: true });
    // A signal aborted before the call never fires its event.
    if (options.signal?.aborted) onOuterAbort();
    try {
      // Before anything is written: resuming with other tools, prompt, hooks or rules is refused.
      if (this.setupToCheck) {
        this.checkSetup();
        this.setupToCheck = false;
      }
      const plan = await this.closeInterruptedRun();
      // Without a prompt there must be a history to continue: checked before anything is written.
      if ((prompt ?? null) === null && this.state.messages.length === 0) {
        throw new NothingToRunError(this.id);
      }
      // Parked on sub-agents that still wait for answers: resuming would only park again.
      const below = await pendingBelow(this.opts.store, this.id, this.state);
      if (below.length > 0) throw new SubAgentAwaitingApprovalError(this.id, below);
      // A parked batch's open tool calls need their results before anything else is said.
      const waiting = parkedCalls(this.state);
      if ((prompt ?? null) !== null && waiting.length > 0) {
        throw new AwaitingApprovalError(
          this.id,
          waiting.map((a) => a.toolUseId),
        );
      }
      const last = this.state.messages.last();
      if (
        (prompt ?? null) !== null &&
        plan === null &&
        last?.role === 'assistant' &&
        hasToolUse(last.content)
      ) {
        const ids =
          typeof last.content === 'string'
            ? []
            : last.content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : []));
        throw new OpenToolCallsError(this.id, ids);
      }
      return await this.run(prompt ?? null, controller.signal, plan);
    } finally {
      options.signal?.removeEventListener('abort', onOuterAbort);
      this.controller = null;
    }
  }

  /**
   * Closes the last run if it never ended, exactly as `submit` closes it before continuing
   * (`run.ended`, reason `interrupted`), and runs nothing: a worker giving up on a run that kept
   * failing while open leaves the log closed. True when there was a run to close.
   */
  async closeOpenRun(): Promise<boolean> {
    if (this.controller) throw new SessionBusyError(this.id);
    return (await this.closeInterruptedRun()) !== null;
  }

  /**
   * A manual compaction (Claude Code's `/compact`): one run that summarises the history and
   * ends — `manual_compact`, then `manual_compacted` (or `manual_compaction_blocked` /
   * `manual_compaction_failed`); the only request is the summary's. The run's config says
   * `compactNow`, so replay re-drives it the same way.
   */
  async compact(options: { signal?: AbortSignal } = {}): Promise<RunResult> {
    if (this.controller) throw new SessionBusyError(this.id);
    const waiting = parkedCalls(this.state);
    if (waiting.length > 0)
      throw new AwaitingApprovalError(
        this.id,
        waiting.map((a) => a.toolUseId),
      );
    this.compactNext = true;
    try {
      return await this.submit(null, options);
    } finally {
      this.compactNext = false;
    }
  }

  /**
   * `submit`, as an async iterator of the run's events (src/runtime/streamEvents.ts: the shapes
   * of the Claude Agent SDK's `query()` messages); the iterator's return value is the result.
   * Leaving the loop early aborts the run.
   */
  stream(
    prompt?: string | Message | null,
    options: { signal?: AbortSignal } = {},
  ): AsyncGenerator<SessionEvent, RunResult, undefined> {
    return streamRun({
      id: this.id,
      cwd: this.opts.cwd ?? process.cwd(),
      tools: () => this.registry.names(),
      onRecord: (l) => this.writer.onRecord(l),
      onStreamEvent: (l) => {
        this.streamTaps.add(l);
        return () => this.streamTaps.delete(l);
      },
      submit: () => this.submit(prompt, options),
      abort: (reason) => this.abort(reason),
    });
  }

  private async run(
    prompt: string | Message | null,
    signal: AbortSignal,
    resumed: InterruptedRunPlan | null,
  ) {
    const compacting = this.compactNext;
    const config = compacting ? { ...this.runConfig(), compactNow: true as const } : this.runConfig();
    const runId = (this.opts.ids ?? nanoidIds)('run');
    // A batch parked for approval is resumed as it is: the chart runs it (tool_batch_resumed).
    const parked = parkedCalls(this.state).length > 0;
    this.rec(runId, 'run.started', {
      config,
      ...(resumed ? { resumedFrom: resumed.runId } : {}),
      autoCompactFailures: this.state.autoCompactFailures,
    });
    // An abort that came before this run existed (while closing a dead run) is logged in the
    // run too, so replay sees what the run's actors saw.
    if (signal.aborted && this.abortLoggedFor !== runId) {
      this.rec(runId, 'abort.requested', { reason: 'aborted before the run started' });
    }
    this.memorySeq = null;
    const memory = await this.loadMemory(runId);
    // MCP servers start inside the first run (their records are its), before anything may call them.
    await this.mcp.start(runId);
    // What the model is offered in this run, its tools included (MCP's just registered). A tool
    // whose spec cannot be built fails the run's first build (runtime_error), not the submit.
    const setup = this.trySetupNow();
    if (setup)
      this.rec(runId, 'run.setup', {
        ...setupData(this.state, setup),
        ...(this.memorySeq !== null ? { memoryFrom: this.memorySeq } : {}),
      });
    if (resumed) await this.repairHistory(runId, resumed, signal);
    const last = this.state.messages.last();
    if (prompt !== null) {
      const message: Message = typeof prompt === 'string' ? { role: 'user', content: prompt } : prompt;
      this.rec(runId, 'user.message', { message });
    } else if (!compacting && last?.role === 'assistant' && !parked && !hasToolUse(last.content)) {
      // (Tool calls still open after the repairs: a sub-agent parked again, the chart resumes the batch.)
      // The model had already answered; a request ending on its own message would be a prefill.
      this.rec(runId, 'user.message', { message: { role: 'user', content: 'Continue where you left off.' } });
    }

    const hooks = this.runHooks(runId, signal, prompt, config.model);
    const scope = new RunResources(runId, signal);
    const live = liveEffects({
      writer: this.writer,
      run: scope,
      runId,
      client: this.opts.model,
      registry: this.registry,
      canUseTool: this.opts.canUseTool ?? allowAll,
      askUser: this.opts.askUser,
      parkOnAsk: (this.opts.unattendedAsk ?? 'park') === 'park',
      ...hooks,
      stopHooks: this.opts.stopHooks ?? [],
      budgetPolicy: this.opts.budgetPolicy,
      clock: this.clock,
      random: this.opts.random ?? systemRandom,
      cwd: this.opts.cwd ?? process.cwd(),
      signal,
      backoff: this.opts.backoff,
      toolTimeoutMs: this.opts.toolTimeoutMs,
      maxToolInputBytes: this.opts.maxToolInputBytes,
      compactTailTokens: this.opts.compactTailTokens,
      onStreamEvent: this.streamTaps.size === 0 ? this.opts.onStreamEvent : (e) => this.tapStream(e),
      memory,
    });
    const machine = withEffects(
      this.opts.machine ?? queryLoopMachine,
      this.opts.interposeEffects ? this.opts.interposeEffects(live) : live,
    );
    let outcome: Awaited<ReturnType<typeof driveMachine>>;
    try {
      outcome = await driveMachine(
        machine,
        {
          config,
          // The machine gets its own list: two writers appending to one shared array would force copies.
          messages: AppendOnlyList.from(this.state.messages.view()),
          autoCompactFailures: this.state.autoCompactFailures,
        },
        {
          onTransition: (t) => this.rec(runId, 'transition', t),
          onMessage: (e) =>
            this.rec(runId, 'message.appended', appendedData(this.state, e.message, e.origin)),
        },
      );
      // Children cut short by an abort still end (and are logged) inside this run.
      await this.children?.settled();
    } finally {
      // What the run's tools left running (background shells) ends with it.
      await scope.end();
    }
    const status: RunStatus = TERMINAL_STATUS[outcome.reason as TerminalReason] ?? 'failed';
    const usage = this.state.currentRun?.usage ?? outcome.context.usage;
    const result: RunResult = {
      sessionId: this.id,
      runId,
      status,
      reason: outcome.reason,
      turns: outcome.context.turn,
      usage,
      ...(outcome.error && status !== 'completed' ? { error: outcome.error } : {}),
    };
    this.rec(runId, 'run.ended', {
      status,
      reason: outcome.reason,
      turns: result.turns,
      usage,
      ...(result.error ? { error: result.error } : {}),
    });
    await this.writer.commit();
    return result;
  }

  /**
   * Closes a run whose process died: `run.ended` (reason `interrupted`) says which state it
   * was in and which effects were in flight. The repairs to the history come next, in the new
   * run, so the closed run's records are exactly what the dead process logged.
   */
  private async closeInterruptedRun(): Promise<InterruptedRunPlan | null> {
    const plan = planInterruptedRun(this.state, { subAgents: this.children !== null });
    if (!plan) return null;
    const run = this.state.currentRun!;
    this.rec(plan.runId, 'run.ended', {
      status: 'aborted',
      reason: INTERRUPTED_RUN_REASON,
      turns: run.turns,
      usage: run.usage,
      interrupted: { state: plan.state, inFlight: plan.inFlight },
    });
    await this.writer.commit();
    return plan;
  }

  /** Pairs every tool_use the dead run left open: logged results, re-run read-only tools, or "interrupted". */
  private async repairHistory(runId: string, plan: InterruptedRunPlan, signal: AbortSignal): Promise<void> {
    const blocks: { index: number; block: ToolResultBlock }[] = plan.logged.map((l) => ({
      index: l.index,
      block: resultBlock(l.toolUseId, l.result),
    }));
    for (const f of plan.finished) {
      this.rec(runId, 'tool.finished', f);
      blocks.push({ index: f.index, block: resultBlock(f.toolUseId, f.result) });
    }
    if (plan.rerun.length > 0) {
      await runToolBatch(
        {
          registry: this.registry,
          toolUses: plan.rerun.map((r) => ({
            type: 'tool_use',
            id: r.toolUseId,
            name: r.name,
            input: r.input,
          })),
          signal,
          cwd: this.opts.cwd ?? process.cwd(),
          session: { sessionId: this.id, fileRead: (p) => this.state.filesRead[p] },
          canUseTool: this.opts.canUseTool ?? allowAll,
        },
        {
          beforeRun: async (calls) => {
            for (const c of calls)
              this.rec(
                runId,
                'tool.started',
                startedData(this.state, { ...c, index: plan.rerun[c.index]!.index }),
              );
            await this.writer.commit();
          },
          onFinished: (r) => {
            const index = plan.rerun[r.index]!.index;
            this.rec(runId, 'tool.finished', {
              toolUseId: r.toolUseId,
              name: r.name,
              index,
              outcome: r.outcome,
              result: r.result as RecordData<'tool.finished'>['result'],
              durationMs: Math.round(r.durationMs),
              ...(r.filesRead ? { filesRead: r.filesRead } : {}),
              ...(r.synthetic ? { synthetic: true } : {}),
            });
            blocks.push({ index, block: resultBlock(r.toolUseId, r.result) });
          },
        },
      );
    }
    let outputsParked = false;
    if (plan.children.length > 0) {
      const children = this.children!;
      const outputs = await Promise.all(plan.children.map((c) => children.resume(c, signal)));
      plan.children.forEach((c, i) => {
        const out = outputs[i]!;
        if (out.parkedOn !== undefined) {
          // Resumed, the child parked on approvals: the call stays open, the batch parks on it.
          outputsParked = true;
          this.rec(runId, 'approval.requested', {
            toolUseId: c.toolUseId,
            tool: TASK_TOOL_NAME,
            input: c.input,
            child: out.parkedOn,
          });
          return;
        }
        const result = { content: out.content, isError: out.isError ?? false };
        this.rec(runId, 'tool.finished', {
          toolUseId: c.toolUseId,
          name: TASK_TOOL_NAME,
          index: c.index,
          outcome: result.isError ? 'error' : 'ok',
          result: result as RecordData<'tool.finished'>['result'],
          durationMs: 0,
        });
        blocks.push({ index: c.index, block: resultBlock(c.toolUseId, result) });
      });
    }
    // A call still open (a sub-agent parked): the results wait, logged, for the resumed batch.
    if (blocks.length > 0 && !outputsParked) {
      blocks.sort((a, b) => a.index - b.index);
      const message: Message = { role: 'user', content: blocks.map((b) => b.block) };
      this.rec(runId, 'message.appended', appendedData(this.state, message, 'interrupted'));
    }
  }

  private hookSetup(): SessionHookSetup {
    const o = this.opts;
    return {
      store: o.store,
      ...(o.hooks ? { hooks: o.hooks } : {}),
      ...(o.hookOptions ? { hookOptions: o.hookOptions } : {}),
      cwd: o.cwd ?? process.cwd(),
      clock: this.clock,
      ...(o.subAgent ? { subAgent: o.subAgent } : {}),
    };
  }

  /**
   * The hooks of one run. The first run of this object owes SessionStart (`startup` for a new
   * session, `resume` for one with runs before); a run with a new prompt owes UserPromptSubmit.
   * A sub-agent fires neither (its parent fired SubagentStart).
   */
  private runHooks(runId: string, signal: AbortSignal, prompt: string | Message | null, model: string) {
    const child = this.opts.subAgent !== undefined;
    const sessionStart =
      child || this.sessionStarted
        ? null
        : this.state.runs.length > 0 || this.state.messages.length > (prompt === null ? 0 : 1)
          ? 'resume'
          : 'startup';
    this.sessionStarted = true;
    const text = prompt === null ? null : typeof prompt === 'string' ? prompt : textOf(prompt.content);
    return hooksForRun({
      runner: this.hookRunner,
      legacyToolHooks: this.opts.toolHooks,
      writer: this.writer,
      runId,
      clock: this.clock,
      signal,
      pending: { sessionStart, prompt: child ? null : text, model },
      setup: this.hookSetup(),
    });
  }

  private tapStream(e: ModelStreamEvent): void {
    this.opts.onStreamEvent?.(e);
    for (const tap of this.streamTaps) tap(e);
  }

  /**
   * The run's memory, read once at its start and recorded; what the model gets is made from the
   * record as logged (redacted), so the log holds exactly what was sent.
   */
  private async loadMemory(runId: string): Promise<string | null> {
    const m =
      this.opts.memory ??
      (this.opts.settingSources
        ? {
            sources: this.opts.settingSources,
            // The same injectable home as the settings files (settingsHome).
            ...(this.opts.settingsHome
              ? { home: this.opts.settingsHome, userDir: `${this.opts.settingsHome}/.claude` }
              : {}),
          }
        : undefined);
    if (!m || m.sources.length === 0) return null;
    const loaded = await loadMemory({ cwd: this.opts.cwd ?? process.cwd(), ...m });
    // No memory file and nothing to say: no record (a log without one had no memory).
    if (loaded.files.length === 0 && loaded.warnings.length === 0) return null;
    // Read again unchanged (each prompt of a conversation is a run): refer to the earlier record.
    const prior = this.state.memory;
    const same = prior !== null && sameJson(prior.files, loaded.files);
    const r = this.rec(runId, 'memory.loaded', {
      ...(same ? { filesFrom: prior.seq } : { files: loaded.files }),
      ...(loaded.warnings.length > 0 ? { warnings: loaded.warnings } : {}),
    });
    this.memorySeq = r.seq;
    return memoryContext(this.state.memory?.files ?? []);
  }

  private rec<T extends RecordType>(run: string | null, type: T, data: RecordData<T>): LogRecord {
    return this.writer.add({ type, run, at: this.clock.now(), data } as DraftRecord);
  }
}

function resultBlock(toolUseId: string, result: { content: unknown; isError: boolean }): ToolResultBlock {
  return {
    type: 'tool_result',
    tool_use_id: toolUseId,
    content: result.content as ToolResultBlock['content'],
    ...(result.isError ? { is_error: true } : {}),
  };
}
