import { AppendOnlyList } from '../lib/appendOnlyList.ts';
import type { MessageEmitted } from '../machines/context.ts';
import { type QueryLoopMachine, queryLoopMachine, withEffects } from '../machines/queryLoop.machine.ts';
import { TERMINAL_STATUS, type TerminalReason } from '../machines/reasons.ts';
import type { Message } from '../model/messages.ts';
import { type DriveOutcome, driveMachine, type TransitionFact } from '../runtime/driveMachine.ts';
import type { LogRecord, RecordOf } from '../store/records.ts';
import { type BrokenSeal, brokenSeal } from '../store/seal.ts';
import { importedFromOf, verifyImported } from './conformance.ts';
import { ReplayDivergenceError } from './errors.ts';
import { LogWalk, type RunSlice } from './logWalk.ts';
import { type FactSource, recordedEffects } from './recordedEffects.ts';
import { Window } from './window.ts';

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
 *
 * `all` may be a lazy source (a store's synchronous reader): the records are pulled as the
 * re-drive needs them and let go once it is past them, so a long log is never held whole. A
 * source that throws (a malformed line) makes verify throw that error, as reading it first would.
 */
export async function verifyReplay(
  all: Iterable<LogRecord>,
  options: VerifyOptions = {},
): Promise<VerifyReport> {
  const { toSeq } = options;
  const records = new CheckedRecords(toSeq !== undefined ? upTo(all, toSeq) : all);
  // An imported session was not run by the chart: its imported runs are checked for conformance
  // instead (conformance.ts), and the runs reloop added are re-driven with those as history.
  const first = records.first();
  const report =
    first && importedFromOf([first])
      ? await verifyImported([...records], options, (rest, o) => verifyRuns(rest, o, { history: true }))
      : await verifyRuns(records, options, { history: false });
  // What the re-drive did not need is still read: every record is counted and its seal checked.
  records.drain();
  const seal = records.broken;
  const divergence =
    seal && (report.divergence === null || seal.seq < report.divergence.seq) ? seal : report.divergence;
  return {
    ...report,
    records: records.count,
    ok: divergence === null,
    sealed: records.count > 0 && records.allSealed,
    divergence,
  };
}

/** The records with seq ≤ `toSeq`, wherever they are (a log out of order is the walk's to report). */
function* upTo(records: Iterable<LogRecord>, toSeq: number): Generator<LogRecord> {
  for (const r of records) if (r.seq <= toSeq) yield r;
}

/** The records as verify reads them, each counted and its seal checked on the way (seal.ts). */
class CheckedRecords implements Iterable<LogRecord> {
  count = 0;
  /** Every record so far carries a seal. */
  allSealed = true;
  /** The first broken seal. */
  broken: BrokenSeal | null = null;
  private previous: string | undefined;
  private readonly source: Iterator<LogRecord>;
  private peeked: IteratorResult<LogRecord> | null = null;

  constructor(records: Iterable<LogRecord>) {
    this.source = records[Symbol.iterator]();
  }

  first(): LogRecord | undefined {
    this.peeked ??= this.source.next();
    return this.peeked.done ? undefined : this.peeked.value;
  }

  /** The records not read yet (each iteration goes on where the last one stopped). */
  *[Symbol.iterator](): Generator<LogRecord> {
    for (;;) {
      const next = this.peeked ?? this.source.next();
      this.peeked = null;
      if (next.done) return;
      const r = next.value;
      this.count++;
      if (r.h === undefined) this.allSealed = false;
      this.broken ??= brokenSeal(this.previous, r);
      this.previous = r.h;
      yield r;
    }
  }

  drain(): void {
    for (const _ of this);
  }
}

/** The walk and the re-drive of every run; `history`: records outside runs fold as history (imported runs). */
async function verifyRuns(
  records: Iterable<LogRecord>,
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
  // The source failed (a malformed line): that is the answer, whatever the runs before it did.
  if (walk.failure) throw walk.failure.error;
  if (walk.problem) found.push(walk.problem);
  const first = found.reduce<Divergence | null>((a, d) => (a === null || d.seq < a.seq ? d : a), null);
  return {
    ok: first === null,
    records: walk.walked,
    transitions: count.transitions,
    runs,
    divergence: first,
  };
}

/**
 * A run's records as the re-drive asks for them: its transitions, its messages, its end and its
 * first abort, found by reading the run only as far as the question needs.
 */
class RunFacts {
  /** Records of the run looked at so far. */
  private scanned = 0;
  private readonly transitions = new Window<{ at: number; record: RecordOf<'transition'> }>();
  private readonly messages = new Window<RecordOf<'message.appended'>>();
  private endRecord: RecordOf<'run.ended'> | undefined;
  private firstAbort = -1;

  constructor(private readonly run: RunSlice) {}

  private scan(): boolean {
    const records = this.run.records;
    if (this.scanned === records.length && !this.run.more()) return false;
    const at = this.scanned++;
    const r = records.at(at)!;
    if (r.type === 'transition') this.transitions.push({ at, record: r });
    else if (r.type === 'message.appended') this.messages.push(r);
    else if (r.type === 'run.ended') this.endRecord ??= r;
    else if (r.type === 'abort.requested' && this.firstAbort < 0) this.firstAbort = at;
    return true;
  }

  /** The run's `k`-th logged transition (from 0), if it has one. */
  transition(k: number): RecordOf<'transition'> | undefined {
    while (this.transitions.length <= k && this.scan());
    return this.transitions.at(k)?.record;
  }

  /** The run's `j`-th `message.appended` (from 0), if it has one. */
  message(j: number): RecordOf<'message.appended'> | undefined {
    while (this.messages.length <= j && this.scan());
    return this.messages.at(j);
  }

  /** Its messages from the `j`-th on (the whole run is read). */
  messagesFrom(j: number): RecordOf<'message.appended'>[] {
    this.readAll();
    return this.messages.range(j, this.messages.length);
  }

  transitionCount(): number {
    this.readAll();
    return this.transitions.length;
  }

  /** Its `run.ended` (the whole run is read). */
  end(): RecordOf<'run.ended'> | undefined {
    this.readAll();
    return this.endRecord;
  }

  /** Where the slice for the actor started after `index` transitions ends: at transition `index`, or at the run's end. */
  private sliceEnd(index: number): number {
    this.transition(index);
    return index < this.transitions.length ? this.transitions.at(index)!.at : this.run.records.length;
  }

  /**
   * The records between transition `index − 1` and transition `index`. The re-drive asks for
   * slices in order (`index` is the transitions taken so far), so what lies before is let go.
   */
  slice(index: number): LogRecord[] | null {
    const to = this.sliceEnd(index);
    if (index > this.transitions.length) return null;
    const from = index === 0 ? 0 : this.transitions.at(index - 1)!.at + 1;
    this.run.records.release(from);
    this.transitions.release(index - 1);
    return this.run.records.range(from, to);
  }

  abortedBy(index: number): boolean {
    const to = this.sliceEnd(index);
    return this.firstAbort >= 0 && this.firstAbort < to;
  }

  /** Messages before the `j`-th are compared: let them go. */
  releaseMessages(j: number): void {
    this.messages.release(j);
  }

  private readAll(): void {
    while (this.scan());
  }
}

/** Re-drives one run; every transition that matches the log is counted in `count`, even when a later one diverges. */
async function verifyRun(
  machine: QueryLoopMachine,
  run: RunSlice,
  count: { transitions: number },
): Promise<void> {
  const facts = new RunFacts(run);
  /** The run ended, and not by being interrupted: the machine must then have done all it logged. */
  const ended = () => {
    const end = facts.end();
    return end !== undefined && end.data.reason !== 'interrupted';
  };
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
    slice: (index) => facts.slice(index),
    abortedBy: (index) => facts.abortedBy(index),
    endOfLog() {
      if (!ended()) {
        stopped?.();
        return;
      }
      // The run ended, yet no fact answers this invocation: the code asks for an effect the
      // recorded run never made. Report it rather than wait for a fact that will not come.
      const exp = facts.transition(taken);
      diverge(
        exp?.seq ?? facts.end()?.seq ?? run.start.seq,
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
      const exp = facts.transition(taken);
      if (!exp) {
        if (!ended()) {
          stopped?.();
          return;
        }
        diverge(
          facts.end()?.seq ?? run.start.seq,
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
      const exp = facts.message(messageIdx);
      if (!exp) {
        if (ended())
          diverge(
            facts.end()?.seq ?? run.start.seq,
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
      run.messages.delete(exp.seq);
      messageIdx++;
      facts.releaseMessages(messageIdx);
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
  if (outcome !== 'stopped' && ended() && taken < facts.transitionCount()) {
    const exp = facts.transition(taken)!;
    throw new ReplayDivergenceError(
      exp.seq,
      exp.data,
      null,
      `the machine stopped (${outcome.final}); the log has ${exp.data.from} → ${exp.data.to} (${exp.data.reason})`,
    );
  }
  if (outcome !== 'stopped' && ended()) checkEnd(outcome, facts.messagesFrom(messageIdx), facts.end());
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
