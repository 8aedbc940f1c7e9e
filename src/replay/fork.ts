import { INTERRUPTED_RUN_REASON, TERMINAL_STATUS, type TerminalReason } from '../machines/reasons.ts';
import { toolUsesOf } from '../model/messages.ts';
import type { ModelResponse } from '../model/types.ts';
import type { IdGenerator } from '../runtime/determinism.ts';
import { nanoidIds } from '../runtime/determinism.ts';
import { planInterruptedRun } from '../runtime/recovery.ts';
import { SessionNotFoundError } from '../store/errors.ts';
import { evolve } from '../store/evolve.ts';
import { CURRENT_SCHEMA_VERSION, type LogRecord } from '../store/records.ts';
import { appendedData } from '../store/refs.ts';
import { emptySessionState } from '../store/sessionState.ts';
import type { EventStore } from '../store/types.ts';
import { validateRecord } from '../store/validate.ts';
import { createWholeSession } from '../store/wholeStream.ts';
import type { ToolResultReplacement } from './replacement.ts';

export class ForkPointError extends Error {
  readonly code = 'FORK_POINT';
  constructor(
    readonly session: string,
    readonly seq: number,
    readonly lastSeq: number,
  ) {
    super(`cannot fork ${session} at seq ${seq}: the log has seqs 1..${lastSeq}`);
    this.name = 'ForkPointError';
  }
}

/**
 * A new session whose log is the source's prefix up to `seq`, marked as forked from it.
 * The source is only read. A fork taken mid-run resumes like a crashed session would. The copy
 * is written whole (`EventStore.create`: it appears complete or not at all, even if the process is
 * killed half-way) and sealed anew by the store, since every record now names the new session.
 */
export async function forkSession(
  store: EventStore,
  source: string,
  seq: number,
  ids: IdGenerator = nanoidIds,
): Promise<string> {
  if (!(await store.exists(source))) throw new SessionNotFoundError(source);
  const last = await store.lastSeq(source);
  if (!Number.isInteger(seq) || seq < 1 || seq > last) throw new ForkPointError(source, seq, last);
  const id = ids('session');
  async function* copy(): AsyncGenerator<LogRecord> {
    for await (const r of store.read(source, { toSeq: seq })) {
      const moved = { ...r, session: id } as LogRecord;
      if (moved.type === 'session.created') {
        // A fork is its own root: it was started by no Task call, even when its source was.
        const { parent: _parent, ...data } = moved.data;
        moved.data = { ...data, forkedFrom: { session: source, seq } };
      }
      yield moved;
    }
  }
  await createWholeSession(store, id, copy());
  return id;
}

/** What a counterfactual fork puts in place of the source's record. */
export type ForkReplacement =
  /** The model's response at `at` (a turn's `model.responded`). */
  | { response: ModelResponse }
  /** That tool call's result (its `tool.finished`; `at`, when given, must be that record). */
  | { toolUseId: string; toolResult: ToolResultReplacement };

export interface CounterfactualFork {
  sessionId: string;
  /** The seq of the replaced record (the fork shares every record before it with its source). */
  replacedSeq: number;
  type: 'model.responded' | 'tool.finished';
  /** Where the fork's run stopped: the chart state it waits in for a live answer (tools, the model). */
  state: string;
  /** The history ends with tool calls of the replaced response: `run --resume` runs them first. */
  toolsPending: boolean;
}

export class ForkReplacementError extends Error {
  readonly code = 'FORK_REPLACEMENT';
  constructor(
    readonly session: string,
    readonly seq: number | null,
    detail: string,
  ) {
    super(`cannot fork ${session}${seq !== null ? ` at seq ${seq}` : ''}: ${detail}`);
    this.name = 'ForkReplacementError';
  }
}

/** Records after a replaced tool result that belong to its batch: up to what the chart did with the results. */
function batchEnd(records: readonly LogRecord[], from: number): number {
  let end = from;
  while (end + 1 < records.length) {
    const t = records[end + 1]!.type;
    if (t === 'transition' || t === 'message.appended' || t === 'run.ended' || t === 'run.started') break;
    end++;
  }
  return end;
}

/**
 * A counterfactual fork: the source up to a model response or a tool result, that record replaced,
 * then what the chart does with it (re-driven from the log, as replay does, up to the first effect
 * that needs a live answer: the tools the new response asks for, the next model call, the stop
 * checks), and the run closed there as a resume would close an interrupted one. `run --resume` of the
 * fork continues from there with the model and tools it is given: a history that ends with tool calls
 * runs them first (`tool_batch_resumed`). The fork shares records 1..replacedSeq−1 with its source
 * (`forkedFrom.seq`), so the viewer's fork diff starts at the replaced record. Written whole, like
 * `forkSession`.
 */
