import { sameJson } from '../lib/sameJson.ts';
import { compactedMessages, summaryText } from '../model/compaction.ts';
import type { ContentBlock, Message, ToolResultBlock } from '../model/messages.ts';
import { LogReferenceError } from './errors.ts';
import type { MessageOrigin, RecordData, RecordOf } from './records.ts';
import type { SessionState, UnappendedResult } from './sessionState.ts';

/*
 * Schema v2 stores each piece of content once: a record whose content is already in an earlier
 * record refers to it instead of copying it. This file holds both directions of that rule — how
 * the writer chooses a reference (only when the fold will rebuild exactly the same value) and
 * how the fold resolves one — so they cannot drift apart.
 */

// ---- Resolving (the fold)

/** A tool_result block as the loop builds it: `is_error` only when true. */
export function toolResultBlock(
  toolUseId: string,
  result: { content: unknown; isError: boolean },
): ToolResultBlock {
  const block: ToolResultBlock = {
    type: 'tool_result',
    tool_use_id: toolUseId,
    content: result.content as ToolResultBlock['content'],
  };
  if (result.isError) block.is_error = true;
  return block;
}

function latestResponse(state: SessionState, session: string, at: number, ref: number) {
  const last = state.lastResponse;
  if (last?.seq !== ref) {
    throw new LogReferenceError(
      session,
      at,
      `refers to model.responded seq ${ref}, but the latest response is ${last ? `seq ${last.seq}` : 'none'}`,
    );
  }
  return last;
}

function withoutToolUse(content: readonly ContentBlock[]): ContentBlock[] {
  return content.filter((b) => b.type !== 'tool_use');
}

function unappendedBySeq(state: SessionState, seq: number): UnappendedResult | undefined {
  for (const r of state.unappendedResults.values()) if (r.seq === seq) return r;
  return undefined;
}

/** The message a `message.appended` record stands for, as of the state just before it. */
export function appendedMessage(state: SessionState, record: RecordOf<'message.appended'>): Message {
  const d = record.data;
  if (d.message) return d.message;
  if (d.response !== undefined) {
    const last = latestResponse(state, record.session, record.seq, d.response);
    return {
      role: 'assistant',
      content: d.partial ? withoutToolUse(last.content) : (last.content as ContentBlock[]),
    };
  }
  const blocks: ToolResultBlock[] = [];
  for (const seq of d.results ?? []) {
    const found = unappendedBySeq(state, seq);
    if (!found) {
      throw new LogReferenceError(
        record.session,
        record.seq,
        `refers to tool.finished seq ${seq}, which is not a tool result waiting to be appended`,
      );
    }
    blocks.push(toolResultBlock(found.toolUseId, found));
  }
  return { role: 'user', content: blocks };
}

function toolUseIn(content: readonly ContentBlock[] | undefined, id: string) {
  if (!content) return undefined;
  for (const b of content) if (b.type === 'tool_use' && b.id === id) return b;
  return undefined;
}

/** The input of a `tool.started` record: its own, or (v2) its tool_use block's in the latest response. */
export function startedInput(state: SessionState, record: RecordOf<'tool.started'>): unknown {
  if (record.data.input !== undefined) return record.data.input;
  const use = toolUseIn(state.lastResponse?.content, record.data.toolUseId);
  if (!use) {
    throw new LogReferenceError(
      record.session,
      record.seq,
      `tool.started has no input and the latest response has no tool_use ${record.data.toolUseId}`,
    );
  }
  return use.input;
}

/** The history after a successful `compaction.finished`, as of the state just before it. */
export function compactedHistoryOf(state: SessionState, record: RecordOf<'compaction.finished'>): Message[] {
  const d = record.data;
  if (!d.ok) throw new Error('compactedHistoryOf: a failed compaction has no history');
  if (d.messages) return d.messages;
  const last = latestResponse(state, record.session, record.seq, d.response ?? 0);
  const kept = d.kept ?? 0;
  if (kept > state.messages.length) {
    throw new LogReferenceError(
      record.session,
      record.seq,
      `keeps ${kept} messages of a history of ${state.messages.length}`,
    );
  }
  return compactedMessages(state.messages.view(), summaryText(last.content as ContentBlock[]), kept);
}

// ---- Referring (the writer)

function sameBlocksAs(content: readonly ContentBlock[], kept: readonly ContentBlock[]): boolean {
  if (content.length !== kept.length) return false;
  for (let i = 0; i < kept.length; i++) if (content[i] !== kept[i]) return false;
  return true;
}

function resultSeqs(state: SessionState, content: readonly ContentBlock[]): number[] | null {
  if (content.length === 0 || state.unappendedResults.size === 0) return null;
  const seqs: number[] = [];
  for (const b of content) {
    if (b.type !== 'tool_result') return null;
    const r = state.unappendedResults.get(b.tool_use_id);
    if (!r || (b.is_error === undefined ? r.isError : b.is_error !== true || !r.isError)) return null;
    if (b.content !== r.content && !sameJson(b.content, r.content)) return null;
    // A block with fields of its own beyond these would not be rebuilt by the reference.
    if (!sameJson(b, toolResultBlock(b.tool_use_id, r))) return null;
    seqs.push(r.seq);
  }
  return seqs;
}

/**
 * The data of a `message.appended` record for `message`: a reference when the state holds its
 * content (the latest response, or unappended tool results), else the message itself. A
 * reference is only chosen when resolving it rebuilds exactly this message.
 */
export function appendedData(
  state: SessionState,
  message: Message,
  origin: MessageOrigin,
): RecordData<'message.appended'> {
  const content = message.content;
  if (typeof content !== 'string') {
    const last = state.lastResponse;
    if (message.role === 'assistant' && last) {
      if (content === last.content || sameBlocksAs(content, last.content))
        return { origin, response: last.seq };
      if (sameBlocksAs(content, withoutToolUse(last.content)))
        return { origin, response: last.seq, partial: true };
    }
    if (message.role === 'user') {
      const results = resultSeqs(state, content);
      if (results) return { origin, results };
    }
  }
  return { message, origin };
}

/** The data of a `tool.started` record: without `input` when it is the tool_use block's own. */
export function startedData(
  state: SessionState,
  call: RecordData<'tool.started'>,
): RecordData<'tool.started'> {
  const use = toolUseIn(state.lastResponse?.content, call.toolUseId);
  if (use && use.name === call.name && sameJson(use.input, call.input)) {
    const { input: _same, ...rest } = call;
    return rest;
  }
  return call;
}

// ---- Describing (viewers of one record, without the fold)

/** Where a v2 `message.appended` takes its content from, in words; null when it holds the message. */
export function appendedSource(d: RecordData<'message.appended'>): string | null {
  if (d.message) return null;
  if (d.response !== undefined)
    return `the response at seq ${d.response}${d.partial ? ' without its tool_use blocks' : ''}`;
  return `the tool results at seq ${(d.results ?? []).join(', ')}`;
}

/** How many messages a successful compaction leaves in the history (the summary message and the kept tail). */
export function compactedLength(d: Extract<RecordData<'compaction.finished'>, { ok: true }>): number {
  return d.messages?.length ?? (d.kept ?? 0) + 1;
}
