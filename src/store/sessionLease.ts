import type { RunQueue } from './runQueue.ts';

/** How long a lease of `run` / `run --resume` / `approve` holds without a heartbeat. */
export const DEFAULT_LEASE_MS = 30_000;

/**
 * A session's lease held by a process outside the queue (`queue.hold`), renewed every third of
 * its length until it is let go. `lost` fires when a renewal finds the lease gone (this process
 * stalled past it and another took the session over): the holder must stop driving the session.
 */
export interface SessionLease {
  readonly lost: AbortSignal;
  /** Lets the lease go: the queue row becomes `next` (see RunQueue.unhold). */
  release(next: 'done' | 'parked' | 'restore', outcome?: unknown): Promise<boolean>;
  /**
   * Stops renewing without letting go: the lease lapses, and the session then counts as
   * interrupted (its run is open) until another process takes it over and closes the run.
   */
  abandon(): void;
}

export async function holdSession(
  queue: RunQueue,
  session: string,
  holder: string,
  leaseMs = DEFAULT_LEASE_MS,
): Promise<SessionLease> {
  await queue.hold(session, holder, leaseMs);
  const lost = new AbortController();
  let stopped = false;
  const beat = setInterval(
    () => {
      queue.renew(holder, [session], leaseMs).then(
        (kept) => {
          if (!stopped && kept.length === 0) {
            stopped = true;
            clearInterval(beat);
            lost.abort(new Error(`lease lost: another process holds session ${session}`));
          }
        },
        () => undefined, // the database is unreachable: the next beat tries again
      );
    },
    Math.max(50, Math.floor(leaseMs / 3)),
  );
  // The heartbeat never keeps a process alive that is otherwise done.
  beat.unref();
  const stop = () => {
    stopped = true;
    clearInterval(beat);
  };
  return {
    lost: lost.signal,
    async release(next, outcome) {
      stop();
      return queue.unhold(session, holder, next, outcome);
    },
    abandon: stop,
  };
}