export async function forkWithReplacement(
  store: EventStore,
  source: string,
  replacement: ForkReplacement,
  at?: number,
  ids: IdGenerator = nanoidIds,
): Promise<CounterfactualFork> {
  if (!(await store.exists(source))) throw new SessionNotFoundError(source);
  const all: LogRecord[] = [];
  for await (const r of store.read(source)) all.push(r);
  const last = all.at(-1)?.seq ?? 0;
  if (at !== undefined && (!Number.isInteger(at) || at < 1 || at > last))
    throw new ForkPointError(source, at ?? 0, last);
  const fail = (seq: number | null, detail: string) => new ForkReplacementError(source, seq, detail);

  let index: number;
  let replaced: LogRecord;
  if ('response' in replacement) {
    if (at === undefined) throw fail(null, 'a replaced response needs the seq of its model.responded record');
    index = all.findIndex((r) => r.seq === at);
    const r = all[index]!;
    if (r.type !== 'model.responded')
      throw fail(at, `seq ${at} is a ${r.type} record, not a model.responded (the response to replace)`);
    if (r.data.purpose !== 'turn')
      throw fail(at, `seq ${at} is a compaction's response: only a turn's response can be replaced`);
    replaced = { ...r, data: { ...r.data, response: replacement.response } };
  } else {
    const matches = all.flatMap((r, i) =>
      r.type === 'tool.finished' && r.data.toolUseId === replacement.toolUseId ? [i] : [],
    );
    const chosen = at === undefined ? matches.at(-1) : matches.find((i) => all[i]!.seq === at);
    if (chosen === undefined)
      throw fail(
        at ?? null,
        at === undefined || matches.length === 0
          ? `no tool.finished record for tool call ${replacement.toolUseId}`
          : `seq ${at} is not the tool.finished of ${replacement.toolUseId} (that is seq ${matches.map((i) => all[i]!.seq).join(', ')})`,
      );
    index = chosen;
    const r = all[index] as Extract<LogRecord, { type: 'tool.finished' }>;
    const { synthetic: _made, ...data } = r.data;
    replaced = { ...r, data: { ...data, ...replacement.toolResult } };
  }
  const replacedSeq = replaced.seq;
  if (replaced.run === null) throw fail(replacedSeq, 'the record is outside any run');

  const id = ids('session');
  const move = (r: LogRecord): LogRecord => {
    const moved = { ...r, session: id } as LogRecord;
    if (moved.type === 'session.created') {
      const { parent: _parent, ...data } = moved.data;
      moved.data = { ...data, forkedFrom: { session: source, seq: replacedSeq - 1 } };
    }
    return moved;
  };
  const end = 'response' in replacement ? index : batchEnd(all, index);
  const records: LogRecord[] = [
    ...all.slice(0, index).map(move),
    move(validateRecord(replaced, { session: source })),
    ...all.slice(index + 1, end + 1).map(move),
  ];

  const { continueOpenRun } = await import('./counterfactual.ts');
  const next = await continueOpenRun(records);
  if (next.problem)
    throw fail(next.problem.seq, `the log does not replay up to the replaced record: ${next.problem.detail}`);
  let state = records.reduce(evolve, emptySessionState());
  const run = replaced.run;
  const at0 = replaced.at;
  const add = (type: LogRecord['type'], data: unknown) => {
    const r = validateRecord({
      v: CURRENT_SCHEMA_VERSION,
      seq: state.lastSeq + 1,
      at: at0,
      session: id,
      run,
      type,
      data,
    });
    records.push(r);
    state = evolve(state, r);
  };
  for (const step of next.steps) {
    if (step.kind === 'transition') add('transition', step.fact);
    else add('message.appended', appendedData(state, step.emitted.message, step.emitted.origin));
  }
  const open = state.currentRun!;
  if (next.outcome) {
    const o = next.outcome;
    const status = TERMINAL_STATUS[o.reason as TerminalReason] ?? 'failed';
    add('run.ended', {
      status,
      reason: o.reason,
      turns: o.context.turn,
      usage: open.usage,
      ...(o.error && status !== 'completed' ? { error: o.error } : {}),
    });
  } else {
    const plan = planInterruptedRun(state)!;
    add('run.ended', {
      status: 'aborted',
      reason: INTERRUPTED_RUN_REASON,
      turns: open.turns,
      usage: open.usage,
      interrupted: { state: plan.state, inFlight: plan.inFlight },
    });
  }
  const lastMessage = state.messages.last();
  await createWholeSession(store, id, records);
  return {
    sessionId: id,
    replacedSeq,
    type: replaced.type as CounterfactualFork['type'],
    state: open.state,
    toolsPending: lastMessage?.role === 'assistant' && toolUsesOf(lastMessage.content).length > 0,
  };
}
