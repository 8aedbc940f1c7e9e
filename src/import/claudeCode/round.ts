import type { ContentBlock, ToolResultBlock, ToolUseBlock } from '../../model/messages.ts';
import { toolUsesOf } from '../../model/messages.ts';
import { withCost } from '../../model/pricing.ts';
import type { ModelResponse } from '../../model/types.ts';
import type { EventOf, RawUsage, TranscriptEvent } from './events.ts';

/**
 * One model response and the tool results that answer it, as the transcript spreads them:
 * streamed chunks sharing `message.id` (each its own line, `stop_reason` null until the end),
 * then one user line per tool result. Lines that come in between and change nothing (progress,
 * notes) wait in `deferred` so the records keep the transcript's order of meaning.
 */
export class Round {
  readonly id: string;
  readonly at: number;
  /** When the last chunk of the response came. */
  lastAt: number;
  /** When the last tool result came (the tool batch's end), or null before the first. */
  resultsAt: number | null = null;
  private model: string;
  private readonly blocks: ContentBlock[] = [];
  private stopReason: ModelResponse['stopReason'] = null;
  private usage: RawUsage = {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadInputTokens: 0,
    cacheCreationInputTokens: 0,
  };
  /** When each tool_use block was streamed (its call starts there). */
  readonly toolAt = new Map<string, number>();
  readonly results = new Map<string, { block: ToolResultBlock; at: number }>();
  /** Blocks of the result lines that are not tool_result (images, hook context…), in order. */
  readonly extra: ContentBlock[] = [];
  readonly deferred: TranscriptEvent[] = [];
  private merged: ModelResponse | null = null;

  constructor(first: EventOf<'assistant'>) {
    this.id = first.id;
    this.at = first.at;
    this.lastAt = first.at;
    this.model = first.model;
    this.add(first);
  }

  add(chunk: EventOf<'assistant'>): void {
    this.merged = null;
    this.lastAt = chunk.at;
    if (chunk.model !== 'unknown') this.model = chunk.model;
    for (const b of chunk.blocks) {
      this.blocks.push(b);
      if (b.type === 'tool_use') this.toolAt.set(b.id, chunk.at);
    }
    if (chunk.stopReason) this.stopReason = chunk.stopReason;
    // Each chunk repeats the usage seen so far; the largest figure of each count is the response's.
    const u = chunk.usage;
    if (u) {
      this.usage = {
        inputTokens: Math.max(this.usage.inputTokens, u.inputTokens),
        outputTokens: Math.max(this.usage.outputTokens, u.outputTokens),
        cacheReadInputTokens: Math.max(this.usage.cacheReadInputTokens, u.cacheReadInputTokens),
        cacheCreationInputTokens: Math.max(this.usage.cacheCreationInputTokens, u.cacheCreationInputTokens),
      };
    }
  }

  toolUses(): ToolUseBlock[] {
    return toolUsesOf(this.blocks);
  }

  /** Whether a result line belongs here: it answers one of this response's tool_use blocks. */
  answers(id: string): boolean {
    return this.toolAt.has(id);
  }

  addResult(block: ToolResultBlock, at: number): void {
    this.results.set(block.tool_use_id, { block, at });
    this.resultsAt = Math.max(this.resultsAt ?? at, at);
  }

  response(): ModelResponse {
    this.merged ??= {
      id: this.id,
      model: this.model,
      content: this.blocks,
      stopReason: this.stopReason,
      usage: withCost(this.model, this.usage),
    };
    return this.merged;
  }
}
