import {
  type AgentCatalog,
  type AgentDefinition,
  type TaskInput,
  TaskInputSchema,
} from '../../agents/index.ts';
import { contextOf, stopReasonOf } from '../../hooks/folds.ts';
import type { HookRunner } from '../../hooks/runner.ts';
import type { Message } from '../../model/messages.ts';
import type { DraftRecord, ParentLink, RecordData, RecordType } from '../../store/records.ts';
import type { SessionState } from '../../store/sessionState.ts';
import type { ToolRegistry } from '../../tools/registry.ts';
import type { ToolOutput } from '../../tools/types.ts';
import type { Clock, IdGenerator } from '../determinism.ts';
import type { RunResult, SessionOptions } from '../session.ts';
import type { SessionWriter } from '../sessionWriter.ts';
import { childRegistry, childSettings, configOf, type SubAgentsOptions } from './childOptions.ts';
import { type ChildEnd, childFinished, lastEnd, taskOutput } from './childResult.ts';

/** The part of a Session a parent needs from its child. */
export interface ChildSession {
  readonly id: string;
  readonly state: SessionState;
  submit(prompt: string | Message | null, options: { signal?: AbortSignal }): Promise<RunResult>;
}

/** How children are made: the runtime's Session, passed in so this module does not import it. */
export interface ChildFactory {
  create(opts: SessionOptions & { id: string; parent: ParentLink }): Promise<ChildSession>;
  open(id: string, opts: SessionOptions): Promise<ChildSession>;
}

/** What the parent session lends its children. */
export interface ParentSide {
  writer: SessionWriter;
  options: SessionOptions;
  /** The parent's tools without `Task`. */
  registry: ToolRegistry;
  clock: Clock;
  ids: IdGenerator;
  /** The parent's hooks: SubagentStart runs in the parent, the child runs the same hooks as a sub-agent. */
  hooks: HookRunner | null;
}

/** A `Task` call left in flight by a dead process. */
export interface InterruptedTask {
  toolUseId: string;
  input: unknown;
  /** The child announced by `child.started`, or null when the process died before announcing one. */
  child: { session: string; agent: string } | null;
}

/**
 * A session's sub-agents. Each `Task` call is a child session on the same store, with its own
 * chart, log and limits: announced durably in the parent's log (`child.started`) before it
 * exists, run to its end, and its end logged (`child.finished`) before its result goes back.
 */
export class Children {
  private readonly inFlight = new Set<Promise<unknown>>();
  /** Children run (started or resumed) so far. */
  runCount = 0;
  private readonly agents: AgentCatalog;

  constructor(
    private readonly parent: ParentSide,
    private readonly opts: SubAgentsOptions,
    private readonly factory: ChildFactory,
  ) {
    this.agents = opts.agents;
  }

  /**
   * A `Task` call: start the child, run it to its end, return its last text. The call of a
   * parked batch that is resumed continues the child it parked on instead (approved or denied
   * since, that child is resumed from its own log).
   */
  async start(toolUseId: string, input: TaskInput, signal: AbortSignal): Promise<ToolOutput> {
    const parkedOn = this.parent.writer.state.approvals.get(toolUseId)?.child;
    if (parkedOn !== undefined) {
      const agent = this.agents.get(input.subagent_type)?.name ?? input.subagent_type;
      return this.resume({ toolUseId, input, child: { session: parkedOn, agent } }, signal);
    }
    const agent = this.agents.get(input.subagent_type);
    if (!agent) return unknownAgent(input.subagent_type, this.agents);
    const spent = this.budgetSpent();
    if (spent) return { content: spent, isError: true };
    const child = this.parent.ids('session');
    const hooks = await this.subagentStart(toolUseId, child, agent, signal);
    if (hooks.stop !== undefined) {
      return {
        content: `[sub-agent ${agent.name} not started] a SubagentStart hook stopped the run: ${hooks.stop}`,
        isError: true,
        stopRun: hooks.stop,
      };
    }
    this.rec('child.started', { toolUseId, child, agent: agent.name });
    // Durable before the child exists: after a crash, resume finds the child by this record.
    await this.parent.writer.commit();
    return this.create(toolUseId, child, agent, input, signal, hooks.context);
  }

