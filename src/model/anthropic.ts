import Anthropic from '@anthropic-ai/sdk';
import type { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import { classifyError } from './anthropicErrors.ts';
import { credentialFrom } from './credentials.ts';
import { type ContentBlock, ContentBlockSchema, type Message, StopReasonSchema } from './messages.ts';
import { priceOf, withCost } from './pricing.ts';
import {
  abortedFailure,
  ModelCallError,
  type ModelCallOptions,
  type ModelClient,
  type ModelRequest,
  type ModelResponse,
  type ModelStreamEvent,
} from './types.ts';

export interface AnthropicClientOptions {
  /** Defaults to `ANTHROPIC_API_KEY`. */
  apiKey?: string;
  /** Defaults to `ANTHROPIC_BASE_URL`, then the SDK's default. */
  baseURL?: string;
  /** Time allowed for the response headers; the SDK default (10 min) when unset. */
  timeoutMs?: number;
  defaultHeaders?: Record<string, string>;
}

export { hasApiKey } from './credentials.ts';

/** Thrown at construction: without a key the SDK would go hunting through profile files instead. */
export class MissingApiKeyError extends Error {
  readonly code = 'ANTHROPIC_API_KEY_MISSING';
  constructor() {
    super('No Anthropic API key: set ANTHROPIC_API_KEY or pass apiKey');
    this.name = 'MissingApiKeyError';
  }
}

function blocksOf(content: Message['content']): ContentBlock[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : [...content];
}

// The API rejects empty text blocks, and an assistant turn with nothing in it.
function isEmptyContent(content: Message['content']): boolean {
  if (typeof content === 'string') return content.length === 0;
  return content.every((b) => b.type === 'text' && b.text.length === 0);
}

function withoutEmptyText(content: Message['content']): Message['content'] {
  if (typeof content === 'string') return content;
  return content.some((b) => b.type === 'text' && b.text.length === 0)
    ? content.filter((b) => b.type !== 'text' || b.text.length > 0)
    : content;
}

/**
 * The history as the API accepts it. Our loop may append a user "continue" message right
 * after a user tool_result message, and may hold an empty assistant turn (a stream that died
 * before any content); the API wants strictly alternating roles and no empty turns.
 * The input is never mutated: it is the live history, shared by reference.
 */
export function normalizeHistory(messages: readonly Message[]): Message[] {
  return normalizeFrom([], messages, 0);
}

/**
 * Normalizes `messages[from..]` onto `out`, the normalized form of `messages[..from)`: the
 * normalization is a left fold, so a history that only grew since the last request needs only
 * its new messages folded in.
 */
function normalizeFrom(out: Message[], messages: readonly Message[], from: number): Message[] {
  for (let i = from; i < messages.length; i++) {
    const message = messages[i]!;
    if (isEmptyContent(message.content)) continue;
    const content = withoutEmptyText(message.content);
    const last = out.at(-1);
    if (last?.role !== message.role) {
      out.push(content === message.content ? message : { role: message.role, content });
      continue;
    }
    const merged = [...blocksOf(last.content), ...blocksOf(content)];
    // tool_result blocks must open the user turn that answers the tool_use.
    const ordered =
      message.role === 'user'
        ? [
            ...merged.filter((b) => b.type === 'tool_result'),
            ...merged.filter((b) => b.type !== 'tool_result'),
          ]
        : merged;
    out[out.length - 1] = { role: message.role, content: ordered };
  }
  return out;
}

// The SDK hands back its own block objects (lazy `input` getters, SDK-only fields, block
// types we do not model); keep plain data in our schema so it can be logged and replayed.
function toContent(blocks: readonly unknown[]): ContentBlock[] {
  const plain: unknown[] = JSON.parse(JSON.stringify(blocks));
  const out: ContentBlock[] = [];
  for (const block of plain) {
    const parsed = ContentBlockSchema.safeParse(block);
    if (parsed.success) out.push(parsed.data);
  }
  return out;
}

function toResponse(message: Anthropic.Message, requestedModel: string): ModelResponse {
  const stop = StopReasonSchema.safeParse(message.stop_reason);
  const u = message.usage;
  const counts = {
    inputTokens: u.input_tokens ?? 0,
    outputTokens: u.output_tokens ?? 0,
    cacheReadInputTokens: u.cache_read_input_tokens ?? 0,
    cacheCreationInputTokens: u.cache_creation_input_tokens ?? 0,
  };
  // The response names the exact snapshot; fall back to what we asked for if only that is priced.
  const priced = priceOf(message.model) ? message.model : requestedModel;
  return {
    id: message.id,
    model: message.model,
    content: toContent(message.content),
    stopReason: stop.success ? stop.data : null,
    usage: withCost(priced, counts),
  };
}

export class AnthropicModelClient implements ModelClient {
  readonly kind = 'anthropic';
  readonly #client: Anthropic;
  readonly #apiKey: string;
  /**
   * The last history sent, normalized. The loop's history is one array that only grows (a
   * compaction gives a new one), so the next request folds in only what was appended.
   */
  #sent:
    | {
        source: readonly Message[];
        length: number;
        first: Message | undefined;
        last: Message | undefined;
        out: Message[];
      }
    | undefined;

  constructor(options: AnthropicClientOptions = {}) {
    const apiKey = options.apiKey ?? credentialFrom(process.env);
    if (!apiKey?.trim()) throw new MissingApiKeyError();
    this.#apiKey = apiKey;
    const baseURL = options.baseURL ?? (process.env.ANTHROPIC_BASE_URL || undefined);
    this.#client = new Anthropic({
      apiKey,
      ...(baseURL ? { baseURL } : {}),
      ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
      ...(options.defaultHeaders ? { defaultHeaders: options.defaultHeaders } : {}),
      // Every retry must be a visible transition of our machine, never hidden in the SDK.
      maxRetries: 0,
    });
  }

  private normalized(messages: readonly Message[]): Message[] {
    const sent = this.#sent;
    const grown =
      sent !== undefined &&
      sent.source === messages &&
      messages.length >= sent.length &&
      messages[0] === sent.first &&
      messages[sent.length - 1] === sent.last;
    const out = grown ? normalizeFrom(sent.out, messages, sent.length) : normalizeHistory(messages);
    this.#sent = {
      source: messages,
      length: messages.length,
      first: messages[0],
      last: messages.at(-1),
      out,
    };
    // The SDK gets its own array: the next request extends `out` in place.
    return out.slice();
  }

  async stream(request: ModelRequest, { signal, onEvent }: ModelCallOptions): Promise<ModelResponse> {
    if (signal.aborted) throw new ModelCallError(abortedFailure());
    const params: Anthropic.MessageCreateParamsNonStreaming = {
      model: request.model,
      max_tokens: request.maxTokens,
      // Our persisted shapes are the API's wire shapes (see messages.ts).
      messages: this.normalized(request.messages) as Anthropic.MessageParam[],
      ...(request.system ? { system: request.system } : {}),
      ...(request.tools.length > 0 ? { tools: request.tools as Anthropic.Tool[] } : {}),
    };
    try {
      const stream = this.#client.messages.stream(params, { signal });
      if (onEvent) forwardEvents(stream, onEvent);
      return toResponse(await stream.finalMessage(), request.model);
    } catch (err) {
      throw new ModelCallError(classifyError(err, signal, [this.#apiKey]));
    }
  }
}

function forwardEvents(stream: MessageStream, onEvent: (event: ModelStreamEvent) => void): void {
  let broken = false;
  // Live output is best effort: a failing renderer must not fail (or retry) the model call.
  const emit = (event: ModelStreamEvent) => {
    if (broken) return;
    try {
      onEvent(event);
    } catch {
      broken = true;
    }
  };
  stream.on('text', (text) => emit({ type: 'text', text }));
  stream.on('thinking', (text) => emit({ type: 'thinking', text }));
  stream.on('streamEvent', (event) => {
    if (event.type === 'content_block_start' && event.content_block.type === 'tool_use') {
      emit({ type: 'tool_use_start', name: event.content_block.name, id: event.content_block.id });
    }
  });
}
