import { type Message, textOf } from './messages.ts';

/**
 * How a compacted history is made of the summary and a kept tail. These rules are part of the
 * log format (schema v2 stores only the response that holds the summary and how many messages
 * were kept), so the fold, the runtime and verify-replay all build it with these functions.
 */
export const SUMMARY_PREFIX =
  'This session continues from an earlier conversation that ran out of context. Summary of it:\n\n';

/** The summary a compaction response holds: its text, trimmed ('' when it has none). */
export function summaryText(content: Message['content']): string {
  return textOf(content).trim();
}

/** The message that opens a compacted history. */
export function summaryMessage(summary: string): Message {
  return { role: 'user', content: [{ type: 'text', text: SUMMARY_PREFIX + summary }] };
}

/** The summary message followed by the last `kept` messages of `history`, verbatim. */
export function compactedMessages(history: readonly Message[], summary: string, kept: number): Message[] {
  return [summaryMessage(summary), ...history.slice(history.length - kept)];
}
