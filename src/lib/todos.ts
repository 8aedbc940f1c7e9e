import { z } from 'zod';

/**
 * One item of the `TodoWrite` list, in Claude Code's shape. Shared by the tool (its input) and
 * the fold of the log (the session's current list), which sit in layers that cannot import
 * each other.
 */
export const TodoItemSchema = z.object({
  content: z.string().min(1).describe('What is to be done, imperative ("Run the tests")'),
  status: z.enum(['pending', 'in_progress', 'completed']),
  activeForm: z.string().min(1).describe('The same in the present continuous ("Running the tests")'),
});
export type TodoItem = z.infer<typeof TodoItemSchema>;

export const TodoListSchema = z.array(TodoItemSchema);

/** The list a TodoWrite input holds, or null when it is not one (a log edited by hand). */
export function todosOf(input: unknown): TodoItem[] | null {
  const todos = (input as { todos?: unknown } | null)?.todos;
  const parsed = TodoListSchema.safeParse(todos);
  return parsed.success ? parsed.data : null;
}

const MARK: Record<TodoItem['status'], string> = { pending: '[ ]', in_progress: '[>]', completed: '[x]' };

/** One line per item: `[x] done`, `[>] Running the tests`, `[ ] pending`. */
export function todoLines(todos: readonly TodoItem[]): string[] {
  return todos.map((t) => `${MARK[t.status]} ${t.status === 'in_progress' ? t.activeForm : t.content}`);
}

export function todoCounts(todos: readonly TodoItem[]): string {
  const n = (s: TodoItem['status']) => todos.filter((t) => t.status === s).length;
  return `${todos.length} todos: ${n('completed')} completed, ${n('in_progress')} in progress, ${n('pending')} pending`;
}
