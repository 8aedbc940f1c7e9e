import { AppendOnlyList } from '../lib/appendOnlyList.ts';
import type { MessageEmitted } from '../machines/context.ts';
import { type QueryLoopMachine, queryLoopMachine, withEffects } from '../machines/queryLoop.machine.ts';
import { TERMINAL_STATUS, type TerminalReason } from '../machines/reasons.ts';
import type { Message } from '../model/messages.ts';
import { type DriveOutcome, driveMachine, type TransitionFact } from '../runtime/driveMachine.ts';
import type { LogRecord, RecordOf } from '../store/records.ts';
import { firstBrokenSeal } from '../store/seal.ts';
import { importedFromOf, verifyImported } from './conformance.ts';
import { ReplayDivergenceError } from './errors.ts';
import { LogWalk, type RunSlice } from './logWalk.ts';
import { type FactSource, recordedEffects } from './recordedEffects.ts';

export interface Divergence {
  seq: number;
  expected: unknown;
  actual: unknown;
  detail: string;
}

export interface VerifyReport {
  ok: boolean;
  records: number;
  transitions: number;
  runs: number;
  /** Every record carries a seal (a v2 log): any change to any field of any record is detected. */
  sealed: boolean;
  divergence: Divergence | null;
}

/** What the runs of a log say, before the seals are counted in. */
export type ReplayReport = Omit<VerifyReport, 'sealed'>;

export interface VerifyOptions {
  /** The chart to check the log against (default: the current one). */
  machine?: QueryLoopMachine;
  /** Stop after this seq (inclusive). */
  toSeq?: number;
}

/**
 * Verify replay. Three checks, and the first record any of them rejects is reported:
 * - the seals (v2): every record is what was written, in its place (src/store/seal.ts);
 * - the walk (logWalk.ts): one session, no gap, every record in its run, references that resolve,
 *   and what the fold derives (a run's start and end, the repairs of a resumed run);
 * - the re-drive: the real chart with every effect answered from the log's facts, each transition
 *   and each appended message compared with the logged one, and each record an effect derives
 *   (requests, tool records, compactions, backoffs) re-derived and compared (recordedEffects.ts).
 */
export async function verifyReplay(
  all: readonly LogRecord[],
  options: VerifyOptions = {},
): Promise<VerifyReport> {
  const records = options.toSeq !== undefined ? all.filter((r) => r.seq <= options.toSeq!) : all;
  const seal = firstBrokenSeal(records);
  // An imported session was not run by the chart: its imported runs are checked for conformance
  // instead (conformance.ts), and the runs reloop added are re-driven with those as history.
  const report = importedFromOf(records)
    ? await verifyImported(records, options, (rest, o) => verifyRuns(rest, o, { history: true }))
    : await verifyRuns(records, options, { history: false });
  const divergence =
    seal && (report.divergence === null || seal.seq < report.divergence.seq) ? seal : report.divergence;
  return {
    ...report,
    ok: divergence === null,
    sealed: records.length > 0 && records.every((r) => r.h !== undefined),
    divergence,
  };
}

/** The walk and the re-drive of every run; `history`: records outside runs fold as history (imported runs). */
async function verifyRuns(
  records: readonly LogRecord[],
  options: VerifyOptions,
  { history }: { history: boolean },
): Promise<ReplayReport> {
  const machine = options.machine ?? queryLoopMachine;
  const count = { transitions: 0 };
  const found: Divergence[] = [];
  const walk = new LogWalk(records, { history });
  let runs = 0;
  try {
    for (const run of walk.runs()) {
      runs++;
      await verifyRun(machine, run, count);
    }
  } catch (e) {
    if (!(e instanceof ReplayDivergenceError)) throw e;
    const { seq, expected, actual, detail } = e;
    found.push({ seq, expected, actual, detail });
  }
  if (walk.problem) found.push(walk.problem);
  const first = found.reduce<Divergence | null>((a, d) => (a === null || d.seq < a.seq ? d : a), null);
  return {
    ok: first === null,
    records: records.length,
    transitions: count.transitions,
    runs,
    divergence: first,
  };
}

