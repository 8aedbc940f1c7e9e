import { z } from 'zod';
import type { Script } from '../src/model/script.ts';
import type { Tool } from '../src/tools/types.ts';

/** The benchmarks' workload: a tool that does nothing, asked for once per turn. */
export const noop: Tool<{ n: number }> = {
  name: 'noop',
  description: 'does nothing',
  inputSchema: z.object({ n: z.number() }),
  isReadOnly: true,
  isConcurrencySafe: () => true,
  async call() {
    return { content: 'ok' };
  },
};

/** `rounds` turns that each ask for `noop`, then a final answer. */
export function noopScript(rounds: number): Script {
  const turns: Script['turns'] = [];
  for (let i = 0; i < rounds; i++) {
    turns.push({
      content: [{ type: 'tool_use', id: `t${i}`, name: 'noop', input: { n: i } }],
      stop_reason: 'tool_use',
      usage: {
        input_tokens: 10,
        output_tokens: 5,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
      },
    });
  }
  turns.push({ text: 'done', stop_reason: 'end_turn', usage: undefined });
  return { turns };
}
