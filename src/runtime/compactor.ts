import { estimateTokens, type Message, textOf } from '../model/messages.ts';
import { COMPACTION_MARKER } from '../model/scripted.ts';
import type { ModelRequest, ToolSpec } from '../model/types.ts';

/** What a summary must keep for the work to go on. */
export const COMPACTION_SYSTEM = `${COMPACTION_MARKER}
You are compacting the history of a coding-agent session so the work can continue in a fresh context.
Write a summary that keeps, under these headings:
1. Goal — what the user asked for, in their words where it matters.
2. Done so far — what was tried and what worked.
3. Files — files read or changed, with the facts about them that still matter.
4. Commands — commands run and their outcome.
5. Open errors — errors not yet resolved, verbatim where short.
6. Next step — exactly what to do next.
Do not call tools. Reply with the summary only.`;

export const SUMMARY_PREFIX =
  'This session continues from an earlier conversation that ran out of context. Summary of it:\n\n';

export function compactionRequest(
  messages: readonly Message[],
  model: string,
  maxTokens: number,
  tools: readonly ToolSpec[] = [],
): ModelRequest {
  return {
    model,
    system: COMPACTION_SYSTEM,
    // The history plus one instruction; the tail must end on a user turn for the API.
    messages: [...messages, { role: 'user', content: 'Summarise the conversation above as instructed.' }],
    // The tools stay declared (the instruction says not to call them): a history holding
    // tool_use / tool_result blocks with no tools defined is refused by some Messages API servers.
    tools,
    maxTokens,
  };
}

export function estimateHistoryTokens(messages: readonly Message[]): number {
  let n = 0;
  for (const m of messages) n += estimateTokens(m.content);
  return n;
}

/**
 * The history after compaction: the summary as a user message, then a recent tail kept
 * verbatim. The tail starts at an assistant message, so a tool_use and its tool_result
 * (always in consecutive messages) are never split, and roles keep alternating.
 */
export function compactedHistory(
  messages: readonly Message[],
  summary: string,
  tailBudgetTokens: number,
): Message[] {
  let start = messages.length;
  let used = 0;
  for (let i = messages.length - 1; i >= 1; i--) {
    used += estimateTokens(messages[i]!.content);
    if (used > tailBudgetTokens) break;
    if (messages[i]!.role === 'assistant') start = i;
  }
  const head: Message = { role: 'user', content: [{ type: 'text', text: SUMMARY_PREFIX + summary }] };
  return [head, ...messages.slice(start)];
}

export function summaryText(content: Message['content']): string {
  return textOf(content).trim();
}
