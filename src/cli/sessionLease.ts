import { hostname } from 'node:os';
import { SessionLockedError } from '../store/errors.ts';
import { runQueueOf } from '../store/runQueue.ts';
import { holdSession, type SessionLease } from '../store/sessionLease.ts';
import type { EventStore } from '../store/types.ts';

/**
 * The lease of a session this process is about to drive, on a store with a run queue
 * (PostgreSQL): the same lease a worker's claim is, so `run --resume` never runs a session a
 * worker (or another `run`) holds — SESSION_LOCKED instead. Null on a file store, whose writer
 * lock does the same. `as`: what holds it (`run`, `run --resume`, `approve`). `waitMs`: keep trying that long while a live holder has it (approve waits
 * for the worker that just parked a run to let it go).
 */
export async function leaseSession(
  store: EventStore,
  session: string,
  { as, waitMs = 0 }: { as: string; waitMs?: number },
): Promise<SessionLease | null> {
  const queue = runQueueOf(store);
  if (!queue) return null;
  // Named as `reloop sessions` shows it: `[held by run --resume vm:4242]`.
  const holder = `${as} ${hostname()}:${process.pid}`;
  const until = Date.now() + waitMs;
  for (;;) {
    try {
      return await holdSession(queue, session, holder);
    } catch (e) {
      if (!(e instanceof SessionLockedError) || Date.now() >= until) throw e;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
