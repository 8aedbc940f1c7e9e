import type { Tool } from 'reloop';
import { coverageOf, runSession, scriptedModel, text, toolUse } from 'reloop/testing';
import { expect, it } from 'vitest';
import { z } from 'zod';

const lookupTicket: Tool<{ id: string }> = {
  name: 'lookupTicket',
  description: 'Looks up a support ticket.',
  inputSchema: z.object({ id: z.string() }),
  isReadOnly: true,
  isConcurrencySafe: () => true,
  async call({ id }) {
    return { content: `${id}: open` };
  },
};

it('a two-turn conversation: the second answer sees the first, and the denied call is counted', async () => {
  const { results, records } = await runSession({
    model: scriptedModel([
      toolUse('lookupTicket', { id: 'T-1' }),
      text('T-1 is open.'),
      toolUse('lookupTicket', { id: 'T-2' }),
      text('I may not look at T-2.'),
    ]),
    prompts: ['How is T-1?', 'And T-2?'],
    tools: [lookupTicket],
    canUseTool: ({ input }) =>
      (input as { id: string }).id === 'T-2'
        ? { behavior: 'deny', message: 'not your team' }
        : { behavior: 'allow' },
  });
  expect(results.map((r) => r.status)).toEqual(['completed', 'completed']);
  // Reasons alone say tool_result_continuation twice; the outcomes tell the calls apart.
  expect(coverageOf(records).tools.lookupTicket).toMatchObject({ ok: 1, denied: 1 });
});