/** Re-drives one run; every transition that matches the log is counted in `count`, even when a later one diverges. */
async function verifyRun(
  machine: QueryLoopMachine,
  run: RunSlice,
  count: { transitions: number },
): Promise<void> {
  const logged = run.records;
  const transitionIdx: number[] = [];
  const expectedMessages: RecordOf<'message.appended'>[] = [];
  let endRecord: RecordOf<'run.ended'> | undefined;
  let firstAbort = -1;
  logged.forEach((r, i) => {
    if (r.type === 'transition') transitionIdx.push(i);
    else if (r.type === 'message.appended') expectedMessages.push(r);
    else if (r.type === 'run.ended') endRecord ??= r;
    else if (r.type === 'abort.requested' && firstAbort < 0) firstAbort = i;
  });
  const expectedTransitions = transitionIdx.map((i) => logged[i] as RecordOf<'transition'>);
  const ended = endRecord !== undefined && endRecord.data.reason !== 'interrupted';
  let taken = 0;
  let messageIdx = 0;
  let stopped: (() => void) | null = null;
  let failure: ReplayDivergenceError | null = null;

  const diverge = (seq: number, expected: unknown, actual: unknown, detail: string) => {
    failure ??= new ReplayDivergenceError(seq, expected, actual, detail);
    stopped?.();
  };

  const src: FactSource = {
    get taken() {
      return taken;
    },
    slice(index) {
      if (index > transitionIdx.length) return null;
      const from = index === 0 ? 0 : transitionIdx[index - 1]! + 1;
      const to = index < transitionIdx.length ? transitionIdx[index]! : logged.length;
      return logged.slice(from, to);
    },
    abortedBy(index) {
      if (firstAbort < 0) return false;
      const to = index < transitionIdx.length ? transitionIdx[index]! : logged.length;
      return firstAbort < to;
    },
    endOfLog() {
      if (!ended) {
        stopped?.();
        return;
      }
      // The run ended, yet no fact answers this invocation: the code asks for an effect the
      // recorded run never made. Report it rather than wait for a fact that will not come.
      const exp = expectedTransitions[taken];
      diverge(
        exp?.seq ?? endRecord?.seq ?? run.start.seq,
        exp?.data ?? null,
        null,
        'the replayed machine waits for an effect the log has no record of',
      );
    },
    mismatch: diverge,
    before: run.before,
  };

  const observer = {
    onTransition(t: TransitionFact) {
      if (failure) return;
      const exp = expectedTransitions[taken];
      if (!exp) {
        if (!ended) {
          stopped?.();
          return;
        }
        diverge(
          endRecord?.seq ?? run.start.seq,
          null,
          t,
          `the machine took ${t.from} → ${t.to} (${t.reason}), the log has no more transitions`,
        );
        return;
      }
      const d = exp.data;
      if (d.from !== t.from || d.to !== t.to || d.reason !== t.reason || d.trigger !== t.trigger) {
        diverge(
          exp.seq,
          d,
          t,
          `logged ${d.from} → ${d.to} (${d.reason}), replay took ${t.from} → ${t.to} (${t.reason})`,
        );
        return;
      }
      taken++;
      count.transitions++;
    },
    onMessage(e: MessageEmitted) {
      if (failure) return;
      const exp = expectedMessages[messageIdx];
      if (!exp) {
        if (ended)
          diverge(
            endRecord?.seq ?? run.start.seq,
            null,
            e,
            'the machine appended a message the log does not have',
          );
        return;
      }
      const message = run.messages.get(exp.seq);
      if (exp.data.origin !== e.origin || !sameMessage(message, e.message)) {
        diverge(
          exp.seq,
          { message, origin: exp.data.origin },
          { message: e.message, origin: e.origin },
          `the ${exp.data.origin} message appended differs`,
        );
        return;
      }
      messageIdx++;
    },
  };

  const provided = withEffects(machine, recordedEffects(src));
  const input = {
    config: run.start.data.config,
    messages: AppendOnlyList.from(run.before.messages.view()),
    autoCompactFailures: run.start.data.autoCompactFailures,
  };
  const stop = new Promise<'stopped'>((resolve) => {
    stopped = () => resolve('stopped');
  });
  const outcome = await Promise.race([driveMachine(provided, input, observer), stop]);
  if (failure) throw failure;
  if (outcome !== 'stopped' && ended && taken < expectedTransitions.length) {
    const exp = expectedTransitions[taken]!;
    throw new ReplayDivergenceError(
      exp.seq,
      exp.data,
      null,
      `the machine stopped (${outcome.final}); the log has ${exp.data.from} → ${exp.data.to} (${exp.data.reason})`,
    );
  }
  if (outcome !== 'stopped' && ended) checkEnd(outcome, expectedMessages.slice(messageIdx), endRecord);
}

/**
 * Whether the message the log stands for is the one the machine appended. Both are usually built
 * from the same recorded content (a response's blocks, a tool result's content), so comparing those
 * by reference settles most of them without serialising the content; anything else is compared as JSON.
 */
function sameMessage(logged: Message | undefined, appended: Message): boolean {
  if (logged === undefined || logged.role !== appended.role) return false;
  const a = logged.content;
  const b = appended.content;
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    let same = true;
    for (let i = 0; same && i < a.length; i++) {
      const x = a[i]!;
      const y = b[i]!;
      same =
        x === y ||
        (x.type === 'tool_result' &&
          y.type === 'tool_result' &&
          x.tool_use_id === y.tool_use_id &&
          x.content === y.content &&
          x.is_error === y.is_error &&
          Object.keys(x).length === Object.keys(y).length);
    }
    if (same) return true;
  }
  return JSON.stringify(logged) === JSON.stringify(appended);
}

/** A run that ended must end the same way: no message left unappended, the same status, reason, turns and error. */
function checkEnd(
  outcome: DriveOutcome,
  leftover: readonly RecordOf<'message.appended'>[],
  end: RecordOf<'run.ended'> | undefined,
): void {
  const first = leftover[0];
  if (first) {
    throw new ReplayDivergenceError(
      first.seq,
      first.data,
      null,
      `the log appended a ${first.data.origin} message the replayed machine does not`,
    );
  }
  if (!end) return;
  const status = TERMINAL_STATUS[outcome.reason as TerminalReason] ?? 'failed';
  const expected = {
    status: end.data.status,
    reason: end.data.reason,
    turns: end.data.turns,
    error: end.data.error,
  };
  // The error text came with the first v1 logs' successors: a v1 run.ended without one is not compared on it.
  const error = outcome.error && status !== 'completed' ? outcome.error : undefined;
  const actual = {
    status,
    reason: outcome.reason,
    turns: outcome.context.turn,
    error: end.v < 2 && end.data.error === undefined ? undefined : error,
  };
  if (
    expected.status !== actual.status ||
    expected.reason !== actual.reason ||
    expected.turns !== actual.turns ||
    expected.error !== actual.error
  ) {
    throw new ReplayDivergenceError(end.seq, expected, actual, 'the run ends differently');
  }
}
