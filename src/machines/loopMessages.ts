import type { ContentBlock, Message, ToolResultBlock, ToolUseBlock } from '../model/messages.ts';
import type { ModelResponse } from '../model/types.ts';

/** The texts the loop itself adds to the history. Changing one changes what replay expects. */
export const MAX_TOKENS_CONTINUE_TEXT =
  'Output token limit hit. Resume directly where you stopped — no apology, no recap. ' +
  'Pick up mid-thought if that is where the cut happened, and break the remaining work into smaller pieces.';
export const MAX_TURNS_MARKER = '[max_turns_reached]';
export const STOP_HOOK_FEEDBACK_PREFIX = 'Stop hook feedback:\n';
export const SUBAGENT_STOP_HOOK_FEEDBACK_PREFIX = 'SubagentStop hook feedback:\n';

export function assistantMessage(response: ModelResponse): Message {
  return { role: 'assistant', content: response.content };
}

/**
 * What of a cut-off response goes into the history on recovery: the text and thinking, not a
 * tool_use whose input JSON was cut (it cannot be run and would need a tool_result).
 */
export function partialOutput(response: ModelResponse): Message | null {
  const kept: ContentBlock[] = response.content.filter((b) => b.type !== 'tool_use');
  return kept.length > 0 ? { role: 'assistant', content: kept } : null;
}

export function userText(text: string): Message {
  return { role: 'user', content: [{ type: 'text', text }] };
}

export function toolResultsMessage(results: readonly ToolResultBlock[]): Message {
  return { role: 'user', content: [...results] };
}

/** Results for tool_use blocks that never ran, so every tool_use keeps its tool_result. */
export function syntheticResults(toolUses: readonly ToolUseBlock[], why: string): ToolResultBlock[] {
  return toolUses.map((t) => ({
    type: 'tool_result',
    tool_use_id: t.id,
    content: `[interrupted] ${t.name} was not run: ${why}`,
    is_error: true,
  }));
}