  /**
   * A `Task` call a dead process left in flight: its child is resumed from its own log (its
   * interrupted run closed as for any session), or started if it never was; a child whose
   * run had already ended just gives its result.
   */
  async resume(task: InterruptedTask, signal: AbortSignal): Promise<ToolOutput> {
    const parsed = TaskInputSchema.safeParse(task.input);
    if (!parsed.success) return { content: `Invalid input for Task: ${parsed.error.message}`, isError: true };
    const input = parsed.data;
    if (!task.child) return this.start(task.toolUseId, input, signal);
    const agent = this.agents.get(task.child.agent);
    if (!agent) {
      return {
        content: `[interrupted] the ${task.child.agent} agent of session ${task.child.session} is no longer defined: the sub-agent was not resumed`,
        isError: true,
      };
    }
    const store = this.parent.options.store;
    if (!(await store.exists(task.child.session)))
      return this.create(task.toolUseId, task.child.session, agent, input, signal);
    const link = await parentLinkOf(this.parent.options, task.child.session);
    if (link?.session !== this.parent.writer.sessionId || link.toolUseId !== task.toolUseId) {
      // A fork copied the call: the child belongs to the session that started it.
      return {
        content: `[interrupted] sub-agent session ${task.child.session} belongs to session ${link?.session ?? '?'}; it is not resumed from this one`,
        isError: true,
      };
    }
    const child = await this.factory.open(
      task.child.session,
      this.childOptions(task.toolUseId, agent, input),
    );
    const ended = child.state.currentRun ? null : lastEnd(child.state);
    // A child parked on approvals is continued (its answered calls run), unless the parent had
    // already taken that end as the call's result (a log written before parents parked too).
    if (ended?.status === 'paused' && !(await this.finishedBefore(task.toolUseId)))
      return this.track(task.toolUseId, child, agent, () => child.submit(null, { signal }));
    if (ended) {
      // A write cut short may have kept this call's child.finished but not its result.
      if (await this.finishedBefore(task.toolUseId))
        return taskOutput(agent.name, child.id, child.state, ended);
      return this.finish(task.toolUseId, child, agent, ended);
    }
    const prompt = child.state.messages.length === 0 ? input.prompt : null;
    return this.track(task.toolUseId, child, agent, () => child.submit(prompt, { signal }));
  }

  /** Resolves when every child started so far has finished and been logged. */
  async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private async create(
    toolUseId: string,
    id: string,
    agent: AgentDefinition,
    input: TaskInput,
    signal: AbortSignal,
    /** SubagentStart's context for the child: its first message carries it after the task. */
    context?: string,
  ): Promise<ToolOutput> {
    const link: ParentLink = {
      session: this.parent.writer.sessionId,
      run: this.parent.writer.state.currentRun?.id ?? null,
      toolUseId,
      agent: agent.name,
    };
    const child = await this.factory.create({
      ...this.childOptions(toolUseId, agent, input),
      id,
      parent: link,
      title: input.description,
    });
    const prompt: string | Message =
      context === undefined
        ? input.prompt
        : {
            role: 'user',
            content: [
              { type: 'text', text: input.prompt },
              { type: 'text', text: context },
            ],
          };
    return this.track(toolUseId, child, agent, () => child.submit(prompt, { signal }));
  }

  /**
   * SubagentStart, in the parent (its records are the `Task` call's): the child's context, or a
   * stop (`continue: false`) before the child exists. It cannot block the sub-agent otherwise.
   */
  private async subagentStart(
    toolUseId: string,
    child: string,
    agent: AgentDefinition,
    signal: AbortSignal,
  ): Promise<{ context?: string; stop?: string }> {
    const hooks = this.parent.hooks;
    if (!hooks?.has('SubagentStart')) return {};
    await this.parent.writer.commit();
    const runs = await hooks.run(
      'SubagentStart',
      { agent_id: child, agent_type: agent.name },
      { signal, toolUseId },
    );
    const records = runs.map((r) => r.record);
    for (const r of records) this.rec('hook.decided', r);
    const stop = stopReasonOf(records);
    if (stop !== undefined) return { stop };
    const context = contextOf(records);
    return context !== undefined ? { context } : {};
  }

  /** Runs the child; whatever happens, its end is logged in the parent before the result goes back. */
  private track(
    toolUseId: string,
    child: ChildSession,
    agent: AgentDefinition,
    run: () => Promise<RunResult>,
  ): Promise<ToolOutput> {
    this.runCount++;
    const done = run().then(
      (r): ChildEnd => ({ status: r.status, reason: r.reason, ...(r.error ? { error: r.error } : {}) }),
      (e: unknown): ChildEnd => ({
        status: 'failed',
        reason: 'runtime_error',
        error: e instanceof Error ? e.message : String(e),
      }),
    );
    const out = done.then((end) =>
      end.status === 'paused' ? parked(agent.name, child, end) : this.finish(toolUseId, child, agent, end),
    );
    this.inFlight.add(out);
    void out.finally(() => this.inFlight.delete(out));
    return out;
  }

