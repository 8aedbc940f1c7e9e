import type { EventStore, SessionJob } from './types.ts';

/** A queued run of one session: what to run it with (the submitter's flags) and its lease. */
export interface Job {
  session: string;
  state: SessionJob['state'];
  /** The run's settings as the submitter gave them (the worker validates them). */
  spec: unknown;
  /** The prompt of the run, delivered by the first run that starts after `afterSeq`; null: continue. */
  prompt: string | null;
  afterSeq: number;
  worker: string | null;
  leaseExpires: number | null;
  /** Claims so far: more than one means a worker lost it (a crash, an expired lease). */
  attempts: number;
  /** Why the run could not start (`done` with outcome `start_failed`; the prompt is kept). */
  startError?: string;
}

export class JobBusyError extends Error {
  readonly code = 'JOB_BUSY';
  constructor(
    readonly session: string,
    readonly state: string,
  ) {
    super(
      state === 'parked'
        ? `session ${session} is parked on tool calls awaiting approval: answer them first (reloop approvals)`
        : state === 'held'
          ? `session ${session} is being run by another process: wait for it to finish`
          : `session ${session} already has a ${state} run: wait for it to finish`,
    );
    this.name = 'JobBusyError';
  }
}

/**
 * Which runs a worker can start. A worker without model credentials can still run scripted runs
 * (`--script`, answered from the spec); it must never claim one that needs the model.
 */
export interface ClaimFilter {
  /** Only runs whose spec carries a script. */
  scriptedOnly?: boolean;
}

/** Outcome of a run that could not start (its spec, tools, MCP servers or session failed to load). */
export const START_FAILED = 'start_failed';

/**
 * A store's queue of runs for workers (PostgreSQL): at most one queued or running run per
 * session, claimed under a lease that the holder renews; a lease that runs out (its worker died)
 * makes the run claimable again.
 */
export interface RunQueue {
  /** Queues a run; JobBusyError when the session has one queued, running or parked already. */
  enqueue(session: string, spec: unknown, prompt: string | null, afterSeq: number): Promise<void>;
  /** Claims up to `max` runs (queued, or held under an expired lease) for `worker`, of those `filter` lets through. */
  claim(worker: string, max: number, leaseMs: number, filter?: ClaimFilter): Promise<Job[]>;
  /** Renews the worker's leases; returns the sessions it still holds. */
  renew(worker: string, sessions: readonly string[], leaseMs: number): Promise<string[]>;
  /**
   * Hands a held run back: `done`, `parked` (waiting for approvals) or `queued` for another
   * worker — then from `afterSeq` with no prompt (the prompt was given), when it is passed.
   */
  release(
    session: string,
    worker: string,
    state: 'done' | 'parked' | 'queued',
    outcome: unknown,
    afterSeq?: number,
  ): Promise<boolean>;
  /**
   * Queues the session's parked run again (its approvals are answered); false when it has none.
   * A worker's run whose holder still renews its lease is queued when that holder lets it go.
   */
  resume(session: string, afterSeq: number): Promise<boolean>;
  /**
   * Takes the session's lease for a process outside the queue (`run`, `run --resume`, `approve`):
   * the same lease a worker's claim is, renewed with `renew`. SessionLockedError while a live
   * holder renews it; JobBusyError while a run is queued for a worker. `created`: the session had
   * no queue row (the lease's row is deleted when it is let go).
   */
  hold(session: string, holder: string, leaseMs: number): Promise<{ created: boolean }>;
  /**
   * Lets a lease taken by `hold` go: the row becomes `next` (`restore`: what it was before the
   * hold) — a row the hold created is removed. False when the lease was no longer this holder's.
   */
  unhold(
    session: string,
    holder: string,
    next: 'done' | 'parked' | 'restore',
    outcome?: unknown,
  ): Promise<boolean>;
  get(session: string): Promise<Job | undefined>;
  /**
   * Hands back a claimed run that could not start: `done`, its outcome `start_failed` with the
   * error, and its prompt kept (the session shows why; nothing of the request is lost).
   */
  failStart(session: string, worker: string, error: string): Promise<boolean>;
  /** Whether any run (of those `filter` lets through) is queued or held: what `worker --exit-when-idle` waits for. */
  busy(filter?: ClaimFilter): Promise<boolean>;
  /** Runs queued that `filter` keeps out (a worker without credentials reports them as left). */
  excluded(filter: ClaimFilter): Promise<number>;
  /** Resolves when a run may have been queued (a notification), after `ms`, or on abort. */
  nextChange(ms: number, signal: AbortSignal): Promise<void>;
}

/** The store's run queue, for stores that have one. */
export function runQueueOf(store: EventStore): RunQueue | undefined {
  return (store as { runQueue?: RunQueue }).runQueue;
}
