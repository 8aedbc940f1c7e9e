import type { Message } from './messages.ts';
import { toolUsesOf } from './messages.ts';

/**
 * Checks what the Messages API requires of a history: it starts with a user message, every
 * tool_use is answered by a tool_result in the next message, and every tool_result answers a
 * tool_use of the message before it. Returns the problems found (empty when valid).
 */
export function historyProblems(messages: readonly Message[]): string[] {
  const problems: string[] = [];
  if (messages.length > 0 && messages[0]!.role !== 'user')
    problems.push('message 0: history must start with a user message');
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    const uses = m.role === 'assistant' ? toolUsesOf(m.content) : [];
    if (uses.length > 0) {
      const next = messages[i + 1];
      const answered = new Set(resultIds(next));
      for (const u of uses) {
        if (!answered.has(u.id))
          problems.push(`message ${i}: tool_use ${u.id} (${u.name}) has no tool_result`);
      }
    }
    if (m.role === 'user') {
      const ids = resultIds(m);
      if (ids.length > 0) {
        const prev = messages[i - 1];
        const asked = new Set(prev?.role === 'assistant' ? toolUsesOf(prev.content).map((u) => u.id) : []);
        for (const id of ids)
          if (!asked.has(id)) problems.push(`message ${i}: tool_result ${id} answers no tool_use`);
      }
    }
  }
  return problems;
}

function resultIds(m: Message | undefined): string[] {
  if (!m || m.role !== 'user' || typeof m.content === 'string') return [];
  const ids: string[] = [];
  for (const b of m.content) if (b.type === 'tool_result') ids.push(b.tool_use_id);
  return ids;
}
