import { z } from 'zod';
import { TodoListSchema, todoCounts } from '../../lib/todos.ts';
import type { Tool } from '../types.ts';

export const TodoWriteInput = z.object({
  todos: TodoListSchema.describe('The updated todo list'),
});
export type TodoWriteInput = z.infer<typeof TodoWriteInput>;

const description = `Creates and updates a structured task list for the current session: it tracks progress on multi-step work and shows the user what is done and what is next.

- Use it for tasks of 3 or more distinct steps, or when the user gives a list of things to do. Skip it for a single trivial step.
- Each call replaces the whole list: send every item, each with content (imperative: "Run the tests"), activeForm (present continuous: "Running the tests") and status (pending, in_progress, completed).
- Keep exactly one item in_progress while working; mark an item completed as soon as it is done, not in batches; never mark an item completed while its tests fail or its work is partial.
- The list is part of the session: it is kept in the session's log and shown by reloop log and the session viewer.`;

export function todoWriteTool(): Tool<TodoWriteInput> {
  return {
    name: 'TodoWrite',
    description,
    inputSchema: TodoWriteInput,
    // It changes nothing outside the session's own log (the list is folded from it).
    isReadOnly: true,
    // Each call replaces the list: two at once would race for which one is current.
    isConcurrencySafe: () => false,
    async call(input) {
      const inProgress = input.todos.filter((t) => t.status === 'in_progress').length;
      const note =
        inProgress > 1
          ? ` Note: ${inProgress} items are in_progress; keep exactly one in progress at a time.`
          : '';
      return {
        content:
          `Todos have been modified successfully (${todoCounts(input.todos)}). Ensure that you continue to ` +
          `use the todo list to track your progress. Please proceed with the current tasks if applicable.${note}`,
      };
    },
  };
}
