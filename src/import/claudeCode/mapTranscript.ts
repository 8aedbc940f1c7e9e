import {
  type ContentBlock,
  estimateTokens,
  type Message,
  type ToolResultBlock,
  type ToolUseBlock,
  textOf,
} from '../../model/messages.ts';
import { type ModelFailure, parsePromptTooLong } from '../../model/types.ts';
import type { DraftRecord } from '../../store/records.ts';
import { done, failed } from '../chartWalk.ts';
import type { EventOf, TranscriptEvent } from './events.ts';
import { Round } from './round.ts';
import { type PendingTools, RunRecorder } from './runRecorder.ts';
import {
  isInterruption,
  isReadOnlyTool,
  isRejection,
  outcomeOf,
  rejectionMessage,
  SUBAGENT_TOOLS,
} from './toolOutcome.ts';

/** What a parent transcript says about the sub-agents it started and the compactions it made. */
export interface TranscriptLinks {
  /** Task / Agent calls by toolUseId: the run they were made in and what they asked. */
  tasks: Map<string, { run: string; agent: string | null; prompt: string | null }>;
  /** agentId → toolUseId of the call that ran that sub-agent. */
  agents: Map<string, string>;
  /** Compactions, in order: the index of their record among the drafts, their run, time and summary. */
  compactions: { draft: number; run: string | null; at: number; summary: string }[];
}

export interface MappedTranscript {
  /** Every record but `session.created`, which the importer writes first once it knows the parent. */
  drafts: DraftRecord[];
  transitions: number;
  unmapped: number;
  malformed: number;
  bookkeeping: Record<string, number>;
  links: TranscriptLinks;
  firstPrompt: string | null;
  lastAssistantText: string | null;
  firstAt: number | null;
  lastAt: number | null;
}

/** Events that change nothing in the loop: they wait while a response and its tools are open. */
const NEUTRAL = new Set(['bookkeeping', 'unmapped', 'malformed', 'userMeta', 'syntheticAssistant']);
/** The transcript's own name for the lines a note can be about. */
const LINE_TYPE_OF: Partial<Record<TranscriptEvent['kind'], string>> = {
  stopHookSummary: 'system:stop_hook_summary',
  compactBoundary: 'system:compact_boundary',
};
const RETRYABLE_STATUS = (s: number | null) => s === null || s === 408 || s === 409 || s === 429 || s >= 500;

/**
 * Maps a classified transcript to records, inferring the chart's transitions (docs/import.md
 * has the rules). One pass, with look-ahead where the transcript only tells later what a line
 * meant (was an API error retried? did a compaction follow?). Every transition goes through
 * the run's ChartWalk, so only the chart's own edges can come out.
 */
export function mapTranscript(events: readonly TranscriptEvent[]): MappedTranscript {
  return new TranscriptMapper(events).map();
}

class TranscriptMapper {
  private readonly out = new RunRecorder();
  private round: Round | null = null;
  private readonly consumed = new Set<number>();
  /** The tool batch the last unfinished run left open: the next run finishes it. */
  private repairs: PendingTools | null = null;
  private readonly result: MappedTranscript = {
    drafts: this.out.drafts,
    transitions: 0,
    unmapped: 0,
    malformed: 0,
    bookkeeping: {},
    links: { tasks: new Map(), agents: new Map(), compactions: [] },
    firstPrompt: null,
    lastAssistantText: null,
    firstAt: null,
    lastAt: null,
  };

  constructor(private readonly events: readonly TranscriptEvent[]) {}

  map(): MappedTranscript {
    for (let i = 0; i < this.events.length; i++) {
      if (this.consumed.has(i)) continue;
      const e = this.events[i]!;
      this.result.firstAt ??= e.at;
      this.result.lastAt = e.at;
      if (NEUTRAL.has(e.kind)) {
        if (this.round) this.round.deferred.push(e);
        else this.neutral(e);
        continue;
      }
      this.event(e, i);
    }
    if (this.round) this.closeRound(null);
    this.resolveStop(null, null);
    this.result.transitions = this.out.transitions;
    return this.result;
  }

