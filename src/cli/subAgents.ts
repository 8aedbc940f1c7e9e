import type { SubAgentsOptions } from '../runtime/children/index.ts';
import { userClaudeDir } from '../settings/index.ts';
import { CommandFailed, EXIT, err } from './io.ts';

/**
 * The agents `reloop run` offers through `Task`: built-in general-purpose, the user's
 * `~/.claude/agents`, the working directory's `.claude/agents` (each when `--setting-sources`
 * has its source), then each `--agents-dir`.
 * An agent file that cannot be used, or a `tools` entry the run does not have, is a warning
 * on stderr naming the file (as in Claude Code): only an unreadable `--agents-dir` stops the run.
 */
export async function subAgentsFor(
  cwd: string,
  dirs: readonly string[],
  toolNames: readonly string[],
  maxTurns: number | undefined,
  /** `--setting-sources`: the user's agents need `user`, the project's `project` (default both). */
  sources: readonly string[] = ['user', 'project'],
  warn: (line: string) => void = (w) => err(`warning: ${w}`),
): Promise<SubAgentsOptions> {
  // Lazily: the YAML parser is not needed for `reloop --help`.
  const { AgentDefinitionError, loadAgents } = await import('../agents/index.ts');
  try {
    const agents = await loadAgents({
      cwd,
      dirs,
      ...(sources.includes('user') ? { userDir: userClaudeDir() } : {}),
      project: sources.includes('project'),
    });
    agents.checkTools(toolNames);
    for (const w of agents.warnings) warn(w);
    return { agents, ...(maxTurns !== undefined ? { maxTurns } : {}) };
  } catch (e) {
    if (e instanceof AgentDefinitionError) throw new CommandFailed(e.message, EXIT.usage, e.code);
    throw e;
  }
}
