import { z } from 'zod';
import type { ToolSpec } from '../model/types.ts';
import type { AnyTool } from './types.ts';

export class DuplicateToolError extends Error {
  readonly code = 'DUPLICATE_TOOL';
  constructor(readonly toolName: string) {
    super(`a tool named ${JSON.stringify(toolName)} is already registered`);
    this.name = 'DuplicateToolError';
  }
}

/** The tools a session offers the model, by name. Their specs are computed once, not per turn. */
export class ToolRegistry {
  private readonly tools = new Map<string, AnyTool>();
  private readonly missing: { prefix: string; why: string }[] = [];
  private specsCache: ToolSpec[] | null = null;

  constructor(tools: readonly AnyTool[] = []) {
    for (const t of tools) this.register(t);
  }

  register(tool: AnyTool): this {
    if (this.tools.has(tool.name)) throw new DuplicateToolError(tool.name);
    this.tools.set(tool.name, tool);
    this.specsCache = null;
    return this;
  }

  get(name: string): AnyTool | undefined {
    return this.tools.get(name);
  }

  /**
   * Names under `prefix` the registry does not hold, and why (an MCP server that failed to start:
   * `mcp__server__`): a call to one gets this reason in its unknown-tool result.
   */
  markUnavailable(prefix: string, why: string): this {
    this.missing.push({ prefix, why });
    return this;
  }

  /** Why a tool of this name is not there, when the registry knows (see markUnavailable). */
  unavailable(name: string): string | undefined {
    return this.missing.find((m) => name.startsWith(m.prefix))?.why;
  }

  names(): string[] {
    return [...this.tools.keys()];
  }

  specs(): ToolSpec[] {
    this.specsCache ??= [...this.tools.values()].map((t) => ({
      name: t.name,
      description: t.description,
      input_schema: toInputSchema(t),
    }));
    return this.specsCache;
  }
}

function toInputSchema(tool: AnyTool): Record<string, unknown> {
  if (tool.jsonSchema) return tool.jsonSchema;
  const json = z.toJSONSchema(tool.inputSchema, { io: 'input', unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  delete json.$schema;
  return json;
}
