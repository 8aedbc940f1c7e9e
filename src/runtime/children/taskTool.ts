import {
  type AgentCatalog,
  TASK_TOOL_NAME,
  type TaskInput,
  TaskInputSchema,
  taskToolDescription,
} from '../../agents/index.ts';
import { ToolRegistry } from '../../tools/registry.ts';
import type { AnyTool, Tool } from '../../tools/types.ts';
import type { Children } from './children.ts';

/** setTimeout's ceiling (~24.8 days): a sub-agent runs as long as its own limits let it. */
const NO_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * Claude Code's `Task` tool: starts a sub-agent. Concurrency-safe, so several calls in one
 * response run as parallel children (up to the orchestrator's 10 at once). Read-only as far
 * as permissions go, as in Claude Code: starting a child changes nothing, and every tool call
 * the child makes is checked by the same policy. (Resume never re-runs it as a read-only
 * tool: a `Task` call in flight is continued from its child's log, see Children.resume.)
 */
export function taskTool(children: Children, agents: AgentCatalog): Tool<TaskInput> {
  return {
    name: TASK_TOOL_NAME,
    description: taskToolDescription(agents.list()),
    inputSchema: TaskInputSchema,
    isReadOnly: true,
    isConcurrencySafe: () => true,
    timeoutMs: NO_TIMEOUT_MS,
    call: (input, ctx) => children.start(ctx.toolUseId, input, ctx.signal),
  };
}

/** The parent's tools plus `Task`. */
export function withTaskTool(base: ToolRegistry, task: AnyTool): ToolRegistry {
  return new ToolRegistry([...base.names().map((n) => base.get(n)!), task]);
}
