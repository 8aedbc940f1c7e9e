import type { ToolResultBlock } from '../../model/messages.ts';
import { textOf } from '../../model/messages.ts';
import type { RecordData } from '../../store/records.ts';

type Outcome = RecordData<'tool.finished'>['outcome'];

/** Claude Code's built-in tools that only read: after a crash, resume may run them again. */
const READ_ONLY_TOOLS = new Set(['Read', 'Glob', 'Grep', 'LS', 'WebFetch', 'WebSearch', 'NotebookRead']);

/** Names Claude Code gives the tool that starts a sub-agent (older: Task; newer: Agent). */
export const SUBAGENT_TOOLS = new Set(['Task', 'Agent']);

export function isReadOnlyTool(name: string): boolean {
  return READ_ONLY_TOOLS.has(name);
}

function resultText(block: ToolResultBlock): string {
  return typeof block.content === 'string' ? block.content : textOf(block.content as never);
}

/** The person said no to the call (Claude Code's "doesn't want to proceed" answer). */
export function isRejection(block: ToolResultBlock): boolean {
  return (
    block.is_error === true && /^The user doesn't want to (proceed|take this action)/.test(resultText(block))
  );
}

export function isInterruption(block: ToolResultBlock): boolean {
  return /^\[Request interrupted by user/.test(resultText(block).trim());
}

/** What became of a call, read from its result the way Claude Code words it. */
export function outcomeOf(block: ToolResultBlock): Outcome {
  if (isInterruption(block)) return 'interrupted';
  if (block.is_error !== true) return 'ok';
  if (isRejection(block)) return 'denied';
  const text = resultText(block);
  if (/No such tool available/i.test(text)) return 'unknown_tool';
  if (/InputValidationError/.test(text)) return 'invalid_input';
  return 'error';
}

export function rejectionMessage(block: ToolResultBlock): string {
  return resultText(block).slice(0, 500);
}
