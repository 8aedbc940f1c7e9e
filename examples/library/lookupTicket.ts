import type { Tool } from 'reloop';
import { z } from 'zod';

const tickets: Record<string, { status: string; title: string }> = {
  'T-1': { status: 'open', title: 'Login fails on Safari' },
  'T-2': { status: 'closed', title: 'Invoice totals off by one cent' },
};

/** A tool of your own: its input is checked against the zod schema before `call` sees it. */
export const lookupTicket: Tool<{ id: string }> = {
  name: 'lookupTicket',
  description: 'Looks up a support ticket by its id (T-<number>) and returns it as JSON.',
  inputSchema: z.object({ id: z.string().regex(/^T-\d+$/) }),
  isReadOnly: true, // re-run after a crash instead of reported as interrupted
  isConcurrencySafe: () => true, // several lookups in one turn run in parallel
  async call({ id }) {
    const ticket = tickets[id];
    if (!ticket) return { content: `no ticket ${id}`, isError: true };
    return { content: JSON.stringify({ id, ...ticket }) };
  },
};
