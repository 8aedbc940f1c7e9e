import { GENERAL_PURPOSE_AGENT } from './builtin.ts';
import { type AgentDefinition, TASK_TOOL_NAME } from './definition.ts';

/** An MCP tool's full name: it may come to exist once its server has started, so it is kept. */
const MCP_TOOL = /^mcp__[^*?]+__[^*?]+$/;

/** The agents a session's `Task` tool can start, by name (the `subagent_type`). */
export class AgentCatalog {
  private readonly byName = new Map<string, AgentDefinition>();
  private readonly said = new Set<string>();
  /** What loading and checking left out, one line each (the CLI prints them as warnings). */
  readonly warnings: string[] = [];

  constructor(
    definitions: readonly AgentDefinition[] = [GENERAL_PURPOSE_AGENT],
    warnings: readonly string[] = [],
  ) {
    // Later definitions win: a project's file may redefine a built-in or a user's, as in Claude Code.
    for (const d of definitions) this.byName.set(d.name, d);
    for (const w of warnings) this.warn(w);
  }

  get(name: string): AgentDefinition | undefined {
    return this.byName.get(name);
  }

  list(): AgentDefinition[] {
    return [...this.byName.values()];
  }

  /**
   * Each agent keeps the `tools` entries the parent has (and exact `mcp__server__tool` names,
   * whose servers start later); the rest — tools of other runtimes or older versions, MCP globs,
   * `Task` (sub-agents are one level deep) — are left out with a warning naming the file, as
   * Claude Code does. Returns the warnings this call added; calling it again adds none.
   */
  checkTools(known: readonly string[]): string[] {
    const names = new Set(known);
    const added: string[] = [];
    for (const d of this.byName.values()) {
      if (!d.tools) continue;
      const kept = d.tools.filter((t) => t !== TASK_TOOL_NAME && (names.has(t) || MCP_TOOL.test(t)));
      if (kept.length === d.tools.length) continue;
      const dropped = d.tools.filter((t) => !kept.includes(t));
      const why = dropped.includes(TASK_TOOL_NAME)
        ? ` (${TASK_TOOL_NAME}: sub-agents are one level deep)`
        : '';
      const w = `agent definition ${d.source}, field "tools": ${plural(dropped.length, 'tool')} this runtime does not have left out: ${dropped.join(', ')}${why}; the agent gets ${kept.length > 0 ? kept.join(', ') : 'no tools'}`;
      this.byName.set(d.name, { ...d, tools: kept });
      if (this.warn(w)) added.push(w);
    }
    return added;
  }

  private warn(w: string): boolean {
    if (this.said.has(w)) return false;
    this.said.add(w);
    this.warnings.push(w);
    return true;
  }
}

function plural(n: number, word: string): string {
  return n === 1 ? word : `${word}s`;
}
