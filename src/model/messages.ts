import { z } from 'zod';

/**
 * Content blocks and messages in the Anthropic Messages API shape. These are persisted
 * (they travel inside log records), so the zod schemas are the source of the types.
 * Unknown server block types are kept loosely so a newer API does not break old readers.
 */
export const TextBlockSchema = z.object({ type: z.literal('text'), text: z.string() });
export const ThinkingBlockSchema = z.object({
  type: z.literal('thinking'),
  thinking: z.string(),
  signature: z.string().optional(),
});
export const RedactedThinkingBlockSchema = z.object({
  type: z.literal('redacted_thinking'),
  data: z.string(),
});
export const ToolUseBlockSchema = z.object({
  type: z.literal('tool_use'),
  id: z.string().min(1),
  name: z.string().min(1),
  input: z.unknown(),
});
export const ToolResultContentSchema = z.union([
  z.string(),
  z.array(z.union([TextBlockSchema, z.looseObject({ type: z.string() })])),
]);
export const ToolResultBlockSchema = z.object({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: ToolResultContentSchema,
  is_error: z.boolean().optional(),
});
export const ServerBlockSchema = z.looseObject({
  type: z.enum(['server_tool_use', 'web_search_tool_result', 'image', 'document']),
});

export const ContentBlockSchema = z.discriminatedUnion('type', [
  TextBlockSchema,
  ThinkingBlockSchema,
  RedactedThinkingBlockSchema,
  ToolUseBlockSchema,
  ToolResultBlockSchema,
  ServerBlockSchema,
]);

export const MessageSchema = z.object({
  role: z.enum(['user', 'assistant']),
  content: z.union([z.string(), z.array(ContentBlockSchema)]),
});

export type TextBlock = z.infer<typeof TextBlockSchema>;
export type ToolUseBlock = z.infer<typeof ToolUseBlockSchema>;
export type ToolResultBlock = z.infer<typeof ToolResultBlockSchema>;
export type ContentBlock = z.infer<typeof ContentBlockSchema>;
export type Message = z.infer<typeof MessageSchema>;

/** The seven stop reasons of the Messages API (`@anthropic-ai/sdk` StopReason). */
export const StopReasonSchema = z.enum([
  'end_turn',
  'tool_use',
  'max_tokens',
  'stop_sequence',
  'refusal',
  'pause_turn',
  'model_context_window_exceeded',
]);
export type StopReason = z.infer<typeof StopReasonSchema>;

export const UsageSchema = z.object({
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  cacheReadInputTokens: z.number().int().nonnegative(),
  cacheCreationInputTokens: z.number().int().nonnegative(),
  /** Estimated cost in USD; 0 when the model has no entry in the price table. */
  costUsd: z.number().nonnegative(),
});
export type Usage = z.infer<typeof UsageSchema>;

export const ZERO_USAGE: Usage = Object.freeze({
  inputTokens: 0,
  outputTokens: 0,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 0,
  costUsd: 0,
});

export function addUsage(a: Usage, b: Usage): Usage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadInputTokens: a.cacheReadInputTokens + b.cacheReadInputTokens,
    cacheCreationInputTokens: a.cacheCreationInputTokens + b.cacheCreationInputTokens,
    // Rounded to 1e-9 so sums of many small prices do not drift in logs and comparisons.
    costUsd: Math.round((a.costUsd + b.costUsd) * 1e9) / 1e9,
  };
}

/** Tokens the last request occupied in the context window (input side, including cache). */
export function contextTokensOf(u: Usage): number {
  return u.inputTokens + u.cacheReadInputTokens + u.cacheCreationInputTokens + u.outputTokens;
}

export function toolUsesOf(content: Message['content']): ToolUseBlock[] {
  if (typeof content === 'string') return [];
  const out: ToolUseBlock[] = [];
  for (const b of content) if (b.type === 'tool_use') out.push(b);
  return out;
}

export function hasToolUse(content: Message['content']): boolean {
  if (typeof content === 'string') return false;
  for (const b of content) if (b.type === 'tool_use') return true;
  return false;
}

export function textOf(content: Message['content']): string {
  if (typeof content === 'string') return content;
  let s = '';
  for (const b of content) if (b.type === 'text') s += b.text;
  return s;
}

/** Rough token estimate (4 characters a token) for content appended since the last response. */
export function estimateTokens(content: Message['content']): number {
  if (typeof content === 'string') return Math.ceil(content.length / 4);
  let chars = 0;
  for (const b of content) {
    switch (b.type) {
      case 'text':
        chars += b.text.length;
        break;
      case 'tool_result':
        chars += typeof b.content === 'string' ? b.content.length : JSON.stringify(b.content).length;
        break;
      case 'tool_use':
        chars += JSON.stringify(b.input ?? null).length + b.name.length;
        break;
      case 'thinking':
        chars += b.thinking.length;
        break;
      default:
        chars += 64;
    }
  }
  return Math.ceil(chars / 4);
}
