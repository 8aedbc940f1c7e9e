import type { SubAgentsOptions } from '../runtime/children/index.ts';
import { CommandFailed, EXIT } from './io.ts';

/**
 * The agents `reloop run` offers through `Task`: built-in general-purpose, the working
 * directory's `.claude/agents`, then each `--agents-dir`. Checked against the run's tools
 * before anything is written: a bad agent file is a start-up error naming the file and field.
 */
export async function subAgentsFor(
  cwd: string,
  dirs: readonly string[],
  toolNames: readonly string[],
  maxTurns: number | undefined,
): Promise<SubAgentsOptions> {
  // Lazily: the YAML parser is not needed for `reloop --help`.
  const { AgentDefinitionError, loadAgents } = await import('../agents/index.ts');
  try {
    const agents = await loadAgents({ cwd, dirs });
    agents.checkTools(toolNames);
    return { agents, ...(maxTurns !== undefined ? { maxTurns } : {}) };
  } catch (e) {
    if (e instanceof AgentDefinitionError) throw new CommandFailed(e.message, EXIT.usage, e.code);
    throw e;
  }
}
