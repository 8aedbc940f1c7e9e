import { AppendOnlyList } from '../lib/appendOnlyList.ts';
import type { MessageEmitted } from '../machines/context.ts';
import { type QueryLoopMachine, queryLoopMachine, withEffects } from '../machines/queryLoop.machine.ts';
import { type DriveOutcome, driveMachine, type TransitionFact } from '../runtime/driveMachine.ts';
import type { LogRecord } from '../store/records.ts';
import type { Mismatch } from './derivedFacts.ts';
import { LogWalk, type RunSlice } from './logWalk.ts';
import { type FactSource, recordedEffects } from './recordedEffects.ts';

/** What the chart did past the end of a log whose last run is open. */
export type ChartStep =
  | { kind: 'transition'; fact: TransitionFact }
  | { kind: 'message'; emitted: MessageEmitted };

export interface OpenRunContinuation {
  /** The transitions and messages the chart made after the last logged one, in order. */
  steps: ChartStep[];
  /** The chart reached a final state (no effect was left to ask for); null when it waits for one. */
  outcome: DriveOutcome | null;
  /** The log does not replay up to its end: the first record it disagrees on. */
  problem: Mismatch | null;
}

/**
 * Re-drives the last run of `records` (it must be open: no `run.ended`) with every effect answered
 * from the log, as verify does, and goes on past the last logged transition for as long as the log
 * answers the effects: what the chart would have logged next, from the chart itself. A fork whose
 * last record was replaced (a counterfactual response or tool result) is completed with these steps,
 * up to the effect that needs a live answer (the tools the response asks for, the next model call).
 */
export async function continueOpenRun(
  records: readonly LogRecord[],
  machine: QueryLoopMachine = queryLoopMachine,
): Promise<OpenRunContinuation> {
  const walk = new LogWalk(records);
  let last: RunSlice | null = null;
  for (const run of walk.runs()) {
    while (run.more());
    last = run;
  }
  if (walk.failure) throw walk.failure.error;
  if (walk.problem) return { steps: [], outcome: null, problem: walk.problem };
  if (!last || last.records.length === 0 || records.at(-1)?.type === 'run.ended')
    throw new Error('continueOpenRun: the log has no open run with a transition');
  return redrive(machine, last);
}

async function redrive(machine: QueryLoopMachine, run: RunSlice): Promise<OpenRunContinuation> {
  const records = run.records.range(0, run.records.length);
  const logged: number[] = [];
  records.forEach((r, i) => {
    if (r.type === 'transition') logged.push(i);
  });
  const loggedMessages = records.filter((r) => r.type === 'message.appended').length;
  const steps: ChartStep[] = [];
  let taken = 0;
  let messages = 0;
  let problem: Mismatch | null = null;
  let stop: () => void = () => {};
  const stopped = new Promise<'stopped'>((resolve) => {
    stop = () => resolve('stopped');
  });
  const sliceEnd = (index: number) => (index < logged.length ? logged[index]! : records.length);

  const src: FactSource = {
    get taken() {
      return taken;
    },
    slice(index) {
      if (index > logged.length) return null;
      return records.slice(index === 0 ? 0 : logged[index - 1]! + 1, sliceEnd(index));
    },
    abortedBy: (index) => records.slice(0, sliceEnd(index)).some((r) => r.type === 'abort.requested'),
    endOfLog: () => stop(),
    mismatch(seq, expected, actual, detail) {
      problem ??= { seq, expected, actual, detail };
      stop();
    },
    before: run.before,
  };

  const observer = {
    onTransition(t: TransitionFact) {
      if (problem) return;
      if (taken < logged.length) {
        const d = records[logged[taken]!]!;
        if (
          d.type === 'transition' &&
          (d.data.from !== t.from || d.data.to !== t.to || d.data.reason !== t.reason)
        ) {
          problem = {
            seq: d.seq,
            expected: d.data,
            actual: t,
            detail: 'the log does not replay up to its end',
          };
          stop();
          return;
        }
      } else steps.push({ kind: 'transition', fact: t });
      taken++;
    },
    onMessage(e: MessageEmitted) {
      if (problem) return;
      if (messages++ >= loggedMessages) steps.push({ kind: 'message', emitted: e });
    },
  };

  const input = {
    config: run.start.data.config,
    messages: AppendOnlyList.from(run.before.messages.view()),
    autoCompactFailures: run.start.data.autoCompactFailures,
  };
  const outcome = await Promise.race([
    driveMachine(withEffects(machine, recordedEffects(src)), input, observer),
    stopped,
  ]);
  return { steps, outcome: outcome === 'stopped' ? null : outcome, problem };
}
