import { AppendOnlyList } from '../lib/appendOnlyList.ts';
import type { MessageEmitted } from '../machines/context.ts';
import { type QueryLoopMachine, queryLoopMachine, withEffects } from '../machines/queryLoop.machine.ts';
import { TERMINAL_STATUS, type TerminalReason } from '../machines/reasons.ts';
import { type DriveOutcome, driveMachine, type TransitionFact } from '../runtime/driveMachine.ts';
import { evolve } from '../store/evolve.ts';
import type { LogRecord, RecordOf } from '../store/records.ts';
import { emptySessionState, type SessionState } from '../store/sessionState.ts';
import { importedFromOf, verifyImported } from './conformance.ts';
import { ReplayDivergenceError } from './errors.ts';
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
  divergence: Divergence | null;
}

export interface VerifyOptions {
  /** The chart to check the log against (default: the current one). */
  machine?: QueryLoopMachine;
  /** Stop after this seq (inclusive). */
  toSeq?: number;
}

/** One run's records: its transitions, the fact slices between them, the messages it appended. */
interface RunSlice {
  start: RecordOf<'run.started'>;
  /** State the machine starts from: the fold up to the run's first transition-relevant record. */
  before: SessionState;
  records: LogRecord[];
}

/**
 * Verify replay: re-drives the real chart with every actor answered from the log, and
 * compares each transition (and each message the machine appends) with the logged one.
 * The first difference is reported with the seq of the record that differs.
 */
export async function verifyReplay(
  all: readonly LogRecord[],
  options: VerifyOptions = {},
): Promise<VerifyReport> {
  // An imported session was not run by the chart: its runs are checked for conformance instead.
  if (importedFromOf(all)) return verifyImported(all, options, verifyReplay);
  const records = options.toSeq !== undefined ? all.filter((r) => r.seq <= options.toSeq!) : all;
  const machine = options.machine ?? queryLoopMachine;
  const count = { transitions: 0 };
  let runs = 0;
  try {
    for (const run of splitRuns(records)) {
      runs++;
      await verifyRun(machine, run, count);
    }
    return { ok: true, records: records.length, transitions: count.transitions, runs, divergence: null };
  } catch (e) {
    if (!(e instanceof ReplayDivergenceError)) throw e;
    const { seq, expected, actual, detail } = e;
    return {
      ok: false,
      records: records.length,
      transitions: count.transitions,
      runs,
      divergence: { seq, expected, actual, detail },
    };
  }
}

function* splitRuns(records: readonly LogRecord[]): Generator<RunSlice> {
  let state = emptySessionState();
  let open: RunSlice | null = null;
  for (const r of records) {
    if (r.type === 'run.started') {
      if (open) yield open;
      open = { start: r, before: state, records: [] };
    } else if (open && r.run === open.start.run) {
      // Everything a run logs before its first transition (the user message, the repairs of a
      // resumed run) is what the machine starts from, not something it did.
      // An abort stays with the run: the actors must see it even before the first transition.
      if (
        r.type !== 'transition' &&
        r.type !== 'abort.requested' &&
        !open.records.some((x) => x.type === 'transition')
      ) {
        open.before = evolve(open.before, r);
      } else {
        open.records.push(r);
      }
    }
    state = evolve(state, r);
    if (open && r.type === 'run.ended' && r.run === open.start.run) {
      yield open;
      open = null;
    }
  }
  if (open) yield open;
}

/** Re-drives one run; every transition that matches the log is counted in `count`, even when a later one diverges. */
async function verifyRun(
  machine: QueryLoopMachine,
  run: RunSlice,
  count: { transitions: number },
): Promise<void> {
  const logged = run.records;
  const transitionIdx: number[] = [];
  logged.forEach((r, i) => {
    if (r.type === 'transition') transitionIdx.push(i);
  });
  const expectedTransitions = transitionIdx.map((i) => logged[i] as RecordOf<'transition'>);
  const expectedMessages = logged.filter(
    (r): r is RecordOf<'message.appended'> => r.type === 'message.appended',
  );
  const ended = logged.some((r) => r.type === 'run.ended' && r.data.reason !== 'interrupted');
  const endRecord = logged.find((r) => r.type === 'run.ended');
  let taken = 0;
  let messageIdx = 0;
  let stopped: (() => void) | null = null;
  let failure: ReplayDivergenceError | null = null;

  const firstAbort = logged.findIndex((r) => r.type === 'abort.requested');
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
  };

  const diverge = (seq: number, expected: unknown, actual: unknown, detail: string) => {
    failure ??= new ReplayDivergenceError(seq, expected, actual, detail);
    stopped?.();
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
      if (exp.data.origin !== e.origin || JSON.stringify(exp.data.message) !== JSON.stringify(e.message)) {
        diverge(
          exp.seq,
          exp.data,
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

/** A run that ended must end the same way: no message left unappended, the same status, reason and turns. */
function checkEnd(
  outcome: DriveOutcome,
  leftover: readonly RecordOf<'message.appended'>[],
  end: LogRecord | undefined,
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
  if (end?.type !== 'run.ended') return;
  const expected = { status: end.data.status, reason: end.data.reason, turns: end.data.turns };
  const actual = {
    status: TERMINAL_STATUS[outcome.reason as TerminalReason] ?? 'failed',
    reason: outcome.reason,
    turns: outcome.context.turn,
  };
  if (
    expected.status !== actual.status ||
    expected.reason !== actual.reason ||
    expected.turns !== actual.turns
  ) {
    throw new ReplayDivergenceError(end.seq, expected, actual, 'the run ends differently');
  }
}
