import { type AgentCatalog, type AgentDefinition, childModel, TASK_TOOL_NAME } from '../../agents/index.ts';
import type { Usage } from '../../model/messages.ts';
import type { LogRecord, RunConfig } from '../../store/records.ts';
import type { SessionState } from '../../store/sessionState.ts';
import { ToolRegistry } from '../../tools/registry.ts';
import type { AnyTool } from '../../tools/types.ts';
import { type RunSettings, resolveRunConfig } from '../config.ts';

/** What a session needs to offer `Task`: the agents it can start and the children's limits. */
export interface SubAgentsOptions {
  agents: AgentCatalog;
  /** maxTurns of each child's run (default: the parent's). */
  maxTurns?: number;
  /** Every record of every child, as it is added (live output; the parent's own go to `onRecord`). */
  onChildRecord?: (child: string, record: LogRecord, state: SessionState) => void;
}

/** Children run at most this many at a time: the tool orchestrator's limit for concurrency-safe calls. */
export const MAX_PARALLEL_CHILDREN = 10;

/** The tools of a child: its agent's list, or every tool of the parent but `Task` (one level deep). */
export function childRegistry(parent: ToolRegistry, agent: AgentDefinition): ToolRegistry {
  const names = agent.tools ?? parent.names().filter((n) => n !== TASK_TOOL_NAME);
  return new ToolRegistry(names.map((n) => parent.get(n)).filter((t): t is AnyTool => t !== undefined));
}

/**
 * A child's settings: the parent's limits, with the agent's model and system prompt, its own
 * maxTurns, and what is left of the parent run's budget as its budget.
 */
export function childSettings(args: {
  parent: RunSettings | undefined;
  parentConfig: RunConfig;
  spent: Usage;
  agent: AgentDefinition;
  requestedModel: string | undefined;
  maxTurns: number | undefined;
}): RunSettings {
  const { parent, parentConfig: pc, spent, agent } = args;
  const settings: RunSettings = {
    ...parent,
    model: childModel(pc.model, agent.model, args.requestedModel),
    system: agent.systemPrompt,
    maxTurns: args.maxTurns ?? pc.maxTurns,
  };
  if (pc.maxBudgetUsd !== null)
    settings.maxBudgetUsd = Math.max(pc.maxBudgetUsd - spent.costUsd, Number.MIN_VALUE);
  if (pc.maxBudgetTokens !== null) {
    const used = spent.inputTokens + spent.outputTokens;
    settings.maxBudgetTokens = Math.max(pc.maxBudgetTokens - used, 1);
  }
  return settings;
}

/** The parent run's config; a Task call always runs inside a run, but a bare config is safe. */
export function configOf(state: SessionState, settings: RunSettings | undefined): RunConfig {
  return state.currentRun?.config ?? resolveRunConfig(settings);
}
