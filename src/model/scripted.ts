import { classifyHttpError } from './classify.ts';
import type { ContentBlock, Usage } from './messages.ts';
import { INVALID_REPLY, tooDeepBlock, toolUseIdClash } from './replyChecks.ts';
import { type Script, ScriptError, type ScriptTurn } from './script.ts';
import {
  abortedFailure,
  ModelCallError,
  type ModelCallOptions,
  type ModelClient,
  type ModelRequest,
  type ModelResponse,
} from './types.ts';

export interface ScriptedClientOptions {
  file?: string;
  /** Called for an `{ "abort": true }` turn: the session's abort, so the run sees a real abort. */
  requestAbort?: () => void;
  /** Cost of a response (the price table); default 0. */
  costOf?: (model: string, usage: Omit<Usage, 'costUsd'>) => number | null;
  /**
   * Entries already answered (0-based index of the first one to use): a session resumed in
   * another process (a worker taking over) goes on where its log says the script got to.
   */
  startAt?: number;
}

/**
 * A deterministic model: answers each request with the next entry of a script. Running out
 * of script is an error naming the turn, never a made-up answer.
 */
export class ScriptedModelClient implements ModelClient {
  readonly kind = 'scripted';
  private next = 0;
  /** Requests it was sent, for tests to assert on. */
  readonly requests: ModelRequest[] = [];
  private readonly children = new Map<string, ScriptedModelClient>();

  constructor(
    private readonly script: Script,
    private readonly options: ScriptedClientOptions = {},
  ) {
    this.next = options.startAt ?? 0;
  }

  get consumed(): number {
    return this.next;
  }

  /**
   * The client of the sub-agent started by `toolUseId`: it answers from `children[toolUseId]`
   * (none there: an error naming it when the child asks). One client per call id, so a test can
   * read its `requests`.
   */
  forChild(toolUseId: string): ScriptedModelClient {
    let client = this.children.get(toolUseId);
    if (!client) {
      const own = this.script.children?.[toolUseId];
      const file = `${this.options.file ?? 'script'}, children[${JSON.stringify(toolUseId)}]`;
      client = new ScriptedModelClient(
        { model: own?.model ?? this.script.model, turns: own?.turns ?? [] },
        { ...this.options, file },
      );
      this.children.set(toolUseId, client);
    }
    return client;
  }

  async stream(request: ModelRequest, { signal, onEvent }: ModelCallOptions): Promise<ModelResponse> {
    if (signal.aborted) throw new ModelCallError(abortedFailure());
    const index = this.next;
    const turn = this.script.turns[index];
    if (!turn) {
      throw new ScriptError(
        { file: this.options.file, turn: index + 1 },
        `the script has ${this.script.turns.length} turns and the loop asked for another one`,
      );
    }
    this.next++;
    this.requests.push(request);
    const purpose = isCompactionRequest(request) ? 'compaction' : 'turn';
    if (turn.for && turn.for !== purpose) {
      throw new ScriptError(
        { file: this.options.file, turn: index + 1 },
        `scripted for a ${turn.for} request, but the loop sent a ${purpose} request`,
      );
    }
    return this.answer(turn, index, request, signal, onEvent);
  }

  private async answer(
    turn: ScriptTurn,
    index: number,
    request: ModelRequest,
    signal: AbortSignal,
    onEvent: ModelCallOptions['onEvent'],
  ): Promise<ModelResponse> {
    if ('abort' in turn) {
      if (!this.options.requestAbort) {
        throw new ScriptError(
          { file: this.options.file, turn: index + 1 },
          'an abort turn needs a session to abort',
        );
      }
      this.options.requestAbort();
      if (!signal.aborted) await new Promise<void>((res) => signal.addEventListener('abort', () => res()));
      throw new ModelCallError(abortedFailure('aborted while streaming'));
    }
    if ('error' in turn) {
      const e = turn.error;
      throw new ModelCallError(
        classifyHttpError({
          status: e.status,
          errorType: e.type,
          message: e.message,
          retryAfterMs: e.retry_after_ms,
        }),
      );
    }
    const content: ContentBlock[] = [];
    if (turn.text !== undefined) content.push({ type: 'text', text: turn.text });
    if (turn.content) content.push(...turn.content);
    // A script built in code skips parseScript: the reply is checked as a server's would be.
    const clash = tooDeepBlock(content)?.message ?? toolUseIdClash(content);
    if (clash)
      throw new ModelCallError({
        kind: 'fatal',
        overloaded: false,
        errorType: INVALID_REPLY,
        message: clash,
      });
    if (onEvent) {
      for (const b of content) {
        if (b.type === 'text') onEvent({ type: 'text', text: b.text });
        else if (b.type === 'tool_use') onEvent({ type: 'tool_use_start', name: b.name, id: b.id });
      }
    }
    const model = this.script.model ?? request.model;
    const u = turn.usage;
    const tokens = {
      inputTokens: u?.input_tokens ?? 0,
      outputTokens: u?.output_tokens ?? 0,
      cacheReadInputTokens: u?.cache_read_input_tokens ?? 0,
      cacheCreationInputTokens: u?.cache_creation_input_tokens ?? 0,
    };
    return {
      id: `msg_scripted_${index + 1}`,
      model,
      content,
      stopReason: turn.stop_reason,
      usage: { ...tokens, costUsd: this.options.costOf?.(model, tokens) ?? 0 },
    };
  }
}

/** Compaction requests are recognisable by the summarisation instruction the compactor sends. */
export const COMPACTION_MARKER = '<reloop:compact>';

function isCompactionRequest(request: ModelRequest): boolean {
  return request.system?.includes(COMPACTION_MARKER) ?? false;
}
