import { nanoid } from 'nanoid';

/**
 * Every source of nondeterminism the runtime uses, injected. Live runs get the real ones;
 * tests and replays get deterministic ones. The values that matter (delays, ids, times)
 * are recorded in the log, so replay never needs to re-draw them.
 */
export interface Clock {
  now(): number;
  /**
   * A monotonic, high-resolution time in ms, for the durations the log records (tools, hooks).
   * Optional: `performance.now()` when absent. A virtual clock makes durations deterministic.
   */
  monotonicNow?(): number;
  /** Resolves after `ms`, rejects with an AbortError-like error when `signal` aborts. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

export type Random = () => number;
export type IdGenerator = (kind: 'session' | 'run') => string;

export const systemClock: Clock = {
  now: () => Date.now(),
  monotonicNow: () => performance.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal.aborted) return reject(new SleepAborted());
      const t = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        clearTimeout(t);
        reject(new SleepAborted());
      };
      signal.addEventListener('abort', onAbort, { once: true });
    }),
};

export class SleepAborted extends Error {
  readonly code = 'ABORTED';
  constructor() {
    super('aborted while waiting');
    this.name = 'SleepAborted';
  }
}

/** A clock whose sleeps take no real time: they advance virtual time and are remembered. */
export class VirtualClock implements Clock {
  readonly sleeps: number[] = [];
  constructor(private t = Date.UTC(2026, 0, 1)) {}
  now(): number {
    return this.t;
  }
  monotonicNow(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
  async sleep(ms: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) throw new SleepAborted();
    this.sleeps.push(ms);
    this.t += ms;
  }
}

export const systemRandom: Random = () => Math.random();

/** mulberry32: a small seeded generator, good enough for jitter in tests and demos. */
export function seededRandom(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const nanoidIds: IdGenerator = (kind) => `${kind === 'session' ? 's' : 'r'}_${nanoid(12)}`;

export function counterIds(prefix = ''): IdGenerator {
  const n = { session: 0, run: 0 };
  return (kind) => `${prefix}${kind === 'session' ? 's' : 'r'}${++n[kind]}`;
}
