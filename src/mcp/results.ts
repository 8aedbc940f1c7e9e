import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** Claude Code's default cap on one MCP tool result, in (estimated) tokens: MAX_MCP_OUTPUT_TOKENS. */
export const DEFAULT_MAX_MCP_OUTPUT_TOKENS = 25_000;

/** The image types the Messages API takes in a tool_result. */
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/** What an image costs against the cap (the API counts roughly this for a mid-size image). */
const IMAGE_TOKENS = 1_600;

type TextPart = { type: 'text'; text: string };
type ImagePart = { type: 'image'; source: { type: 'base64'; media_type: string; data: string } };
export type McpResultBlock = TextPart | ImagePart;

function image(mimeType: string, data: string): ImagePart {
  return { type: 'image', source: { type: 'base64', media_type: mimeType, data } };
}

function describeResource(r: {
  uri: string;
  name?: string;
  mimeType?: string;
  description?: string;
}): string {
  const parts = [r.name ? `${r.name} (${r.uri})` : r.uri];
  if (r.mimeType) parts.push(r.mimeType);
  if (r.description) parts.push(r.description);
  return parts.join(' — ');
}

/**
 * An MCP tool result as Anthropic content blocks: text as text, images (png, jpeg, gif, webp) as
 * image blocks, resource links and embedded resources as text that names them (an embedded text
 * resource with its text, an embedded image as the image), audio and other binaries as a note.
 * `structuredContent` stands in when the server sent no content blocks.
 */
export function contentBlocks(result: CallToolResult): McpResultBlock[] {
  const out: McpResultBlock[] = [];
  for (const c of result.content ?? []) {
    switch (c.type) {
      case 'text':
        out.push({ type: 'text', text: c.text });
        break;
      case 'image':
        if (IMAGE_TYPES.has(c.mimeType)) out.push(image(c.mimeType, c.data));
        else
          out.push({
            type: 'text',
            text: `[image of type ${c.mimeType} omitted: not a type the model can see]`,
          });
        break;
      case 'audio':
        out.push({
          type: 'text',
          text: `[audio (${c.mimeType}, ${Math.round((c.data.length * 3) / 4)} bytes) omitted]`,
        });
        break;
      case 'resource_link':
        out.push({ type: 'text', text: `[Resource link: ${describeResource(c)}]` });
        break;
      case 'resource': {
        const r = c.resource;
        if ('text' in r && typeof r.text === 'string') {
          out.push({ type: 'text', text: `[Resource: ${describeResource(r)}]\n${r.text}` });
        } else if ('blob' in r && r.mimeType && IMAGE_TYPES.has(r.mimeType)) {
          out.push({ type: 'text', text: `[Resource: ${describeResource(r)}]` }, image(r.mimeType, r.blob));
        } else {
          out.push({ type: 'text', text: `[Resource: ${describeResource(r)} — binary content omitted]` });
        }
        break;
      }
      default:
        out.push({
          type: 'text',
          text: `[content of type ${JSON.stringify((c as { type?: unknown }).type)} omitted]`,
        });
    }
  }
  if (out.length === 0 && result.structuredContent !== undefined)
    out.push({ type: 'text', text: JSON.stringify(result.structuredContent) });
  return out;
}

function tokensOf(b: McpResultBlock): number {
  return b.type === 'text' ? Math.ceil(b.text.length / 4) : IMAGE_TOKENS;
}

/**
 * The blocks cut to `maxTokens` (estimated as the rest of reloop does: 4 characters a token,
 * an image ~1 600), with a note at the end that says what was cut and what to do about it.
 */
export function capBlocks(
  blocks: McpResultBlock[],
  maxTokens: number,
  tool: string,
): { blocks: McpResultBlock[]; truncated: boolean } {
  const total = blocks.reduce((n, b) => n + tokensOf(b), 0);
  if (total <= maxTokens) return { blocks, truncated: false };
  const kept: McpResultBlock[] = [];
  let left = maxTokens;
  for (const b of blocks) {
    const cost = tokensOf(b);
    if (cost <= left) {
      kept.push(b);
      left -= cost;
      continue;
    }
    if (b.type === 'text' && left > 0) kept.push({ type: 'text', text: b.text.slice(0, left * 4) });
    break;
  }
  kept.push({
    type: 'text',
    text:
      `[Output truncated: the result of ${tool} was about ${total} tokens, over the limit of ${maxTokens} ` +
      '(MAX_MCP_OUTPUT_TOKENS). If the server has a way to ask for less (pagination, a filter, a narrower query), use it.]',
  });
  return { blocks: kept, truncated: true };
}

/** A single text block as a plain string (what the log and the model read most easily). */
export function compactContent(blocks: McpResultBlock[]): string | McpResultBlock[] {
  if (blocks.length === 0) return '(no content)';
  if (blocks.every((b) => b.type === 'text')) return blocks.map((b) => (b as TextPart).text).join('\n');
  return blocks;
}
