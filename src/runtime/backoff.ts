/** Retry policy for transport errors: 500 ms · 2^(n−1), cap 32 s, ±25 % jitter. */
export interface BackoffPolicy {
  baseMs: number;
  capMs: number;
  jitter: number;
}

/** A retry-after beyond this is taken as a server bug, not an instruction to sleep for hours. */
export const MAX_RETRY_AFTER_MS = 300_000;

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 500, capMs: 32_000, jitter: 0.25 };

/**
 * Delay before retry `attempt` (1 = first retry). A server's retry-after wins when given:
 * it knows its own load better than our curve does (still capped, no jitter added).
 */
export function backoffDelay(
  attempt: number,
  random: number,
  retryAfterMs: number | undefined,
  policy: BackoffPolicy = DEFAULT_BACKOFF,
): number {
  if (retryAfterMs !== undefined && Number.isFinite(retryAfterMs) && retryAfterMs >= 0) {
    return Math.min(retryAfterMs, MAX_RETRY_AFTER_MS);
  }
  const exp = Math.min(policy.baseMs * 2 ** Math.max(0, attempt - 1), policy.capMs);
  const factor = 1 - policy.jitter + 2 * policy.jitter * random;
  return Math.round(exp * factor);
}
