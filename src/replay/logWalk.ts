import { TASK_TOOL_NAME } from '../agents/definition.ts';
import { INTERRUPTED_RUN_REASON } from '../machines/reasons.ts';
import { mcpToolName } from '../mcp/tools.ts';
import { type Message, toolUsesOf } from '../model/messages.ts';
import { type InterruptedRunPlan, planInterruptedRun } from '../runtime/recovery.ts';
import { LogReferenceError } from '../store/errors.ts';
import { evolve } from '../store/evolve.ts';
import type { LogRecord, RecordOf } from '../store/records.ts';
import { toolResultBlock } from '../store/refs.ts';
import { emptySessionState, type SessionState } from '../store/sessionState.ts';
import type { Mismatch } from './derivedFacts.ts';
import { Window } from './window.ts';

/**
 * One run's records, handed out by the walk as soon as the machine can start on it (its first
 * transition is read, or the run closed without one) and filled as the consumer asks for more:
 * the log is never held whole in memory (a 100 000-record log costs more in GC to keep than to
 * verify); the consumer releases the records it is done with.
 */
export class RunSlice {
  readonly records = new Window<LogRecord>();
  /** No record will join this run any more (it ended, the walk stopped, or the log did). */
  closed = false;
  /** The message each `message.appended` of `records` stands for (v2 records refer to their content). */
  readonly messages = new Map<number, Message>();

  constructor(
    readonly start: RecordOf<'run.started'>,
    /** State the machine starts from: the fold up to the run's first transition-relevant record. */
    public before: SessionState,
    private readonly walk: LogWalk,
  ) {}

  /** Walks on until one more record joins this run; false once it is closed. */
  more(): boolean {
    const had = this.records.length;
    while (!this.closed && this.records.length === had) this.walk.step();
    return this.records.length > had;
  }
}

const json = JSON.stringify;

/**
 * Walks a log once, folding it, and cuts it into runs for the machine to re-drive. On the way it
 * checks what needs no machine: one session, seqs 1, 2, 3…, every record inside the run it names,
 * references that resolve, and the records derived from the fold itself — a run's start (the
 * breaker count it inherits, the run it resumes), its end (usage summed from its responses; for a
 * run closed by resume, what was in flight), and the repairs a resumed run makes to the history.
 * The first record that fails is kept in `problem`, and the walk stops there (the run it was in is
 * still handed out, up to that record, so anything the machine finds earlier is found too).
 *
 * The records are pulled from `records` one at a time, as the runs' consumer asks for them: a
 * lazy source (a stream read from disk) is verified without being held whole. A source that
 * throws (a malformed line) stops the walk like a problem; the error is kept in `failure` for the
 * caller to throw once the run in hand is done.
 */
export class LogWalk {
  problem: Mismatch | null = null;
  failure: { error: unknown } | null = null;
  /** Records pulled from the source so far. */
  walked = 0;
  private readonly source: Iterator<LogRecord>;
  private finished = false;
  private state = emptySessionState();
  private open: RunSlice | null = null;
  /** A run the machine can start on, not handed out yet. */
  private ready: RunSlice | null = null;
  private sawTransition = false;
  /** What resume owed the history when it closed the last interrupted run. */
  private owed: InterruptedRunPlan | null = null;
  private repairing: InterruptedRunPlan | null = null;
  private session: string | undefined;
  private first = true;
  private seq = 0;

  /**
   * `history`: the log of an imported session as conformance.ts hands it over — its imported runs
   * taken out (their records fold as history outside any run, their start and end records gone,
   * so seqs skip), the rest re-driven as usual.
   */
  constructor(
    records: Iterable<LogRecord>,
    private readonly options: { history?: boolean } = {},
  ) {
    this.source = records[Symbol.iterator]();
  }

  /** The runs, in order; each is finished (walked to its end) before the next is looked for. */
  *runs(): Generator<RunSlice> {
    for (;;) {
      while (this.ready === null && !this.finished) this.step();
      const run = this.ready;
      if (run === null) return;
      this.ready = null;
      yield run;
      while (!run.closed) this.step();
    }
  }

  /**
   * Walks one record. It runs wherever the consumer asks for a record, even inside the machine's
   * effects: nothing may escape from here into the chart, so any error stops the walk instead.
   */
  step(): void {
    if (this.finished) return;
    try {
      this.walkOne();
    } catch (error) {
      this.failure = { error };
      this.finish();
    }
  }