  private event(e: TranscriptEvent, i: number): void {
    switch (e.kind) {
      case 'assistant':
        if (this.round?.id === e.id) {
          this.round.add(e);
          return;
        }
        this.settle(i);
        this.ensureRun(e.at, i);
        this.out.requested(e.at);
        this.round = new Round(e);
        return;
      case 'toolResults':
        this.toolResults(e);
        return;
      case 'prompt':
        this.prompt(e, i);
        return;
      case 'apiError':
        this.apiError(e, i);
        return;
      case 'apiRetry':
        this.apiRetry(e, i);
        return;
      case 'compactBoundary':
      case 'compactSummary':
        this.compaction(i);
        return;
      case 'interrupt':
        this.interrupt(e, i);
        return;
      case 'stopHookSummary':
        this.closeRoundFor(i);
        if (this.out.open?.stop) this.resolveStop(e, i);
        else this.note(e, 'stop_hook_summary with no finished response before it');
        return;
      case 'stopFeedback':
        this.closeRoundFor(i);
        if (this.out.open?.stop && this.resolveStop(e, i)) return;
        if (!this.consumed.has(i)) this.out.append(e.message, 'stop_hook_feedback', e.at);
        return;
      default:
        this.neutral(e);
    }
  }

  // ---- neutral lines -------------------------------------------------------------------------

  private neutral(e: TranscriptEvent): void {
    // A message after the finish means the stop checks are over (a block says so first).
    if (e.kind === 'userMeta' || e.kind === 'syntheticAssistant') this.resolveStop(e, null);
    switch (e.kind) {
      case 'bookkeeping': {
        const b = this.result.bookkeeping;
        b[e.lineType] = (b[e.lineType] ?? 0) + 1;
        if (e.agentLink) this.result.links.agents.set(e.agentLink.agentId, e.agentLink.toolUseId);
        return;
      }
      case 'unmapped':
        this.result.unmapped++;
        this.out.rec('import.unmapped', e.at, {
          line: e.line,
          lineType: e.lineType,
          why: e.why,
          text: e.text,
        });
        return;
      case 'malformed':
        this.result.unmapped++;
        this.result.malformed++;
        this.out.rec('import.unmapped', e.at, {
          line: e.line,
          lineType: '(malformed)',
          why: e.why,
          text: e.text,
        });
        return;
      case 'userMeta':
        this.out.append(e.message, 'user', e.at);
        return;
      case 'syntheticAssistant':
        this.out.append(e.message, 'assistant', e.at);
        return;
      default:
        throw new Error(`importer bug: ${e.kind} is not a neutral line`);
    }
  }

  private note(e: TranscriptEvent, why: string): void {
    const lineType = LINE_TYPE_OF[e.kind] ?? e.kind;
    this.neutral({ kind: 'unmapped', line: e.line, at: e.at, lineType, why, text: '' });
  }

  // ---- look-ahead ------------------------------------------------------------------------------

  /** The next event that means something for the loop (neutral lines skipped), or null. */
  private peek(i: number | null): number | null {
    if (i === null) return null;
    for (let j = i + 1; j < this.events.length; j++) {
      if (!this.consumed.has(j) && !NEUTRAL.has(this.events[j]!.kind)) return j;
    }
    return null;
  }

  /** A compaction starting at `i`: a boundary and the summary after it, or a summary alone (older versions). */
  private compactionAt(i: number | null): { boundary: number | null; summary: number } | null {
    if (i === null) return null;
    const e = this.events[i];
    if (e?.kind === 'compactSummary') return { boundary: null, summary: i };
    if (e?.kind !== 'compactBoundary') return null;
    const j = this.peek(i);
    return j !== null && this.events[j]!.kind === 'compactSummary' ? { boundary: i, summary: j } : null;
  }

