import { z } from 'zod';
import type { AgentDefinition } from './definition.ts';

/** Claude Code's `Task` input. */
export const TaskInputSchema = z.object({
  description: z.string().describe('A short (3-5 word) description of the task'),
  prompt: z.string().describe('The task for the agent to perform'),
  subagent_type: z.string().describe('The type of specialized agent to use for this task'),
  model: z
    .enum(['sonnet', 'opus', 'haiku'])
    .optional()
    .describe("Optional model for this agent; by default the agent definition's model"),
});
export type TaskInput = z.infer<typeof TaskInputSchema>;

/** What the model is told about `Task`: how it works and which agents it can start. */
export function taskToolDescription(agents: readonly AgentDefinition[]): string {
  const list = agents
    .map((a) => `- ${a.name}: ${a.description} (Tools: ${a.tools ? a.tools.join(', ') : '*'})`)
    .join('\n');
  return [
    'Launch a new agent to handle a complex, multi-step task on its own, in its own context window.',
    '',
    'Available agent types and the tools they have access to:',
    list,
    '',
    'When using the Task tool, specify a subagent_type to select the agent type to use.',
    '- Launch several agents at once when the tasks are independent: put several Task calls in one message.',
    '- The agent returns one message when it is done; it is not visible to the user: summarise it for them.',
    '- Each invocation is stateless: the prompt must hold everything the agent needs, and say what it should report back.',
  ].join('\n');
}
