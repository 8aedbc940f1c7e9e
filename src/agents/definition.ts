import { z } from 'zod';

/** The name Claude Code gives the tool that starts a sub-agent; a child never gets it (one level deep). */
export const TASK_TOOL_NAME = 'Task';

/**
 * One kind of sub-agent the `Task` tool can start: Claude Code's `.claude/agents/<name>.md`
 * (YAML front matter + a body that is the child's system prompt), or a built-in one.
 */
export interface AgentDefinition {
  name: string;
  description: string;
  /** Tool names the child is offered; null = every tool of the parent but `Task`. */
  tools: readonly string[] | null;
  /** `inherit` (the parent's model), an alias (`sonnet`, `haiku`, `opus`) or a full model id. */
  model: string;
  /** The child's system prompt. */
  systemPrompt: string;
  /** Where it was defined: a file path, or `built-in`. */
  source: string;
}

const splitCommas = (s: string) =>
  s
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');

const toolList = z.union([
  // Claude Code writes `tools: Read, Grep, Glob`; a YAML or JSON list means the same, and so does
  // a list whose items are themselves comma strings (seen in public collections).
  z
    .string()
    .transform(splitCommas),
  z.array(z.string()).transform((items) => items.flatMap(splitCommas)),
  // `tools:` with nothing after it is YAML null: as if absent (every tool).
  z
    .null()
    .transform(() => undefined),
]);

/** The front matter of an agent file, as Claude Code documents it. Other keys are ignored. */
export const AgentFrontMatterSchema = z.looseObject({
  name: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]*$/i, 'letters, digits, "-" and "_" only (it is the subagent_type)'),
  description: z.string().trim().min(1),
  tools: toolList.optional(),
  model: z
    .string()
    .trim()
    .min(1)
    .nullish()
    .transform((m) => m ?? undefined),
});

/** A definition that cannot be used: the file and the field are named, so the fix is obvious. */
export class AgentDefinitionError extends Error {
  readonly code = 'AGENT_DEFINITION_INVALID';
  constructor(
    readonly file: string,
    readonly field: string | null,
    readonly detail: string,
  ) {
    super(`agent definition ${file}${field ? `, field "${field}"` : ''}: ${detail}`);
    this.name = 'AgentDefinitionError';
  }
}