  private walkOne(): void {
    const next = this.source.next();
    if (next.done) {
      this.finish();
      return;
    }
    const r = next.value;
    this.walked++;
    if (this.first) {
      this.first = false;
      this.session = r.session;
    }
    this.seq = this.options.history ? Math.max(this.seq + 1, r.seq) : this.seq + 1;
    const state = this.state;
    const open = this.open;
    const owed = this.owed;
    const repairing = this.repairing;
    const problem =
      this.envelope(r, this.seq, this.session, open) ??
      (r.type === 'tool.finished' ? toolResultProblem(r) : null) ??
      (r.type === 'tool.started' ? mcpReadOnlyProblem(r, state) : null) ??
      (r.type === 'run.started' ? this.runStart(r, state, owed) : null) ??
      (r.type === 'run.ended' ? this.runEnd(r, state) : null) ??
      (repairing && !this.sawTransition ? this.repair(r, repairing) : null);
    if (problem) {
      this.stop(problem);
      return;
    }
    let after: SessionState;
    try {
      after = evolve(state, r);
    } catch (e) {
      if (!(e instanceof LogReferenceError)) throw e;
      this.stop({ seq: r.seq, expected: null, actual: r.data, detail: e.detail });
      return;
    }
    if (repairing && !this.sawTransition && r.type === 'message.appended') {
      const p = this.repairedHistory(r, state, after.messages.last()!);
      if (p) {
        this.stop(p);
        return;
      }
    }
    if (r.type === 'run.started') {
      // No run is open here: the envelope check refuses a run that starts inside another.
      this.open = new RunSlice(r, after, this);
      this.sawTransition = false;
      this.repairing = r.data.resumedFrom !== undefined ? owed : null;
      this.owed = null;
    } else if (open) {
      // Everything a run logs before its first transition (the user message, the repairs of a
      // resumed run) is what the machine starts from, not something it did. An abort stays with
      // the run: the actors must see it even before the first transition.
      if (r.type === 'transition' && !this.sawTransition) {
        this.sawTransition = true;
        // `before` is final from here on: the machine can start.
        this.ready = open;
      }
      if (this.sawTransition || r.type === 'abort.requested') {
        open.records.push(r);
        if (r.type === 'message.appended') open.messages.set(r.seq, after.messages.last()!);
      } else {
        open.before = after;
      }
    }
    if (r.type === 'run.ended' && r.data.reason === INTERRUPTED_RUN_REASON)
      this.owed = closingPlan(state, r.data.interrupted?.inFlight);
    this.state = after;
    if (open && r.type === 'run.ended') this.close();
  }

  private stop(problem: Mismatch): void {
    this.problem = problem;
    this.finish();
  }

  private finish(): void {
    this.finished = true;
    this.close();
  }

  /** Closes the open run; one the machine never started on is handed out now. */
  private close(): void {
    const open = this.open;
    if (!open) return;
    this.open = null;
    open.closed = true;
    if (!this.sawTransition) this.ready = open;
  }

  private envelope(
    r: LogRecord,
    seq: number,
    session: string | undefined,
    open: RunSlice | null,
  ): Mismatch | null {
    if (r.seq !== seq)
      return { seq: r.seq, expected: seq, actual: r.seq, detail: `seq ${r.seq} where ${seq} belongs` };
    if (r.session !== session) {
      return { seq: r.seq, expected: session, actual: r.session, detail: 'a record of another session' };
    }
    if ((r.type === 'session.created') !== (seq === 1)) {
      return {
        seq: r.seq,
        expected: 'session.created first, once',
        actual: r.type,
        detail: 'session.created opens a log, and only it',
      };
    }
    if (r.type === 'session.created' || r.type === 'run.started') {
      if (r.type === 'run.started' && open) {
        return {
          seq: r.seq,
          expected: null,
          actual: r.run,
          detail: `a run starts while run ${open.start.run} has not ended`,
        };
      }
      return (r.run === null) === (r.type === 'session.created')
        ? null
        : { seq: r.seq, expected: null, actual: r.run, detail: `${r.type} with the wrong run` };
    }
    const expected = open?.start.run ?? null;
    if (!open && this.options.history) return null;
    // Between runs only an abort can be logged (one requested while resume was closing a dead run).
    if (r.run !== expected && !(r.type === 'abort.requested' && r.run === null)) {
      return {
        seq: r.seq,
        expected,
        actual: r.run,
        detail: open ? 'a record of another run inside a run' : 'a record outside any run',
      };
    }
    return null;
  }

  private runStart(
    r: RecordOf<'run.started'>,
    state: SessionState,
    owed: InterruptedRunPlan | null,
  ): Mismatch | null {
    if (r.data.autoCompactFailures !== state.autoCompactFailures) {
      return {
        seq: r.seq,
        expected: state.autoCompactFailures,
        actual: r.data.autoCompactFailures,
        detail: 'the run does not start from the auto-compaction failures the session counts',
      };
    }
    const resumed = r.data.resumedFrom;
    // An imported run's end is not in the history handed over: what it resumes cannot be told.
    if (resumed !== undefined && !this.options.history && (!owed || state.runs.last()?.id !== resumed)) {
      return {
        seq: r.seq,
        expected: owed ? state.runs.last()?.id : null,
        actual: resumed,
        detail: 'resumes a run that was not just closed as interrupted',
      };
    }
    return null;
  }

