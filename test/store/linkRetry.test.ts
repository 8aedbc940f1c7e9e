import { describe, expect, it } from 'vitest';
import { isLinkError, type LinkRetry, linkDelay, withLinkRetry } from '../../src/store/linkRetry.ts';

/** A policy on a clock of its own: `sleep` only moves the clock. */
function fakePolicy(overrides: Partial<LinkRetry> = {}): LinkRetry & { slept: number[] } {
  let now = 0;
  const slept: number[] = [];
  return {
    forMs: 10_000,
    baseDelayMs: 100,
    maxDelayMs: 2_000,
    random: () => 1,
    now: () => now,
    sleep: async (ms) => {
      slept.push(ms);
      now += ms;
    },
    ...overrides,
    slept,
  };
}

const unreachable = Object.assign(new Error('connect ENETUNREACH 10.77.0.1:5432'), { code: 'ENETUNREACH' });

describe('link retry', () => {
  it('knows link errors from statement errors', () => {
    expect(isLinkError(unreachable)).toBe(true);
    expect(isLinkError(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isLinkError(Object.assign(new Error('terminating connection'), { code: '57P01' }))).toBe(true);
    expect(isLinkError(new AggregateError([unreachable]))).toBe(true);
    expect(isLinkError(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBe(false);
    expect(isLinkError('ENETUNREACH')).toBe(false);
  });

  it('backs off exponentially with full jitter, capped', () => {
    const p = fakePolicy();
    expect([0, 1, 2, 3, 4, 5, 10].map((a) => linkDelay(p, a))).toEqual([
      100, 200, 400, 800, 1600, 2000, 2000,
    ]);
    expect(linkDelay({ ...p, random: () => 0.5 }, 3)).toBe(400);
  });

  it('retries link errors until the link is back, and only those', async () => {
    const p = fakePolicy();
    let calls = 0;
    const value = await withLinkRetry(p, async () => {
      if (++calls < 4) throw unreachable;
      return 'ok';
    });
    expect([value, calls, p.slept]).toEqual(['ok', 4, [100, 200, 400]]);

    let statement = 0;
    await expect(
      withLinkRetry(fakePolicy(), async () => {
        statement++;
        throw Object.assign(new Error('syntax error'), { code: '42601' });
      }),
    ).rejects.toThrow('syntax error');
    expect(statement).toBe(1);
  });

  it('gives up once forMs has passed, with the last error', async () => {
    const p = fakePolicy({ forMs: 1_000 });
    await expect(
      withLinkRetry(p, async () => {
        throw unreachable;
      }),
    ).rejects.toBe(unreachable);
    expect(p.slept.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(1_000);
  });
});