  /** The model the next response in the transcript names (for a run's config). */
  private modelAfter(i: number): string {
    for (let j = i; j < this.events.length; j++) {
      const e = this.events[j]!;
      if (e.kind === 'assistant' && e.model !== 'unknown') return e.model;
      if (j > i && e.kind === 'prompt') break;
    }
    return this.out.run?.model ?? 'unknown';
  }

  // ---- runs ------------------------------------------------------------------------------------

  /** Closes what `i` ends: the open round, then stop checks nobody blocked. */
  private settle(i: number): void {
    this.closeRoundFor(i);
    if (this.out.open?.stop) this.resolveStop(this.events[i]!, i);
    const run = this.out.open;
    // The next request went out although some tools never answered: they were cut off.
    if (run?.pendingTools) this.finishTools(run.pendingTools, this.events[i]!.at);
  }

  private closeRoundFor(i: number): void {
    if (this.round) this.closeRound(i);
  }

  private ensureRun(at: number, i: number): void {
    if (this.out.open) return;
    this.openRun(at, i);
  }

  private openRun(at: number, i: number): void {
    this.out.openRun(at, this.modelAfter(i));
    const repairs = this.repairs;
    this.repairs = null;
    if (!repairs) return;
    // As resume does: the results logged are appended, calls without one get "interrupted".
    this.out.append({ role: 'user', content: this.resultBlocks(repairs, at) }, 'interrupted', at);
  }

  private prompt(e: EventOf<'prompt'>, i: number): void {
    this.closeRoundFor(i);
    if (this.out.open?.stop) this.resolveStop(e, i);
    this.result.firstPrompt ??= e.text;
    const run = this.out.open;
    if (run?.promptsOnly) {
      this.out.prompt(e.message, e.at);
      return;
    }
    if (run) this.repairs = this.out.closeUnfinished(e.at);
    this.openRun(e.at, i);
    this.out.prompt(e.message, e.at);
  }

  // ---- responses and tools ---------------------------------------------------------------------

  private toolResults(e: EventOf<'toolResults'>): void {
    for (const [toolUseId, agentId] of e.agentIds) this.result.links.agents.set(agentId, toolUseId);
    const round = this.round;
    const stray: string[] = [];
    for (const b of e.blocks) {
      if (b.type === 'tool_result' && round?.answers(b.tool_use_id)) round.addResult(b, e.at);
      else if (b.type === 'tool_result') stray.push(b.tool_use_id);
      else if (round) round.extra.push(b);
    }
    if (stray.length) {
      const note: TranscriptEvent = {
        kind: 'unmapped',
        line: e.line,
        at: e.at,
        lineType: 'user',
        why: `tool_result for ${stray.join(', ')}, which no open tool_use asked for`,
        text: '',
      };
      if (round) round.deferred.push(note);
      else this.neutral(note);
    }
  }

  private closeRound(nextIdx: number | null): void {
    const round = this.round!;
    this.round = null;
    const next = nextIdx === null ? null : this.events[nextIdx]!;
    const response = round.response();
    this.result.lastAssistantText = textOf(response.content) || this.result.lastAssistantText;
    const uses = round.toolUses();
    if (uses.length > 0) this.toolRound(round, uses, next, nextIdx);
    else this.textRound(round, next, nextIdx);
    for (const d of round.deferred) this.neutral(d);
  }

