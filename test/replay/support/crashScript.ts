import { z } from 'zod';
import type { Script } from '../../../src/model/script.ts';
import type { Tool } from '../../../src/tools/types.ts';

/** The session the crash test kills: tool rounds mixing read-only and writing tools. */
export const ROUNDS = 40;

export function crashScript(): Script {
  const usage = {
    input_tokens: 50,
    output_tokens: 10,
    cache_read_input_tokens: 0,
    cache_creation_input_tokens: 0,
  };
  const turns: Script['turns'] = [];
  for (let i = 0; i < ROUNDS; i++) {
    turns.push({
      content: [
        { type: 'text', text: `round ${i}` },
        { type: 'tool_use', id: `look_${i}`, name: 'look', input: { i } },
        { type: 'tool_use', id: `note_${i}`, name: 'note', input: { i } },
      ],
      stop_reason: 'tool_use',
      usage,
    });
  }
  turns.push({ text: 'all rounds done', stop_reason: 'end_turn', usage });
  return { turns };
}

/** A read-only tool: safe to re-run on resume. A little slow so kills land while tools run. */
export const lookTool: Tool<{ i: number }> = {
  name: 'look',
  description: 'reads nothing, slowly',
  inputSchema: z.object({ i: z.number() }),
  isReadOnly: true,
  isConcurrencySafe: () => true,
  async call(input) {
    await new Promise((r) => setTimeout(r, 3));
    return { content: `looked ${input.i}` };
  },
};

/** A tool with an effect: never re-run on resume, it gets an "interrupted" result instead. */
export const noteTool: Tool<{ i: number }> = {
  name: 'note',
  description: 'pretends to write',
  inputSchema: z.object({ i: z.number() }),
  isReadOnly: false,
  isConcurrencySafe: () => false,
  async call(input) {
    await new Promise((r) => setTimeout(r, 2));
    return { content: `noted ${input.i}` };
  },
};
