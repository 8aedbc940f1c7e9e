/**
 * Errors of the link to the database rather than of the statement: the server restarting, the
 * network gone (ENETUNREACH), a connection cut half-way. A statement that failed so may be tried
 * again on a new connection; anything else (a constraint, a bad query) may not.
 */
const LINK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENETUNREACH',
  'ENETDOWN',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTCONN',
  'EAI_AGAIN',
  // PostgreSQL: the server shutting down or restarting, connection exceptions (class 08).
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
]);

const LINK_MESSAGES =
  /Connection terminated|connection timeout|Client has encountered a connection error|Connection ended unexpectedly|Query read timeout|timeout exceeded when trying to connect/i;

export function isLinkError(e: unknown): boolean {
  if (typeof e !== 'object' || e === null) return false;
  const { code, message } = e as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && LINK_CODES.has(code)) return true;
  // AggregateError (a host with several addresses): any of them.
  const errors = (e as { errors?: unknown }).errors;
  if (Array.isArray(errors) && errors.some(isLinkError)) return true;
  return typeof message === 'string' && LINK_MESSAGES.test(message);
}

/** How a store (or a worker) waits between tries after a link error; injectable for tests. */
export interface LinkRetry {
  /** Keep trying this long after the first failure (ms); 0: never retry. */
  forMs: number;
  /** First wait (ms), doubled each try up to `maxDelayMs`, with full jitter. */
  baseDelayMs: number;
  maxDelayMs: number;
  random: () => number;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
}

export const DEFAULT_LINK_RETRY: LinkRetry = {
  forMs: 60_000,
  baseDelayMs: 100,
  maxDelayMs: 2_000,
  random: Math.random,
  now: Date.now,
  sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
};

/** The wait before try `attempt` (0-based): full jitter over an exponential cap. */
export function linkDelay(policy: LinkRetry, attempt: number): number {
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(attempt, 20));
  return Math.max(1, Math.round(cap * policy.random()));
}

/** Runs `fn`, trying again after link errors until `policy.forMs` has passed. */
export async function withLinkRetry<T>(policy: LinkRetry, fn: () => Promise<T>): Promise<T> {
  const deadline = policy.now() + policy.forMs;
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      if (!isLinkError(e) || policy.now() >= deadline) throw e;
      await policy.sleep(linkDelay(policy, attempt));
    }
  }
}