  private toolRound(
    round: Round,
    uses: ToolUseBlock[],
    next: TranscriptEvent | null,
    nextIdx: number | null,
  ) {
    const out = this.out;
    const run = out.open!;
    const response = round.response();
    out.rec('model.responded', round.lastAt, { purpose: 'turn', response });
    out.responded(response.usage);
    out.step(done('callModel'), 'tool_use_requested', round.lastAt);
    out.append({ role: 'assistant', content: response.content }, 'assistant', round.lastAt);
    for (const use of uses) {
      if (!SUBAGENT_TOOLS.has(use.name)) continue;
      const input = (use.input ?? {}) as { subagent_type?: unknown; prompt?: unknown };
      this.result.links.tasks.set(use.id, {
        run: run.id,
        agent: typeof input.subagent_type === 'string' ? input.subagent_type : null,
        prompt: typeof input.prompt === 'string' ? input.prompt : null,
      });
    }
    const interrupted =
      next?.kind === 'interrupt' || [...round.results.values()].some((r) => isInterruption(r.block));
    const pending: PendingTools = { uses, answered: this.toolRecords(round, uses), extra: round.extra };
    const complete = pending.answered.length === uses.length;
    if (!complete && !interrupted && next?.kind !== 'assistant') {
      // The transcript stops on these tools (or the person typed on): their end is not recorded.
      run.pendingTools = pending;
      return;
    }
    const at = interrupted && next ? next.at : (round.resultsAt ?? round.lastAt);
    if (interrupted) {
      out.rec('abort.requested', at, { reason: 'interrupted by the user' });
      this.finishTools(pending, at, next, nextIdx);
    } else {
      this.finishTools(pending, at, null, nextIdx);
    }
  }

  /** tool.started / permission.decided / tool.finished for every call that has a result. */
  private toolRecords(round: Round, uses: ToolUseBlock[]): { index: number; block: ToolResultBlock }[] {
    const out = this.out;
    const blocks: { index: number; block: ToolResultBlock }[] = [];
    uses.forEach((use, index) => {
      const result = round.results.get(use.id);
      const started = round.toolAt.get(use.id) ?? round.at;
      if (result && isRejection(result.block)) {
        out.rec('permission.decided', result.at, {
          toolUseId: use.id,
          name: use.name,
          decision: 'ask',
          resolved: 'deny',
          by: 'user',
          message: rejectionMessage(result.block),
        });
      } else {
        out.rec('tool.started', started, {
          toolUseId: use.id,
          name: use.name,
          input: use.input,
          index,
          readOnly: isReadOnlyTool(use.name),
        });
      }
    });
    uses.forEach((use, index) => {
      const result = round.results.get(use.id);
      if (!result) return;
      const started = round.toolAt.get(use.id) ?? round.at;
      out.rec('tool.finished', result.at, {
        toolUseId: use.id,
        name: use.name,
        index,
        outcome: outcomeOf(result.block),
        result: { content: result.block.content, isError: result.block.is_error === true },
        durationMs: Math.max(0, result.at - started),
      });
      blocks.push({ index, block: result.block });
    });
    return blocks;
  }

  private syntheticResult(use: ToolUseBlock, index: number, at: number): ToolResultBlock {
    const result = { content: `[interrupted] ${use.name} has no result in the transcript.`, isError: true };
    this.out.rec('tool.finished', at, {
      toolUseId: use.id,
      name: use.name,
      index,
      outcome: 'interrupted',
      result,
      durationMs: 0,
      synthetic: true,
    });
    return { type: 'tool_result', tool_use_id: use.id, content: result.content, is_error: true };
  }

  /** Results in call order: the ones logged, an "interrupted" one for each call without. */
  private resultBlocks(pending: PendingTools, at: number): ContentBlock[] {
    const answered = new Set(pending.answered.map((a) => a.block.tool_use_id));
    const blocks = [...pending.answered];
    pending.uses.forEach((use, index) => {
      if (!answered.has(use.id)) blocks.push({ index, block: this.syntheticResult(use, index, at) });
    });
    blocks.sort((a, b) => a.index - b.index);
    return [...blocks.map((b) => b.block), ...pending.extra];
  }

