import { compactedMessages, SUMMARY_PREFIX, summaryText } from '../model/compaction.ts';
import { estimateTokens, type Message } from '../model/messages.ts';
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

export { SUMMARY_PREFIX, summaryText };

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
 * How many recent messages a compaction keeps verbatim within `tailBudgetTokens`. The tail
 * starts at an assistant message, so a tool_use and its tool_result (always in consecutive
 * messages) are never split, and roles keep alternating.
 */
export function keptTail(messages: readonly Message[], tailBudgetTokens: number): number {
  let start = messages.length;
  let used = 0;
  for (let i = messages.length - 1; i >= 1; i--) {
    used += estimateTokens(messages[i]!.content);
    if (used > tailBudgetTokens) break;
    if (messages[i]!.role === 'assistant') start = i;
  }
  return messages.length - start;
}

/** The history after compaction: the summary as a user message, then the kept tail. */
export function compactedHistory(
  messages: readonly Message[],
  summary: string,
  tailBudgetTokens: number,
): Message[] {
  return compactedMessages(messages, summary, keptTail(messages, tailBudgetTokens));
}
