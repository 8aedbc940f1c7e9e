import { z } from 'zod';
import type { Script } from '../../../../src/model/script.ts';
import type { Tool } from '../../../../src/tools/types.ts';

/**
 * The crash test's session: the parent starts one sub-agent, whose second turn calls `hang`
 * (a tool that never returns in the first process: it is killed there).
 */
export function crashTreeScript(): Script {
  return {
    turns: [
      {
        content: [
          {
            type: 'tool_use',
            id: 'toolu_task',
            name: 'Task',
            input: {
              description: 'look around',
              prompt: 'Look at the project and report.',
              subagent_type: 'general-purpose',
            },
          },
        ],
        stop_reason: 'tool_use',
      },
      { text: 'The sub-agent reported: all good.', stop_reason: 'end_turn' },
    ],
    children: {
      toolu_task: {
        turns: [
          {
            content: [
              { type: 'tool_use', id: 'toolu_note', name: 'note', input: { text: 'before the hang' } },
            ],
            stop_reason: 'tool_use',
          },
          {
            content: [{ type: 'tool_use', id: 'toolu_hang', name: 'hang', input: {} }],
            stop_reason: 'tool_use',
          },
          { text: 'Resumed after the crash: the project looks fine.', stop_reason: 'end_turn' },
        ],
      },
    },
  };
}

export const noteTool: Tool<{ text: string }> = {
  name: 'note',
  description: 'Notes something.',
  inputSchema: z.object({ text: z.string() }),
  isReadOnly: false,
  isConcurrencySafe: () => false,
  async call({ text }) {
    return { content: `noted: ${text}` };
  },
};

/** Tells the test it is running, then never returns: the process is killed while it runs. */
export function hangTool(onRunning: () => void): Tool<Record<string, never>> {
  return {
    name: 'hang',
    description: 'Never returns.',
    inputSchema: z.object({}),
    isReadOnly: false,
    isConcurrencySafe: () => false,
    call: () => {
      onRunning();
      return new Promise(() => {});
    },
  };
}
