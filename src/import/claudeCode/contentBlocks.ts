import { z } from 'zod';
import { type ContentBlock, ContentBlockSchema, type Message } from '../../model/messages.ts';

/**
 * Content blocks of a transcript line, checked against reloop's message schema before they go
 * into a record: the store validates every record, and one block it cannot accept would fail
 * the whole session's write. A block the schema has no place for is left out and named, so the
 * mapper can keep it as an `import.unmapped` note.
 */

// Compiled once (zod's straight-line parser): content blocks are most of a transcript's bytes.
const parseBlock = z.compile(ContentBlockSchema) as {
  safeParse(raw: unknown): { success: true; data: ContentBlock } | { success: false };
};

export interface Blocks {
  blocks: ContentBlock[];
  /** One line per block left out: its type and why. */
  dropped: string[];
}

function describe(raw: unknown): string {
  const type = (raw as { type?: unknown })?.type;
  return typeof type === 'string' ? type : typeof raw;
}

export function parseBlocks(raw: readonly unknown[]): Blocks {
  const blocks: ContentBlock[] = [];
  const dropped: string[] = [];
  for (const item of raw) {
    let candidate = item;
    // Claude Code writes an empty tool_result without `content`; the API reads it as "".
    if (
      item &&
      typeof item === 'object' &&
      (item as { type?: unknown }).type === 'tool_result' &&
      (item as { content?: unknown }).content === undefined
    ) {
      candidate = { ...item, content: '' };
    }
    const parsed = parseBlock.safeParse(candidate);
    if (parsed.success) blocks.push(parsed.data);
    else dropped.push(`content block of type ${describe(item)} has no place in reloop's message schema`);
  }
  return { blocks, dropped };
}

/** A message's content from a transcript line: a string stays a string. */
export function parseContent(raw: unknown): { content: Message['content']; dropped: string[] } | null {
  if (typeof raw === 'string') return { content: raw, dropped: [] };
  if (!Array.isArray(raw)) return null;
  const { blocks, dropped } = parseBlocks(raw);
  return { content: blocks, dropped };
}
