import type { ContentBlock, Message } from '../model/messages.ts';
import type { MemoryFile, MemorySource } from './load.ts';

const WHAT: Record<MemorySource, string> = {
  project: 'project instructions, checked into the codebase',
  local: "user's private project instructions, not checked in",
  user: "user's private global instructions for all projects",
};

/**
 * The memory as Claude Code gives it to the model: one `<system-reminder>` of context, with each
 * file under a `Contents of <path> (<what it is>):` heading, in load order. Null when there is none.
 */
export function memoryContext(files: readonly MemoryFile[]): string | null {
  const parts = files
    .filter((f) => f.content.trim() !== '')
    .map((f) => `Contents of ${f.path} (${WHAT[f.source]}):\n\n${f.content.trim()}`);
  if (parts.length === 0) return null;
  return [
    '<system-reminder>',
    "As you answer the user's questions, you can use the following context:",
    '# claudeMd',
    'Codebase and user instructions are shown below. Be sure to adhere to these instructions. ' +
      'IMPORTANT: These instructions OVERRIDE any default behavior and you MUST follow them exactly as written.',
    '',
    parts.join('\n\n'),
    '',
    'IMPORTANT: this context may or may not be relevant to your tasks. You should not respond to this context unless it is highly relevant to your task.',
    '</system-reminder>',
  ].join('\n');
}

/**
 * The request's messages with the memory in front of the first user turn, where Claude Code
 * puts it: a text block before that turn's own content. The history itself is not changed (a
 * compaction never summarises the memory away; each request carries it).
 */
export function withMemory(messages: readonly Message[], context: string | null): Message[] {
  const first = messages[0];
  if (context === null || first === undefined || first.role !== 'user') return messages as Message[];
  const own: ContentBlock[] =
    typeof first.content === 'string' ? [{ type: 'text', text: first.content }] : [...first.content];
  return [{ ...first, content: [{ type: 'text', text: context }, ...own] }, ...messages.slice(1)];
}
