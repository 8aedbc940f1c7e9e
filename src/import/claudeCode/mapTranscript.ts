import { estimateTokens, type ToolUseBlock, textOf } from '../../model/messages.ts';
import type { DraftRecord } from '../../store/records.ts';
import { done, failed } from '../chartWalk.ts';
import type { EventOf, TranscriptEvent } from './events.ts';
import {
  compactedApiError,
  finalApiError,
  isPromptTooLong,
  retriedApiError,
  retryLine,
} from './modelErrors.ts';
import { Round } from './round.ts';
import { type PendingTools, RunRecorder } from './runRecorder.ts';
import { decideStop } from './stopChecks.ts';
import { recordTextResponse } from './textResponse.ts';
import { endToolBatch, recordToolCalls, resultBlocks } from './toolBatch.ts';
import { isInterruption, SUBAGENT_TOOLS } from './toolOutcome.ts';

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
        else this.stopHooksWithoutFinish(e);
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
    if (run?.pendingTools)
      endToolBatch(this.out, run.pendingTools, this.events[i]!.at, 'tool_result_continuation');
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
    this.out.append({ role: 'user', content: resultBlocks(this.out, repairs, at) }, 'interrupted', at);
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
    else if (
      recordTextResponse(this.out, round, next, this.compactionAt(nextIdx) !== null) &&
      nextIdx !== null
    )
      this.consumed.add(nextIdx);
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
    const pending: PendingTools = { uses, answered: recordToolCalls(out, round, uses), extra: round.extra };
    const complete = pending.answered.length === uses.length;
    if (!complete && !interrupted && next?.kind !== 'assistant') {
      // The transcript stops on these tools (or the person typed on): their end is not recorded.
      run.pendingTools = pending;
      return;
    }
    if (interrupted) {
      this.abortTools(pending, next?.at ?? round.lastAt, next, nextIdx);
      return;
    }
    const at = round.resultsAt ?? round.lastAt;
    endToolBatch(out, pending, at, this.compactionAt(nextIdx) ? 'auto_compact' : 'tool_result_continuation');
  }

  /** The person interrupted the tools: every call answered, the marker appended, the run aborted. */
  private abortTools(
    pending: PendingTools,
    at: number,
    marker: TranscriptEvent | null,
    i: number | null,
  ): void {
    const out = this.out;
    out.rec('abort.requested', at, { reason: 'interrupted by the user' });
    endToolBatch(out, pending, at, 'aborted');
    if (marker?.kind === 'interrupt' && i !== null) {
      out.append(marker.message, 'interrupted', marker.at);
      this.consumed.add(i);
    }
    out.endRun(at, 'aborted', 'aborted');
  }

  // ---- stop hooks and model errors ------------------------------------------------------------

  /** Stop checks pending after a finished response: `e` decides them (stopChecks.ts). */
  private resolveStop(e: TranscriptEvent | null, i: number | null): boolean {
    const used = decideStop(this.out, e, this.result.lastAt ?? 0);
    if (used && i !== null) this.consumed.add(i);
    return used;
  }

  /**
   * Claude Code ran its Stop hooks although no response finished the turn (real transcripts: right
   * after a tool batch's results, the turn ended there and the person typed on). The chart has no
   * stop checks there, so no transition: the hooks' run is kept as the fact it is, and the run
   * stays as the transcript leaves it (the next prompt closes it as interrupted).
   */
  private stopHooksWithoutFinish(e: EventOf<'stopHookSummary'>): void {
    this.out.rec('hook.decided', e.at, {
      hook: 'Stop',
      decision: e.prevented ? 'prevent' : 'allow',
      ...(e.stopReason ? { reason: e.stopReason } : {}),
      ...(e.commands.length ? { command: e.commands.join(' && ') } : {}),
      durationMs: e.durationMs,
    });
  }

  private apiError(e: EventOf<'apiError'>, i: number): void {
    this.settle(i);
    this.ensureRun(e.at, i);
    this.out.requested(e.at);
    const j = this.peek(i);
    const next = j === null ? null : this.events[j]!;
    if (next && (next.kind === 'assistant' || next.kind === 'apiRetry' || next.kind === 'apiError')) {
      // Claude Code tried again: the failure was retried.
      retriedApiError(this.out, e, next.at);
    } else if (isPromptTooLong(e) && this.compactionAt(j)) {
      compactedApiError(this.out, e);
    } else {
      finalApiError(this.out, e);
    }
  }

  private apiRetry(e: EventOf<'apiRetry'>, i: number): void {
    this.settle(i);
    this.ensureRun(e.at, i);
    this.out.requested(e.at);
    retryLine(this.out, e);
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
    if (run.pendingTools) {
      this.abortTools(run.pendingTools, e.at, e, i);
      return;
    }
    if (run.walk.state === 'building') out.requested(e.at);
    out.rec('abort.requested', e.at, { reason: 'interrupted by the user' });
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
