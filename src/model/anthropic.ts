import Anthropic from '@anthropic-ai/sdk';
import type { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import { classifyError } from './anthropicErrors.ts';
import { credentialFrom } from './credentials.ts';
import type { ContentBlock, Message } from './messages.ts';
import { priceOf, withCost } from './pricing.ts';
import { missingUsage, notAnEventStream, readReply, tooDeepBlock, tooDeepReply } from './replyChecks.ts';
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

/**
 * Our response from the SDK's message. The SDK hands back its own block objects (lazy `input`
 * getters, SDK-only fields): they are copied to plain data in our schema so they can be logged
 * and replayed. A reply the loop cannot use is a fatal error saying why (replyChecks.ts).
 */
function toResponse(message: Anthropic.Message, requestedModel: string): ModelResponse {
  // Before the copy: JSON.stringify itself overflows on content nested ~4 500 deep.
  const deep = tooDeepBlock(message.content ?? []);
  if (deep) throw tooDeepReply(deep);
  const plain: unknown[] = JSON.parse(JSON.stringify(message.content ?? []));
  const { content, stopReason } = readReply(plain, message.stop_reason);
  const u = message.usage;
  if (!u) throw missingUsage('message.usage');
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
    content,
    stopReason,
    usage: withCost(priced, counts),
  };
}

export class AnthropicModelClient implements ModelClient {
  readonly kind = 'anthropic';
  readonly #client: Anthropic;
  readonly #apiKey: string;
  readonly #baseURL: string;
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
    this.#baseURL = baseURL ?? 'https://api.anthropic.com';
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
    let stream: MessageStream | undefined;
    let usageMissing: string | null = null;
    try {
      stream = this.#client.messages.stream(params, { signal });
      // The SDK reads usage off message_start and crashes on the first delta without it.
      stream.on('streamEvent', (event) => {
        if (event.type === 'message_start' && !event.message.usage)
          usageMissing = 'message_start.message.usage';
      });
      if (onEvent) forwardEvents(stream, onEvent);
      return toResponse(await stream.finalMessage(), request.model);
    } catch (err) {
      throw new ModelCallError(
        classifyError(this.#unusable(err, stream, usageMissing, signal), signal, [this.#apiKey]),
      );
    }
  }

  /**
   * A reply that is not a Messages API stream, told apart from a dropped connection (which is
   * retried): a 2xx answer that is not an event stream, a stream without usage, or events the
   * SDK cannot read. Anything else is left to classifyError.
   */
  #unusable(
    err: unknown,
    stream: MessageStream | undefined,
    usageMissing: string | null,
    signal: AbortSignal,
  ): unknown {
    if (signal.aborted || err instanceof ModelCallError) return err;
    const response = stream?.response;
    if (response?.ok) {
      const type = response.headers.get('content-type');
      if (!type?.toLowerCase().includes('text/event-stream'))
        return notAnEventStream(response.status, type, this.#baseURL);
    }
    if (usageMissing) return missingUsage(usageMissing);
    if (err instanceof TypeError && response?.ok) {
      return new ModelCallError({
        kind: 'fatal',
        overloaded: false,
        errorType: 'invalid_reply',
        message: `the server's event stream is not one the Messages API sends (${err.message})`,
      });
    }
    return err;
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
