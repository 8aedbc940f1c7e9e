import type { ToolOutput } from './types.ts';

/** What ended a call first: its tool's output, or one of its stops. */
export type Outcome = { out: ToolOutput } | 'timeout' | 'interrupted';

/**
 * The two things that can end a call before its tool answers: its timeout and the run's abort.
 * Either one settles the call's outcome and aborts the tool's signal (the run's reason, or
 * `Error('timeout')`).
 *
 * The tool's signal is made on first read: Node's AbortSignal costs ~4 µs to make and ~5 µs more
 * to listen on, and Read, Write and Edit never look at theirs. Read after a stop, it is made
 * already aborted, with the same reason.
 */
export class CallStops {
  private controller: AbortController | undefined;
  private stopped = false;
  private reason: unknown;
  settle: (outcome: Outcome) => void = ignore;

  /** `deadline`: when the call times out, in `performance.now()` ms. */
  constructor(readonly deadline: number) {}

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.stopped) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  stop(why: 'timeout' | 'interrupted', reason: unknown): void {
    if (this.stopped) return;
    this.stopped = true;
    this.reason = reason;
    this.settle(why);
    this.controller?.abort(reason);
  }
}

/**
 * The stops of one batch: one listener on the run's signal and one timer for all its calls,
 * instead of one of each per call. The timer is armed for the earliest deadline of the calls
 * running; when it fires it stops the calls that are due and re-arms for the next. A call that
 * ends leaves the timer alone (a later call's deadline is later), so a batch of calls run one
 * after another arms it once. The object is the listener itself (`handleEvent`), so the batch
 * makes no closures for it.
 */
export class BatchStops {
  private readonly running = new Set<CallStops>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private timerAt = Number.POSITIVE_INFINITY;

  constructor(private readonly run: AbortSignal) {
    run.addEventListener('abort', this, { once: true });
  }

  start(call: CallStops): void {
    this.running.add(call);
    if (this.run.aborted) call.stop('interrupted', this.run.reason);
    else if (call.deadline < this.timerAt) this.arm(call.deadline);
  }

  end(call: CallStops): void {
    this.running.delete(call);
  }

  /** The run's signal fired: every running call is interrupted. */
  handleEvent(): void {
    for (const call of this.running) call.stop('interrupted', this.run.reason);
  }

  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.run.removeEventListener('abort', this);
  }

  private arm(at: number): void {
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(timeUp, Math.max(0, at - performance.now()), this);
  }

  /** The timer fired: stop the calls that are due, re-arm for the next deadline. */
  due(): void {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = performance.now();
    let next = Number.POSITIVE_INFINITY;
    for (const call of this.running) {
      // Node's timers keep whole milliseconds: a call less than 1 ms short of its deadline is due.
      if (call.deadline <= now + 1)
        call.stop(this.run.aborted ? 'interrupted' : 'timeout', new Error('timeout'));
      else next = Math.min(next, call.deadline);
    }
    if (next !== Number.POSITIVE_INFINITY) this.arm(next);
  }
}

function ignore(): void {}

function timeUp(stops: BatchStops): void {
  stops.due();
}