  /**
   * The tool batch ends: results appended, and the edge out of dispatchingTools — aborted when
   * interrupted (`interrupt` is the line that says so, consumed here), auto_compact when a
   * compaction follows, tool_result_continuation otherwise.
   */
  private finishTools(
    pending: PendingTools,
    at: number,
    interrupt: TranscriptEvent | null = null,
    nextIdx: number | null = null,
  ): void {
    const out = this.out;
    const run = out.open!;
    run.pendingTools = null;
    const message: Message = { role: 'user', content: this.resultBlocks(pending, at) };
    if (interrupt) {
      out.step(done('runTools'), 'aborted', at);
      out.append(message, 'tool_results', at);
      if (interrupt.kind === 'interrupt' && nextIdx !== null) {
        out.append(interrupt.message, 'interrupted', interrupt.at);
        this.consumed.add(nextIdx);
      }
      out.endRun(at, 'aborted', 'aborted');
    } else if (this.compactionAt(nextIdx)) {
      out.step(done('runTools'), 'auto_compact', at);
      out.append(message, 'tool_results', at);
      run.compactMode = 'auto';
    } else {
      out.step(done('runTools'), 'tool_result_continuation', at);
      out.append(message, 'tool_results', at);
    }
  }

  private textRound(round: Round, next: TranscriptEvent | null, nextIdx: number | null): void {
    const out = this.out;
    const response = round.response();
    const assistant: Message = { role: 'assistant', content: response.content };
    const at = round.lastAt;
    if (next?.kind === 'interrupt' && response.stopReason === null) {
      // Interrupted while it streamed: the call failed as aborted; Claude Code keeps the part it had.
      out.rec('abort.requested', next.at, { reason: 'interrupted by the user' });
      out.rec('model.failed', next.at, {
        purpose: 'turn',
        failure: {
          kind: 'aborted',
          overloaded: false,
          message: 'interrupted by the user while the response streamed',
        },
      });
      out.step(failed('callModel'), 'aborted', next.at);
      out.append(assistant, 'assistant', at);
      out.append(next.message, 'interrupted', next.at);
      this.consumed.add(nextIdx!);
      out.endRun(next.at, 'aborted', 'aborted');
      return;
    }
    out.rec('model.responded', at, { purpose: 'turn', response });
    out.responded(response.usage);
    const run = out.open!;
    switch (response.stopReason) {
      case 'refusal':
        out.step(done('callModel'), 'refused', at);
        out.append(assistant, 'assistant', at);
        out.endRun(at, 'failed', 'refused', 'the model refused');
        return;
      case 'max_tokens':
        if (next?.kind === 'assistant' && !round.deferred.some((d) => d.kind === 'userMeta')) {
          out.step(done('callModel'), 'max_tokens_escalation', at);
          run.maxTokens = 64_000;
        } else if (next?.kind === 'assistant' && round.deferred.some((d) => d.kind === 'userMeta')) {
          // Claude Code's "resume where you stopped" message came between the two responses.
          const meta = round.deferred.find((d) => d.kind === 'userMeta') as EventOf<'userMeta'>;
          out.step(done('callModel'), 'max_tokens_recovery', at);
          out.append(assistant, 'assistant', at);
          out.append(meta.message, 'max_tokens_continue', meta.at);
          round.deferred.splice(round.deferred.indexOf(meta), 1);
        } else {
          out.step(done('callModel'), 'max_tokens_exhausted', at);
          out.append(assistant, 'assistant', at);
          out.endRun(at, 'failed', 'max_tokens_exhausted', 'the output was cut at max_tokens');
        }
        return;
      case 'pause_turn':
        out.step(done('callModel'), 'pause_turn_continuation', at);
        out.append(assistant, 'assistant', at);
        return;
      case 'model_context_window_exceeded':
        if (this.compactionAt(nextIdx)) {
          out.step(done('callModel'), 'compact_retry', at);
          run.compactMode = 'reactive';
        } else {
          out.step(done('callModel'), 'prompt_too_long', at);
          out.endRun(at, 'failed', 'prompt_too_long', 'the context window was exceeded');
        }
        return;
      default:
        out.step(done('callModel'), 'finish_requested', at);
        out.append(assistant, 'assistant', at);
        run.stop = { summaries: [] };
    }
  }

  // ---- stop hooks --------------------------------------------------------------------------

