import { z } from 'zod';
import { ContentBlockSchema, type Message, StopReasonSchema, UsageSchema } from './messages.ts';

/** A tool as the model sees it (name, description, JSON schema of its input). */
export interface ToolSpec {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

/** One request to the model. `messages` is the live history, passed by reference: never copied per turn. */
export interface ModelRequest {
  model: string;
  system?: string;
  messages: readonly Message[];
  tools: readonly ToolSpec[];
  maxTokens: number;
}

export const ModelResponseSchema = z.object({
  id: z.string(),
  model: z.string(),
  content: z.array(ContentBlockSchema),
  stopReason: StopReasonSchema.nullable(),
  usage: UsageSchema,
});
export type ModelResponse = z.infer<typeof ModelResponseSchema>;

/**
 * How the loop must treat a failed model call. The classification is made by the client
 * (it knows its transport); the statechart's guards only read these fields.
 */
export const ModelFailureSchema = z.object({
  kind: z.enum(['retryable', 'prompt_too_long', 'fatal', 'aborted']),
  /** 529 / overloaded_error: counts towards the switch to the fallback model. */
  overloaded: z.boolean(),
  status: z.number().int().optional(),
  errorType: z.string().optional(),
  message: z.string(),
  retryAfterMs: z.number().nonnegative().optional(),
  /** For prompt_too_long: the `N tokens > M maximum` numbers when the API gave them. */
  promptTokens: z.number().int().optional(),
  maxPromptTokens: z.number().int().optional(),
});
export type ModelFailure = z.infer<typeof ModelFailureSchema>;

/** Streaming events a client may report while a response is being produced (for live output). */
export type ModelStreamEvent =
  | { type: 'text'; text: string }
  | { type: 'thinking'; text: string }
  | { type: 'tool_use_start'; name: string; id: string };

export interface ModelCallOptions {
  signal: AbortSignal;
  onEvent?: (event: ModelStreamEvent) => void;
}

export interface ModelClient {
  /** Short label for logs (`anthropic`, `scripted`, `recorded`). */
  readonly kind: string;
  stream(request: ModelRequest, options: ModelCallOptions): Promise<ModelResponse>;
  /**
   * The client a sub-agent started by the `Task` call `toolUseId` talks to. Absent: the same
   * client (a real API serves every session); a script answers each child from its own part.
   */
  forChild?(toolUseId: string): ModelClient;
}

/** Thrown by model clients; carries the classification the machine routes on. */
export class ModelCallError extends Error {
  readonly code = 'MODEL_CALL_FAILED';
  constructor(readonly failure: ModelFailure) {
    super(failure.message);
    this.name = 'ModelCallError';
  }
}

export function abortedFailure(message = 'aborted'): ModelFailure {
  return { kind: 'aborted', overloaded: false, message };
}

/** Parses `prompt is too long: 210000 tokens > 200000 maximum`. */
export function parsePromptTooLong(
  message: string,
): { promptTokens?: number; maxPromptTokens?: number } | null {
  if (!/prompt is too long/i.test(message)) return null;
  const m = /(\d+)\s*tokens?\s*>\s*(\d+)/i.exec(message);
  if (!m) return {};
  return { promptTokens: Number(m[1]), maxPromptTokens: Number(m[2]) };
}
