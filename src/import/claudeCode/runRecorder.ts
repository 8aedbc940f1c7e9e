import type { TransitionReason } from '../../machines/reasons.ts';
import {
  addUsage,
  type ContentBlock,
  type Message,
  type ToolResultBlock,
  type ToolUseBlock,
  type Usage,
  ZERO_USAGE,
} from '../../model/messages.ts';
import type { DraftRecord, MessageOrigin, RecordData, RecordType, RunConfig } from '../../store/records.ts';
import { ChartWalk, done } from '../chartWalk.ts';

/**
 * What the importer knows of Claude Code's own limits, recorded in `run.started` where reloop
 * records its settings (a transcript carries none of them): no turn limit, 10 retries, a 200k
 * window. Replaying an imported run never re-decides on them (docs/import.md).
 */
export function importedRunConfig(model: string): RunConfig {
  return {
    model,
    fallbackModel: null,
    maxTurns: 10_000,
    defaultMaxTokens: 32_000,
    escalatedMaxTokens: 64_000,
    maxTokensRecoveries: 3,
    maxTransportAttempts: 11,
    overloadsBeforeFallback: 3,
    contextWindow: 200_000,
    autoCompactThreshold: 167_000,
    autoCompactBreaker: 3,
    stopHookBlockCap: 8,
    maxBudgetUsd: null,
    maxBudgetTokens: null,
  };
}

/** A tool batch whose end the transcript has not shown yet: the calls, the results so far. */
export interface PendingTools {
  uses: ToolUseBlock[];
  answered: { index: number; block: ToolResultBlock }[];
  /** Non-tool_result blocks of the result lines (images, hook context), kept after the results. */
  extra: ContentBlock[];
}

/** A run being imported: its walk on the chart and the counters its records carry. */
export interface OpenRun {
  id: string;
  walk: ChartWalk;
  model: string;
  turn: number;
  usage: Usage;
  attempt: number;
  maxTokens: number;
  /** No model activity yet: only prompts (a second prompt joins the run). */
  promptsOnly: boolean;
  /** The user messages of a run that has only prompts (a compaction right now keeps them). */
  prompts: Message[];
  ended: boolean;
  /** Set while the run waits on its stop checks (after a response without tool_use). */
  stop: { summaries: { commands: string[]; durationMs: number }[] } | null;
  /** The compaction the run is in (after auto_compact or compact_retry). */
  compactMode: 'auto' | 'reactive' | null;
  /** A tool batch the transcript stops in (some calls have no result yet). */
  pendingTools: PendingTools | null;
}

/**
 * Writes an imported session's records, in order, with the chart walk of the open run. Knows
 * nothing of transcript lines: the mapper decides, this writes.
 */
export class RunRecorder {
  readonly drafts: DraftRecord[] = [];
  run: OpenRun | null = null;
  /** Length of the history the records build (what `model.requested.messageCount` reports). */
  messages = 0;
  transitions = 0;
  private runs = 0;
  private lastAt = Number.NEGATIVE_INFINITY;

  get runId(): string | null {
    return this.run && !this.run.ended ? this.run.id : null;
  }

  get open(): OpenRun | null {
    return this.run && !this.run.ended ? this.run : null;
  }

  /**
   * Appends a record at the time of the line it comes from, kept non-decreasing: a tool call
   * streamed before its response ended is still recorded after the response.
   */
  rec<T extends RecordType>(type: T, at: number, data: RecordData<T>, run = this.runId): number {
    this.lastAt = Math.max(this.lastAt, at);
    this.drafts.push({ type, run, at: this.lastAt, data } as DraftRecord);
    return this.drafts.length - 1;
  }

  append(message: Message, origin: MessageOrigin, at: number): void {
    this.rec('message.appended', at, { message, origin });
    this.messages++;
  }

  step(trigger: string, reason: TransitionReason, at: number): void {
    const run = this.open;
    if (!run) throw new Error(`importer bug: a ${reason} transition with no run open`);
    this.rec('transition', at, run.walk.take(trigger, reason));
    this.transitions++;
    if (
      reason === 'tool_result_continuation' ||
      reason === 'auto_compact' ||
      reason === 'pause_turn_continuation'
    ) {
      run.turn++;
    }
  }

  openRun(at: number, model: string): OpenRun {
    const config = importedRunConfig(model);
    this.runs++;
    this.run = {
      id: `r${this.runs}`,
      walk: new ChartWalk(),
      model,
      turn: 1,
      usage: ZERO_USAGE,
      attempt: 1,
      maxTokens: config.defaultMaxTokens,
      promptsOnly: true,
      prompts: [],
      ended: false,
      stop: null,
      compactMode: null,
      pendingTools: null,
    };
    this.rec('run.started', at, { config, autoCompactFailures: 0 });
    return this.run;
  }

  prompt(message: Message, at: number): void {
    this.rec('user.message', at, { message });
    this.messages++;
    this.open?.prompts.push(message);
  }

  /** The request goes out: `building → requesting` unless it already went (a retry after backoff). */
  requested(at: number): void {
    const run = this.open;
    if (!run) throw new Error('importer bug: a request with no run open');
    run.promptsOnly = false;
    if (run.walk.state !== 'building') return;
    this.step(done('buildQuery'), 'query_built', at);
    this.turnRequested(run, at);
  }

  /** The same request again after a backoff (`recovering → requesting` is already taken). */
  retried(at: number): void {
    const run = this.open!;
    run.attempt++;
    this.turnRequested(run, at);
  }

  /** The `model.requested` record of a turn's request, as the live runtime writes it. */
  private turnRequested(run: OpenRun, at: number): void {
    this.rec('model.requested', at, {
      purpose: 'turn',
      model: run.model,
      maxTokens: run.maxTokens,
      messageCount: this.messages,
      attempt: run.attempt,
    });
  }

  responded(usage: Usage): void {
    const run = this.open!;
    run.usage = addUsage(run.usage, usage);
    run.attempt = 1;
  }

  endRun(at: number, status: 'completed' | 'failed' | 'aborted', reason: string, error?: string): void {
    const run = this.open;
    if (!run) return;
    this.rec('run.ended', at, {
      status,
      reason,
      turns: run.turn,
      usage: run.usage,
      ...(error ? { error } : {}),
    });
    run.ended = true;
  }

  /**
   * A run the transcript leaves unfinished when the next prompt comes: closed the way resume
   * closes a run whose process died (reason `interrupted`, no transition), with what was in
   * flight. Returns the tool batch the next run must finish, as resume does.
   */
  closeUnfinished(at: number): PendingTools | null {
    const run = this.open;
    if (!run) return null;
    const state = run.walk.state;
    const pending = state === 'dispatchingTools' ? run.pendingTools : null;
    const answered = new Set(pending?.answered.map((a) => a.block.tool_use_id));
    const inFlight =
      state === 'requesting'
        ? ['model request']
        : (pending?.uses ?? []).filter((u) => !answered.has(u.id)).map((u) => `tool ${u.name} (${u.id})`);
    this.rec('run.ended', at, {
      status: 'aborted',
      reason: 'interrupted',
      turns: run.turn,
      usage: run.usage,
      interrupted: { state, inFlight },
    });
    run.ended = true;
    return pending;
  }
}