  /**
   * Stop checks after a response without tool_use. A summary that prevented continuation, a
   * block's feedback, or an interrupt decide them (and are consumed: true); anything else means
   * every hook allowed the finish (or none ran): completed.
   */
  private resolveStop(e: TranscriptEvent | null, i: number | null): boolean {
    const out = this.out;
    const run = out.open;
    if (!run?.stop) return false;
    const pending = run.stop;
    const commands = pending.summaries.flatMap((s) => s.commands).join(' && ');
    const durationMs = pending.summaries.reduce((n, s) => n + s.durationMs, 0);
    const hook = (decision: 'allow' | 'block' | 'prevent', at: number, reason?: string) =>
      out.rec('hook.decided', at, {
        hook: 'Stop',
        decision,
        ...(reason ? { reason } : {}),
        ...(commands ? { command: commands } : {}),
        durationMs,
      });
    if (e?.kind === 'stopHookSummary') {
      this.consumed.add(i!);
      if (!e.prevented) {
        pending.summaries.push({ commands: e.commands, durationMs: e.durationMs });
        return true;
      }
      pending.summaries.push({ commands: e.commands, durationMs: e.durationMs });
      run.stop = null;
      out.rec('hook.decided', e.at, {
        hook: 'Stop',
        decision: 'prevent',
        ...(e.stopReason ? { reason: e.stopReason } : {}),
        ...(e.commands.length ? { command: e.commands.join(' && ') } : {}),
        durationMs: e.durationMs,
      });
      out.step(done('stopChecks'), 'stop_hook_prevented', e.at);
      out.endRun(e.at, 'failed', 'stop_hook_prevented', e.stopReason ?? 'a stop hook prevented continuation');
      return true;
    }
    run.stop = null;
    if (e?.kind === 'stopFeedback') {
      this.consumed.add(i!);
      hook('block', e.at, e.reason);
      out.step(done('stopChecks'), 'stop_hook_continuation', e.at);
      out.append(e.message, 'stop_hook_feedback', e.at);
      return true;
    }
    if (e?.kind === 'interrupt') {
      this.consumed.add(i!);
      out.rec('abort.requested', e.at, { reason: 'interrupted by the user' });
      out.step(failed('stopChecks'), 'aborted', e.at);
      out.append(e.message, 'interrupted', e.at);
      out.endRun(e.at, 'aborted', 'aborted');
      return true;
    }
    const at = e?.at ?? this.result.lastAt ?? 0;
    if (pending.summaries.length) hook('allow', at);
    out.step(done('stopChecks'), 'completed', at);
    out.endRun(at, 'completed', 'completed');
    return false;
  }

  // ---- model errors ----------------------------------------------------------------------------

  private apiError(e: EventOf<'apiError'>, i: number): void {
    this.settle(i);
    this.ensureRun(e.at, i);
    const out = this.out;
    out.requested(e.at);
    const j = this.peek(i);
    const next = j === null ? null : this.events[j]!;
    const tooLong = /prompt is too long/i.test(e.text);
    const base = {
      overloaded: e.status === 529 || /overloaded/i.test(e.text),
      ...(e.status !== null ? { status: e.status } : {}),
      ...(e.errorType ? { errorType: e.errorType } : {}),
      message: e.text,
    };
    if (next && (next.kind === 'assistant' || next.kind === 'apiRetry' || next.kind === 'apiError')) {
      // Claude Code tried again: the failure was retried.
      out.rec('model.failed', e.at, { purpose: 'turn', failure: { kind: 'retryable', ...base } });
      this.backoff(e.at, Math.max(0, next.at - e.at));
      return;
    }
    if (tooLong) {
      const failure: ModelFailure = { kind: 'prompt_too_long', ...base, ...parsePromptTooLong(e.text) };
      out.rec('model.failed', e.at, { purpose: 'turn', failure });
      if (this.compactionAt(j)) {
        out.step(failed('callModel'), 'compact_retry', e.at);
        out.open!.compactMode = 'reactive';
      } else {
        out.step(failed('callModel'), 'prompt_too_long', e.at);
        out.endRun(e.at, 'failed', 'prompt_too_long', e.text);
      }
      return;
    }
    const kind = RETRYABLE_STATUS(e.status) ? 'retryable' : 'fatal';
    out.rec('model.failed', e.at, { purpose: 'turn', failure: { kind, ...base } });
    out.step(failed('callModel'), 'model_error', e.at);
    out.endRun(e.at, 'failed', 'model_error', e.text);
  }

