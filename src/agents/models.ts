/**
 * Claude Code's model aliases for sub-agents. An agent file (or a `Task` call) may say
 * `inherit`, an alias, or a full model id.
 */
export const MODEL_ALIASES: Readonly<Record<string, string>> = {
  sonnet: 'claude-sonnet-4-6',
  opus: 'claude-opus-4-6',
  haiku: 'claude-haiku-4-5',
};

/** The model a child asks for: the `Task` call's choice, else its agent's, `inherit` = the parent's. */
export function childModel(parentModel: string, agentModel: string, requested?: string): string {
  const choice = requested ?? agentModel;
  if (choice === 'inherit') return parentModel;
  return MODEL_ALIASES[choice] ?? choice;
}