  private runEnd(r: RecordOf<'run.ended'>, state: SessionState): Mismatch | null {
    const run = state.currentRun;
    if (!run) return { seq: r.seq, expected: null, actual: r.data, detail: 'a run ends that never started' };
    if (json(r.data.usage) !== json(run.usage)) {
      return {
        seq: r.seq,
        expected: run.usage,
        actual: r.data.usage,
        detail: "the run's usage is not the sum of its responses'",
      };
    }
    // What was in flight is compared where it is recorded (v2 always records it when resume closes a run).
    if (!r.data.interrupted && (r.data.reason !== INTERRUPTED_RUN_REASON || r.v < 2)) return null;
    const plan = closingPlan(state, r.data.interrupted?.inFlight);
    const expected = {
      status: 'aborted',
      reason: INTERRUPTED_RUN_REASON,
      turns: run.turns,
      usage: run.usage,
      interrupted: { state: plan.state, inFlight: plan.inFlight },
    };
    return json(expected) === json(r.data)
      ? null
      : {
          seq: r.seq,
          expected,
          actual: r.data,
          detail: 'the interrupted run was not closed as the log it left says',
        };
  }

  /** A resumed run, before its first transition: only the results resume owed the dead run's tool calls. */
  private repair(r: LogRecord, plan: InterruptedRunPlan): Mismatch | null {
    if (r.type !== 'tool.started' && r.type !== 'tool.finished') return null;
    const owed =
      r.type === 'tool.finished' ? plan.finished.find((f) => f.toolUseId === r.data.toolUseId) : undefined;
    if (owed) {
      return json(owed) === json(r.data)
        ? null
        : {
            seq: r.seq,
            expected: owed,
            actual: r.data,
            detail: 'the "interrupted" result resume owed is not the one logged',
          };
    }
    // A sub-agent in flight is resumed from its own log; its end is the Task call's result.
    const child = plan.children.find((x) => x.toolUseId === r.data.toolUseId);
    if (child) {
      return child.index === r.data.index && r.data.name === TASK_TOOL_NAME
        ? null
        : { seq: r.seq, expected: child, actual: r.data, detail: 'a Task result that is not its call’s' };
    }
    const rerun = plan.rerun.find((x) => x.toolUseId === r.data.toolUseId);
    if (!rerun || rerun.name !== r.data.name || rerun.index !== r.data.index) {
      return {
        seq: r.seq,
        expected: rerun ?? null,
        actual: r.data,
        detail: 'a result resume did not owe: not a read-only call in flight',
      };
    }
    return null;
  }

  /** The message that closes a resumed run's repairs: a result for every tool_use the dead run left open. */
  private repairedHistory(
    r: RecordOf<'message.appended'>,
    state: SessionState,
    appended: Message,
  ): Mismatch | null {
    const last = state.messages.last();
    const uses = last?.role === 'assistant' ? toolUsesOf(last.content) : [];
    const content = uses.map((u) => {
      const result = state.unappendedResults.get(u.id);
      return result ? toolResultBlock(u.id, result) : null;
    });
    const expected = { role: 'user', content };
    if (r.data.origin === 'interrupted' && !content.includes(null) && json(expected) === json(appended))
      return null;
    return {
      seq: r.seq,
      expected: { message: expected, origin: 'interrupted' },
      actual: r.data,
      detail: 'the repaired history is not the results of the open tool calls',
    };
  }
}

/**
 * The plan resume made when it closed a dead run. It depends on whether the resuming session ran
 * sub-agents (then a Task call in flight resumes its child instead of being re-run), which the log
 * does not record: the plan whose in-flight list is the one logged is the one resume made.
 */
function closingPlan(state: SessionState, logged: readonly string[] | undefined): InterruptedRunPlan {
  const plain = planInterruptedRun(state)!;
  const withChildren = planInterruptedRun(state, { subAgents: true })!;
  return logged && json(withChildren.inFlight) === json(logged) ? withChildren : plain;
}

/** A tool result is an error exactly when its outcome is not `ok` (the orchestrator's rule). */
function toolResultProblem(r: RecordOf<'tool.finished'>): Mismatch | null {
  const isError = r.data.outcome !== 'ok';
  return r.data.result.isError === isError
    ? null
    : {
        seq: r.seq,
        expected: isError,
        actual: r.data.result.isError,
        detail: `an ${r.data.outcome} result whose isError says otherwise`,
      };
}

/**
 * An MCP tool is read-only exactly when its server's tool list says so (`readOnlyHint`): what
 * resume re-runs and what the policy asks less about follow from it.
 */
function mcpReadOnlyProblem(r: RecordOf<'tool.started'>, state: SessionState): Mismatch | null {
  if (!r.data.name.startsWith('mcp__')) return null;
  for (const server of state.mcpServers.values()) {
    if (server.status !== 'connected') continue;
    const info = server.tools.find((t) => mcpToolName(server.server, t.name) === r.data.name);
    if (!info) continue;
    const readOnly = info.annotations?.readOnlyHint === true;
    if (readOnly === r.data.readOnly) return null;
    return {
      seq: r.seq,
      expected: readOnly,
      actual: r.data.readOnly,
      detail: `tool.started readOnly of ${r.data.name} is not what MCP server ${server.server}'s tool list says (seq ${server.toolsSeq})`,
    };
  }
  return null;
}