  private apiRetry(e: EventOf<'apiRetry'>, i: number): void {
    this.settle(i);
    this.ensureRun(e.at, i);
    this.out.requested(e.at);
    const failure: ModelFailure = {
      kind: 'retryable',
      overloaded: e.status === 529 || /overload/i.test(e.message),
      ...(e.status !== null ? { status: e.status } : {}),
      message: e.message,
    };
    this.out.rec('model.failed', e.at, { purpose: 'turn', failure });
    this.backoff(e.at, e.retryInMs ?? 0);
  }

  /** `requesting → recovering → requesting`: the wait, then the same request again. */
  private backoff(at: number, delayMs: number): void {
    const out = this.out;
    out.step(failed('callModel'), 'transport_retry', at);
    out.rec('backoff.scheduled', at, { attempt: out.open!.attempt, delayMs });
    out.step(done('backoff'), 'backoff_elapsed', at + delayMs);
    out.retried(at + delayMs);
  }

  // ---- compaction and interrupts ---------------------------------------------------------------

  private compaction(i: number): void {
    const c = this.compactionAt(i);
    const e = this.events[i]!;
    // Closed first: whether the tool batch ends in auto_compact depends on this compaction.
    this.closeRoundFor(i);
    if (this.out.open?.stop) this.resolveStop(e, i);
    if (!c) {
      this.note(e, 'compact_boundary with no summary message after it');
      return;
    }
    if (c.summary !== i) this.consumed.add(c.summary);
    const out = this.out;
    const summary = this.events[c.summary] as EventOf<'compactSummary'>;
    const boundary = c.boundary === null ? null : (this.events[c.boundary] as EventOf<'compactBoundary'>);
    const run = out.open;
    // Compacting at a prompt, before its request: the prompts stay after the summary.
    const kept = run?.promptsOnly ? run.prompts : [];
    const messages = [summary.message, ...kept];
    const draft = out.rec('compaction.finished', e.at, {
      ok: true,
      mode: run?.compactMode ?? 'auto',
      summary: summary.text,
      messages,
      tokensBefore: Math.round(boundary?.preTokens ?? 0),
      tokensAfter: Math.round(boundary?.postTokens ?? estimateTokens(summary.message.content)),
    });
    out.messages = messages.length;
    this.result.links.compactions.push({ draft, run: out.runId, at: e.at, summary: summary.text });
    if (run?.walk.state === 'compacting') {
      out.step(done('compact'), 'compacted', summary.at);
      run.compactMode = null;
    }
  }

  private interrupt(e: EventOf<'interrupt'>, i: number): void {
    this.closeRoundFor(i);
    if (this.consumed.has(i)) return;
    if (this.out.open?.stop && this.resolveStop(e, i)) return;
    const out = this.out;
    const run = out.open;
    if (!run) {
      out.append(e.message, 'interrupted', e.at);
      return;
    }
    if (run.walk.state === 'building') out.requested(e.at);
    out.rec('abort.requested', e.at, { reason: 'interrupted by the user' });
    if (run.pendingTools) {
      this.finishTools(run.pendingTools, e.at, e, i);
      return;
    }
    if (run.walk.state === 'compacting') {
      out.step(failed('compact'), 'aborted', e.at);
    } else {
      out.rec('model.failed', e.at, {
        purpose: 'turn',
        failure: {
          kind: 'aborted',
          overloaded: false,
          message: 'interrupted by the user before the response',
        },
      });
      out.step(failed('callModel'), 'aborted', e.at);
    }
    out.append(e.message, 'interrupted', e.at);
    out.endRun(e.at, 'aborted', 'aborted');
  }
}
