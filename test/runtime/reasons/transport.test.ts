import { describe, expect, it } from 'vitest';
import { verifyReplay } from '../../../src/replay/verify.ts';
import { VirtualClock } from '../../../src/runtime/determinism.ts';
import { MemoryEventStore } from '../../../src/store/memoryStore.ts';
import type { EventStore } from '../../../src/store/types.ts';
import { scriptedSession } from '../../support/harness.ts';
import { httpError, reasonSpec, recordsOf, text } from './reasonSpec.ts';

const spec = reasonSpec('transport');

const retried = ['transport_retry', 'backoff_elapsed'] as const;

describe('transport errors', () => {
  for (const [label, error] of [
    ['429 rate limit', httpError(429, 'rate limited', { type: 'rate_limit_error' })],
    ['500', httpError(500)],
    ['502', httpError(502)],
    ['503', httpError(503)],
    ['connection reset (no status)', httpError(undefined, 'ECONNRESET')],
  ] as const) {
    it(`${label}: transport_retry, backoff_elapsed, then the same request succeeds`, async () => {
      const h = await scriptedSession([error, text('ok')]);
      const res = await h.session.submit('hi');
      const records = await spec.expectRun(h, res, [
        'query_built',
        ...retried,
        'finish_requested',
        'completed',
      ]);
      expect(h.clock.sleeps).toHaveLength(1);
      const requested = recordsOf(records, 'model.requested');
      expect(requested.map((r) => r.data.attempt)).toEqual([1, 2]);
      expect(recordsOf(records, 'model.failed')).toHaveLength(1);
      // The retry is the same request.
      expect(h.client.requests[1]).toBe(h.client.requests[0]);
    });
  }

  it('retry-after is honoured: the wait is exactly the server-given delay, no jitter', async () => {
    const h = await scriptedSession([httpError(429, 'slow down', { retry_after_ms: 1_234 }), text('ok')]);
    const res = await h.session.submit('hi');
    const records = await spec.expectRun(h, res, [
      'query_built',
      ...retried,
      'finish_requested',
      'completed',
    ]);
    expect(h.clock.sleeps).toEqual([1_234]);
    expect(recordsOf(records, 'backoff.scheduled').map((r) => r.data)).toEqual([
      { attempt: 1, delayMs: 1_234, retryAfterMs: 1_234 },
    ]);
  });

  it('backoff grows exponentially (500 ms · 2^(n−1), cap 32 s) with jitter within ±25 %', async () => {
    const failures = Array.from({ length: 9 }, () => httpError(503, 'unavailable'));
    const h = await scriptedSession([...failures, text('ok')]);
    const res = await h.session.submit('hi');
    const records = await spec.expectRun(h, res, [
      'query_built',
      ...Array.from({ length: 9 }, () => retried).flat(),
      'finish_requested',
      'completed',
    ]);
    const nominal = [500, 1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 32_000, 32_000];
    expect(h.clock.sleeps).toHaveLength(9);
    h.clock.sleeps.forEach((ms, i) => {
      expect(ms, `retry ${i + 1}`).toBeGreaterThanOrEqual(nominal[i]! * 0.75);
      expect(ms, `retry ${i + 1}`).toBeLessThanOrEqual(nominal[i]! * 1.25);
    });
    // Jitter is really applied (the seeded random is not the midpoint).
    expect(h.clock.sleeps.filter((ms, i) => ms !== nominal[i]).length).toBeGreaterThan(0);
    // What was slept is what the log says was scheduled.
    expect(recordsOf(records, 'backoff.scheduled').map((r) => r.data.delayMs)).toEqual(h.clock.sleeps);
  });

  it('the jitter bounds are exactly −25 % and +25 %', async () => {
    for (const [random, factor] of [
      [0, 0.75],
      [0.5, 1],
      [1 - 1e-12, 1.25],
    ] as const) {
      const h = await scriptedSession([httpError(500), httpError(500), httpError(500), text('ok')], {
        random: () => random,
      });
      const res = await h.session.submit('hi');
      await spec.expectRun(h, res, [
        'query_built',
        ...retried,
        ...retried,
        ...retried,
        'finish_requested',
        'completed',
      ]);
      expect(h.clock.sleeps).toEqual([500, 1_000, 2_000].map((ms) => Math.round(ms * factor)));
    }
  });

  it('attempts are bounded: past maxTransportAttempts the run ends model_error', async () => {
    const h = await scriptedSession(
      [httpError(500, 'boom 1'), httpError(500, 'boom 2'), httpError(500, 'boom 3'), text('never sent')],
      { settings: { maxTransportAttempts: 3 } },
    );
    const res = await h.session.submit('hi');
    const records = await spec.expectRun(h, res, ['query_built', ...retried, ...retried, 'model_error']);
    expect(res.error).toBe('boom 3');
    expect(h.client.consumed).toBe(3);
    expect(recordsOf(records, 'model.requested').map((r) => r.data.attempt)).toEqual([1, 2, 3]);
  });

  it('the default bound is 10 attempts', async () => {
    const h = await scriptedSession(Array.from({ length: 11 }, () => httpError(503)));
    const res = await h.session.submit('hi');
    await spec.expectRun(h, res, [
      'query_built',
      ...Array.from({ length: 9 }, () => retried).flat(),
      'model_error',
    ]);
    expect(h.client.consumed).toBe(10);
  });

  it('529 three times in a row: model_fallback, and the next request uses the fallback model', async () => {
    const overloaded = httpError(529, 'overloaded', { type: 'overloaded_error' });
    const h = await scriptedSession([overloaded, overloaded, overloaded, text('ok'), text('next turn')], {
      settings: { model: 'main-model', fallbackModel: 'fallback-model' },
    });
    const res = await h.session.submit('hi');
    const records = await spec.expectRun(h, res, [
      'query_built',
      ...retried,
      ...retried,
      'model_fallback',
      'query_built',
      'finish_requested',
      'completed',
    ]);
    expect(h.client.requests.map((r) => r.model)).toEqual([
      'main-model',
      'main-model',
      'main-model',
      'fallback-model',
    ]);
    expect(recordsOf(records, 'model.requested').map((r) => [r.data.model, r.data.attempt])).toEqual([
      ['main-model', 1],
      ['main-model', 2],
      ['main-model', 3],
      ['fallback-model', 1],
    ]);
    // Two backoffs before the switch; the switch itself retries at once.
    expect(h.clock.sleeps).toHaveLength(2);
  });

  it('without a fallback model, 529s are plain transport retries', async () => {
    const overloaded = httpError(529, 'overloaded');
    const h = await scriptedSession([overloaded, overloaded, overloaded, overloaded, text('ok')]);
    const res = await h.session.submit('hi');
    await spec.expectRun(h, res, [
      'query_built',
      ...retried,
      ...retried,
      ...retried,
      ...retried,
      'finish_requested',
      'completed',
    ]);
  });

  it('only consecutive overloads count towards the fallback', async () => {
    const overloaded = httpError(529, 'overloaded');
    const h = await scriptedSession(
      [overloaded, overloaded, httpError(500), overloaded, overloaded, text('ok')],
      {
        settings: { fallbackModel: 'fallback-model' },
      },
    );
    const res = await h.session.submit('hi');
    await spec.expectRun(h, res, [
      'query_built',
      ...retried,
      ...retried,
      ...retried,
      ...retried,
      ...retried,
      'finish_requested',
      'completed',
    ]);
    expect(h.client.requests.every((r) => r.model !== 'fallback-model')).toBe(true);
  });

  it('401: model_error at once, no retry', async () => {
    const h = await scriptedSession([
      httpError(401, 'invalid x-api-key', { type: 'authentication_error' }),
      text('no'),
    ]);
    const res = await h.session.submit('hi');
    await spec.expectRun(h, res, ['query_built', 'model_error']);
    expect(res.error).toBe('invalid x-api-key');
    expect(h.clock.sleeps).toEqual([]);
    expect(h.client.consumed).toBe(1);
  });

  it('a 400 that is not about the prompt length is not retried either', async () => {
    const h = await scriptedSession([
      httpError(400, 'messages: roles must alternate', { type: 'invalid_request_error' }),
    ]);
    const res = await h.session.submit('hi');
    await spec.expectRun(h, res, ['query_built', 'model_error']);
    expect(res.error).toMatch(/roles must alternate/);
  });

  it('a clock that fails without an abort is a runtime error, not an abort', async () => {
    class BrokenClock extends VirtualClock {
      override async sleep(): Promise<void> {
        throw new Error('timer broken');
      }
    }
    const h = await scriptedSession([httpError(503), text('never sent')], { clock: new BrokenClock() });
    const res = await h.session.submit('hi');
    const records = await spec.expectRun(h, res, ['query_built', 'transport_retry', 'runtime_error']);
    expect(res.error).toBe('timer broken');
    expect(recordsOf(records, 'abort.requested')).toEqual([]);
  });

  it('a log that cannot be written before the request is a runtime error; nothing is lost', async () => {
    // The second append is the commit before the first request (the first wrote session.created).
    const inner = new MemoryEventStore();
    let appends = 0;
    const store: EventStore = Object.create(inner);
    store.append = async (session, records, options) => {
      if (++appends === 2) throw new Error('ENOSPC: no space left on device');
      return inner.append(session, records, options);
    };
    const h = await scriptedSession([text('answered on the second try')], { store });
    const res = await h.session.submit('hi');
    // The run's end was committed, with everything the failed commit held, in order.
    await spec.expectRun(h, res, ['query_built', 'runtime_error']);
    expect(res.error).toMatch(/log could not be written before the request: ENOSPC/);
    expect(h.client.consumed).toBe(0); // write-ahead: the request never left
    const again = await h.session.submit('hi again');
    expect(again.status).toBe('completed');
    const records = await h.records();
    expect(records.map((r) => r.seq)).toEqual(records.map((_, i) => i + 1));
    expect((await verifyReplay(records)).divergence).toBeNull();
  });

  spec.ownedReasonsAsserted();
});