  private finish(toolUseId: string, child: ChildSession, agent: AgentDefinition, end: ChildEnd): ToolOutput {
    this.rec('child.finished', childFinished(toolUseId, child.id, child.state, end));
    return taskOutput(agent.name, child.id, child.state, end);
  }

  private childOptions(toolUseId: string, agent: AgentDefinition, input: TaskInput): SessionOptions {
    const p = this.parent.options;
    const state = this.parent.writer.state;
    const onChildRecord = this.opts.onChildRecord;
    return {
      store: p.store,
      model: p.model.forChild?.(toolUseId) ?? p.model,
      tools: childRegistry(this.parent.registry, agent),
      canUseTool: p.canUseTool,
      askUser: p.askUser,
      unattendedAsk: p.unattendedAsk,
      toolHooks: p.toolHooks,
      // The same hooks, told they run in a sub-agent: its stop checks run SubagentStop hooks.
      ...(p.hooks ? { hooks: p.hooks } : {}),
      ...(p.hookOptions ? { hookOptions: p.hookOptions } : {}),
      subAgent: { parent: this.parent.writer.sessionId, agent: agent.name },
      // The first API's stop hooks and the budget policy are the parent's: a child just ends.
      settings: childSettings({
        parent: p.settings,
        parentConfig: configOf(state, p.settings),
        spent: state.currentRun?.usage ?? state.usage,
        agent,
        requestedModel: input.model,
        maxTurns: this.opts.maxTurns,
      }),
      clock: this.parent.clock,
      random: p.random,
      ids: p.ids,
      cwd: p.cwd,
      backoff: p.backoff,
      toolTimeoutMs: p.toolTimeoutMs,
      compactTailTokens: p.compactTailTokens,
      // A child's spans join its parent's trace (the same provider: one tree of translators).
      tracerProvider: p.tracerProvider,
      traceContent: p.traceContent,
      ...(onChildRecord ? { onRecord: (r, s) => onChildRecord(r.session, r, s) } : {}),
    };
  }

  private async finishedBefore(toolUseId: string): Promise<boolean> {
    for await (const r of this.parent.options.store.read(this.parent.writer.sessionId)) {
      if (r.type === 'child.finished' && r.data.toolUseId === toolUseId) return true;
    }
    return false;
  }

  /** A parent run whose budget is spent starts no child: its first answer could only be over budget. */
  private budgetSpent(): string | null {
    const run = this.parent.writer.state.currentRun;
    if (!run) return null;
    const { maxBudgetUsd, maxBudgetTokens } = run.config;
    if (maxBudgetUsd !== null && run.usage.costUsd >= maxBudgetUsd)
      return `No sub-agent started: the run's budget of $${maxBudgetUsd} is spent`;
    if (maxBudgetTokens !== null && run.usage.inputTokens + run.usage.outputTokens >= maxBudgetTokens)
      return `No sub-agent started: the run's budget of ${maxBudgetTokens} tokens is spent`;
    return null;
  }

  private rec<T extends RecordType>(type: T, data: RecordData<T>): void {
    const run = this.parent.writer.state.currentRun?.id ?? null;
    this.parent.writer.add({ type, run, at: this.parent.clock.now(), data } as DraftRecord);
  }
}

/**
 * A child that parked on approvals has not finished: no `child.finished`, and the call's output
 * says so (`parkedOn`), so the parent's batch parks with the call open.
 */
function parked(agent: string, child: ChildSession, end: ChildEnd): ToolOutput {
  return {
    content: `[sub-agent ${agent} ${end.status}: ${end.reason}] session ${child.id} waits for approvals`,
    isError: true,
    parkedOn: child.id,
  };
}

function unknownAgent(name: string, agents: AgentCatalog): ToolOutput {
  return {
    content: `Agent type ${JSON.stringify(name)} not found. Available agents: ${agents
      .list()
      .map((a) => a.name)
      .join(', ')}`,
    isError: true,
  };
}

async function parentLinkOf(opts: SessionOptions, session: string): Promise<ParentLink | null> {
  for await (const r of opts.store.read(session, { toSeq: 1 })) {
    if (r.type === 'session.created') return r.data.parent ?? null;
  }
  return null;
}
