import type { ServerResponse } from 'node:http';

/*
 * What one client of `reloop serve` may cost. Before issue 18 a client that stopped reading kept
 * its whole log in memory for good (90 of them: 68 MB → 1.5 GB), twenty page requests of a large
 * session at once took the server to several GB, and a stalled stream kept `serve` alive 15 s past
 * SIGTERM. Numbers: docs/BENCHMARKS.md §13.
 */

/** Connections the server keeps at once; more are dropped by Node before any work. */
export const MAX_CONNECTIONS = 128;
/** Live event streams at once (a browser opens at most 6 per host: this is many viewers). */
export const MAX_STREAMS = 32;
/** Bytes an event stream may have waiting for its client before it waits for the client. */
export const MAX_BUFFERED = 1 << 20;
/** How long a client that stopped reading is waited for; then its stream is closed (EventSource reconnects). */
export const SLOW_CLIENT_MS = 10_000;
/** Pages and index chunks built at once: each holds a session's index as text. */
export const MAX_RENDERS = 2;
/** Requests waiting for a render; more are answered 503 at once. */
export const MAX_WAITING = 16;

/**
 * Resolves true once `res` has drained, false when the client went away, `signal` aborted (the
 * server is stopping) or `ms` passed first: the one wait of a stream, so none can outlive the
 * socket (a `drain` never comes once it is gone) or the server.
 */
export function drained(res: ServerResponse, signal: AbortSignal, ms: number): Promise<boolean> {
  if (res.destroyed || signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      res.off('drain', onDrain);
      res.off('close', onClose);
      signal.removeEventListener('abort', onClose);
      resolve(ok);
    };
    const onDrain = () => done(true);
    const onClose = () => done(false);
    const timer = setTimeout(onClose, ms);
    res.on('drain', onDrain);
    res.on('close', onClose);
    signal.addEventListener('abort', onClose, { once: true });
  });
}

/** The server is at capacity for this kind of work: 503, retry later. */
export class BusyError extends Error {
  readonly status = 503;
  readonly code = 'BUSY';
}

/**
 * At most `max` tasks at once, `waiting` more queued; beyond that, BusyError at once. Tasks of one
 * key that overlap share one run (twenty requests of one page build it once).
 */
export class Gate<T> {
  private running = 0;
  private readonly queue: (() => void)[] = [];
  private readonly shared = new Map<string, Promise<T>>();

  constructor(
    private readonly max: number,
    private readonly waiting: number,
  ) {}

  run(key: string, task: () => Promise<T>): Promise<T> {
    const same = this.shared.get(key);
    if (same) return same;
    if (this.running >= this.max && this.queue.length >= this.waiting)
      return Promise.reject(new BusyError('the server is busy building other pages: try again shortly'));
    const p = this.slot().then(async () => {
      try {
        return await task();
      } finally {
        this.running--;
        this.queue.shift()?.();
      }
    });
    this.shared.set(key, p);
    const forget = () => {
      if (this.shared.get(key) === p) this.shared.delete(key);
    };
    p.then(forget, forget);
    return p;
  }

  private slot(): Promise<void> {
    if (this.running < this.max) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise((resolve) =>
      this.queue.push(() => {
        this.running++;
        resolve();
      }),
    );
  }
}
