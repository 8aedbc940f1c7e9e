import { describe, expect, it } from 'vitest';
import { historyProblems } from '../../../src/model/history.ts';
import type { Message } from '../../../src/model/messages.ts';
import { COMPACTION_MARKER } from '../../../src/model/scripted.ts';
import { compactedHistory, SUMMARY_PREFIX } from '../../../src/runtime/compactor.ts';
import { fold } from '../../../src/store/evolve.ts';
import { emptySessionState } from '../../../src/store/sessionState.ts';
import { scriptedSession } from '../../support/harness.ts';
import {
  httpError,
  PROMPT_TOO_LONG,
  reasonSpec,
  recordsOf,
  summary,
  text,
  textOfMessages,
  tools,
  toolUse,
  usage,
} from './reasonSpec.ts';

const spec = reasonSpec('compaction');

const compactionError = { ...httpError(500, 'summariser down'), for: 'compaction' };
/** A tool round whose response alone puts the context past a threshold of 1 000. */
const bigRound = (id: string) => tools([toolUse(id, 'echo', { text: id })], 'tool_use', usage(990, 20));
const THRESHOLD = { autoCompactThreshold: 1_000 };

describe('reactive compaction (context overflow)', () => {
  it('prompt too long (400): compact_retry, compacted, then the request is retried on the summary', async () => {
    const h = await scriptedSession([PROMPT_TOO_LONG, summary('the summary'), text('done')]);
    const res = await h.session.submit('a task');
    const records = await spec.expectRun(h, res, [
      'query_built',
      'compact_retry',
      'compacted',
      'query_built',
      'finish_requested',
      'completed',
    ]);
    expect(h.client.requests[1]!.system).toContain(COMPACTION_MARKER);
    const compaction = recordsOf(records, 'compaction.finished');
    expect(compaction).toHaveLength(1);
    // v2: the summary is read from the compaction response the record refers to, not copied.
    const response = recordsOf(records, 'model.responded').find((r) => r.data.purpose === 'compaction')!;
    expect(compaction[0]!.data).toEqual({
      ok: true,
      mode: 'reactive',
      response: response.seq,
      kept: 0,
      tailTokens: 8000,
      tokensBefore: expect.any(Number),
      tokensAfter: expect.any(Number),
    });
    expect(textOfMessages(h)).toEqual([`${SUMMARY_PREFIX}the summary`, 'done']);
    // A prompt-too-long error is not a transport error: no backoff.
    expect(h.clock.sleeps).toEqual([]);
  });

  it('compaction failing: the run ends prompt_too_long', async () => {
    const h = await scriptedSession([PROMPT_TOO_LONG, compactionError, text('never sent')]);
    const res = await h.session.submit('a task');
    const records = await spec.expectRun(h, res, ['query_built', 'compact_retry', 'prompt_too_long']);
    expect(res.error).toMatch(/compaction failed: summariser down/);
    expect(recordsOf(records, 'compaction.finished')[0]!.data).toMatchObject({ ok: false, mode: 'reactive' });
    expect(h.client.consumed).toBe(2);
  });

  it('an empty summary is a failed compaction', async () => {
    const h = await scriptedSession([PROMPT_TOO_LONG, summary('   ')]);
    const res = await h.session.submit('a task');
    await spec.expectRun(h, res, ['query_built', 'compact_retry', 'prompt_too_long']);
    expect(res.error).toMatch(/empty summary/);
    expect(textOfMessages(h)).toEqual(['a task']);
  });

  it('a second overflow after compaction: prompt_too_long (compaction is tried once)', async () => {
    const h = await scriptedSession([PROMPT_TOO_LONG, summary(), PROMPT_TOO_LONG, summary('unused')]);
    const res = await h.session.submit('a task');
    await spec.expectRun(h, res, [
      'query_built',
      'compact_retry',
      'compacted',
      'query_built',
      'prompt_too_long',
    ]);
    expect(res.error).toMatch(/prompt is too long/);
    expect(h.client.consumed).toBe(3);
  });

  it('the same with model_context_window_exceeded responses', async () => {
    const overflow = text('', 'model_context_window_exceeded', usage(200_000, 0));
    const h = await scriptedSession([overflow, summary(), overflow]);
    const res = await h.session.submit('a task');
    await spec.expectRun(h, res, [
      'query_built',
      'compact_retry',
      'compacted',
      'query_built',
      'prompt_too_long',
    ]);
  });

  it('a later overflow, after a successful response, may compact again', async () => {
    const h = await scriptedSession([
      PROMPT_TOO_LONG,
      summary('s1'),
      tools([toolUse('t1', 'echo', { text: 'x' })]),
      PROMPT_TOO_LONG,
      summary('s2'),
      text('done'),
    ]);
    const res = await h.session.submit('a task');
    await spec.expectRun(h, res, [
      'query_built',
      'compact_retry',
      'compacted',
      'query_built',
      'tool_use_requested',
      'tool_result_continuation',
      'query_built',
      'compact_retry',
      'compacted',
      'query_built',
      'finish_requested',
      'completed',
    ]);
  });
});

describe('auto-compaction (after tool results)', () => {
  it('threshold crossed after tool results: auto_compact, compacted, next turn on the compacted history', async () => {
    const h = await scriptedSession([bigRound('t1'), summary('S'), text('done')], { settings: THRESHOLD });
    const res = await h.session.submit('a task');
    const records = await spec.expectRun(h, res, [
      'query_built',
      'tool_use_requested',
      'auto_compact',
      'compacted',
      'query_built',
      'finish_requested',
      'completed',
    ]);
    expect(res.turns).toBe(2);
    const done = recordsOf(records, 'compaction.finished');
    expect(done.map((r) => r.data.ok && r.data.mode)).toEqual(['auto']);
    // The tail after the summary starts at an assistant turn and keeps the tool_use with its result.
    expect(h.session.state.messages.view().map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    expect(textOfMessages(h)[0]).toBe(`${SUMMARY_PREFIX}S`);
    const requested = recordsOf(records, 'model.requested');
    expect(requested.map((r) => [r.data.purpose, r.data.messageCount])).toEqual([
      ['turn', 1],
      ['compaction', 4],
      ['turn', 3],
    ]);
    expect(h.session.state.compactions).toBe(1);
  });

  it('the estimate is incremental: last usage plus the appended tool results', async () => {
    // 920 tokens reported by the response; a result of ~100 estimated tokens crosses 1 000.
    const crossing = await scriptedSession(
      [
        tools([toolUse('t1', 'echo', { text: 'x'.repeat(400) })], 'tool_use', usage(900, 20)),
        summary(),
        text('ok'),
      ],
      { settings: THRESHOLD },
    );
    const crossed = await crossing.session.submit('go');
    await spec.expectRun(crossing, crossed, [
      'query_built',
      'tool_use_requested',
      'auto_compact',
      'compacted',
      'query_built',
      'finish_requested',
      'completed',
    ]);

    // The same response with a small result stays under the threshold.
    const small = await scriptedSession(
      [tools([toolUse('t1', 'echo', { text: 'x'.repeat(40) })], 'tool_use', usage(900, 20)), text('ok')],
      { settings: THRESHOLD },
    );
    const notCrossed = await small.session.submit('go');
    await spec.expectRun(small, notCrossed, [
      'query_built',
      'tool_use_requested',
      'tool_result_continuation',
      'query_built',
      'finish_requested',
      'completed',
    ]);

    // A huge history does not count by itself: the server's usage says how big the context is,
    // only what was appended since is estimated (no re-count of the whole history every turn).
    const huge = await scriptedSession(
      [tools([toolUse('t1', 'echo', { text: 'x' })], 'tool_use', usage(100, 20)), text('ok')],
      { settings: THRESHOLD },
    );
    const notRecounted = await huge.session.submit('y'.repeat(40_000));
    await spec.expectRun(huge, notRecounted, [
      'query_built',
      'tool_use_requested',
      'tool_result_continuation',
      'query_built',
      'finish_requested',
      'completed',
    ]);
  });

  it('three failures in a row open the breaker: the next crossing goes on uncompacted, in later runs too', async () => {
    const h = await scriptedSession(
      [
        bigRound('t1'),
        compactionError,
        bigRound('t2'),
        compactionError,
        bigRound('t3'),
        compactionError,
        bigRound('t4'),
        text('done'),
        bigRound('t5'),
        text('done again'),
      ],
      { settings: THRESHOLD },
    );
    const res = await h.session.submit('a task');
    const failedRound = ['query_built', 'tool_use_requested', 'auto_compact', 'compaction_failed'] as const;
    const records = await spec.expectRun(h, res, [
      ...failedRound,
      ...failedRound,
      ...failedRound,
      'query_built',
      'tool_use_requested',
      'tool_result_continuation',
      'query_built',
      'finish_requested',
      'completed',
    ]);
    expect(recordsOf(records, 'compaction.finished').map((r) => r.data.ok)).toEqual([false, false, false]);
    expect(h.session.state.autoCompactFailures).toBe(3);
    // Failed compactions change nothing: the history is the uncompacted one.
    expect(h.session.state.messages.length).toBe(10);

    const again = await h.session.submit('more');
    await spec.expectRun(h, again, [
      'query_built',
      'tool_use_requested',
      'tool_result_continuation',
      'query_built',
      'finish_requested',
      'completed',
    ]);
    const started = recordsOf(await h.records(), 'run.started');
    expect(started.map((r) => r.data.autoCompactFailures)).toEqual([0, 3]);
  });

  it('a success resets the failure count', async () => {
    const h = await scriptedSession(
      [bigRound('t1'), compactionError, bigRound('t2'), summary(), text('done')],
      { settings: THRESHOLD },
    );
    const res = await h.session.submit('a task');
    await spec.expectRun(h, res, [
      'query_built',
      'tool_use_requested',
      'auto_compact',
      'compaction_failed',
      'query_built',
      'tool_use_requested',
      'auto_compact',
      'compacted',
      'query_built',
      'finish_requested',
      'completed',
    ]);
    expect(h.session.state.autoCompactFailures).toBe(0);
  });

  it('compacted histories stay valid: a tool_use and its tool_result are never split', async () => {
    const big = 'z'.repeat(400);
    const lengths = new Set<number>();
    for (const tail of [0, 50, 150, 250, 400, 10_000]) {
      const h = await scriptedSession(
        [
          tools([toolUse('a', 'echo', { text: big })], 'tool_use', usage(100, 20)),
          tools(
            [toolUse('b', 'echo', { text: big }), toolUse('c', 'echo', { text: 'c' })],
            'tool_use',
            usage(990, 20),
          ),
          summary(),
          text('done'),
        ],
        { settings: THRESHOLD, compactTailTokens: tail },
      );
      const res = await h.session.submit('a task');
      await spec.expectRun(h, res, [
        'query_built',
        'tool_use_requested',
        'tool_result_continuation',
        'query_built',
        'tool_use_requested',
        'auto_compact',
        'compacted',
        'query_built',
        'finish_requested',
        'completed',
      ]);
      const records = await h.records();
      const compacted = recordsOf(records, 'compaction.finished')[0]!;
      if (!compacted.data.ok) throw new Error('compaction should have succeeded');
      // The history the fold rebuilds right after the compaction (v2 logs only where it came from).
      const messages = fold(records.slice(0, compacted.seq), emptySessionState()).messages.view();
      expect(historyProblems(messages), `tail ${tail}`).toEqual([]);
      expect(messages[0]!.role).toBe('user');
      expect(messages[1]?.role ?? 'assistant').toBe('assistant');
      lengths.add(messages.length);
    }
    // The budgets cut the history at different places (nothing kept, one round, everything).
    expect([...lengths].sort()).toEqual([1, 3, 5]);
  });
});

describe('compactedHistory', () => {
  const history: Message[] = [{ role: 'user', content: 'the goal' }];
  for (let i = 0; i < 6; i++) {
    history.push({
      role: 'assistant',
      content: [
        { type: 'text', text: `step ${i}` },
        { type: 'tool_use', id: `u${i}a`, name: 'echo', input: { text: 'q'.repeat(40 * i) } },
        { type: 'tool_use', id: `u${i}b`, name: 'echo', input: { text: 'r' } },
      ],
    });
    history.push({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: `u${i}a`, content: 'w'.repeat(60 * i) },
        { type: 'tool_result', tool_use_id: `u${i}b`, content: 'r' },
      ],
    });
  }

  it('for every tail budget: summary first, then a verbatim suffix starting at an assistant turn', () => {
    expect(historyProblems(history)).toEqual([]);
    const tails = new Set<number>();
    for (let budget = 0; budget <= 600; budget += 5) {
      const out = compactedHistory(history, 'S', budget);
      expect(historyProblems(out), `budget ${budget}`).toEqual([]);
      expect(out[0]).toEqual({ role: 'user', content: [{ type: 'text', text: `${SUMMARY_PREFIX}S` }] });
      const tail = out.slice(1);
      expect(tail).toEqual(history.slice(history.length - tail.length));
      if (tail.length > 0) expect(tail[0]!.role).toBe('assistant');
      tails.add(tail.length);
    }
    // The sweep really exercised cuts at several places.
    expect(tails.size).toBeGreaterThan(3);
  });
});

describe('manual compaction (/compact, Session.compact)', () => {
  const verified = async (h: Awaited<ReturnType<typeof scriptedSession>>) => {
    const { verifyReplay } = await import('../../../src/replay/verify.ts');
    expect((await verifyReplay(await h.records())).divergence).toBeNull();
  };

  it('manual_compact, manual_compacted: the history becomes the summary, nothing else is sent, the next prompt goes on from it', async () => {
    const h = await scriptedSession([text('first answer'), summary('the manual summary'), text('after')]);
    await h.session.submit('a task');
    const res = await h.session.compact();
    const records = await spec.expectRun(h, res, ['manual_compact', 'manual_compacted']);
    expect(res.status).toBe('completed');
    const compaction = recordsOf(records, 'compaction.finished').at(-1)!;
    expect(compaction.data).toMatchObject({ ok: true, mode: 'manual' });
    expect(recordsOf(records, 'run.started').at(-1)!.data.config.compactNow).toBe(true);
    expect(h.client.consumed).toBe(2);
    expect(textOfMessages(h)[0]).toBe(`${SUMMARY_PREFIX}the manual summary`);
    await verified(h);
    const next = await h.session.submit('go on');
    expect(next.status).toBe('completed');
    expect(recordsOf(await h.records(), 'run.started').at(-1)!.data.config.compactNow).toBeUndefined();
    expect(historyProblems(h.session.state.messages.view())).toEqual([]);
    await verified(h);
  });

  it('the summary request failing: manual_compaction_failed, the history as it was', async () => {
    const h = await scriptedSession([text('first answer'), compactionError]);
    await h.session.submit('a task');
    const res = await h.session.compact();
    await spec.expectRun(h, res, ['manual_compact', 'manual_compaction_failed']);
    expect(res.error).toMatch(/summariser down/);
    expect(textOfMessages(h)).toEqual(['a task', 'first answer']);
    // A manual failure does not count towards the auto-compaction breaker.
    expect(h.session.state.autoCompactFailures).toBe(0);
    await verified(h);
  });

  it('a PreCompact hook blocking it (trigger manual): manual_compaction_blocked', async () => {
    const triggers: unknown[] = [];
    const h = await scriptedSession([text('first answer')], {
      hooks: {
        PreCompact: [
          {
            hooks: [
              async (input) => {
                triggers.push((input as { trigger?: unknown }).trigger);
                return { decision: 'block', reason: 'keep it all' } as never;
              },
            ],
          },
        ],
      },
    });
    await h.session.submit('a task');
    const res = await h.session.compact();
    await spec.expectRun(h, res, ['manual_compact', 'manual_compaction_blocked']);
    expect(triggers).toEqual(['manual']);
    expect(res.error).toMatch(/PreCompact hook blocked the compaction/);
    await verified(h);
  });

  it('nothing to compact in a new session', async () => {
    const h = await scriptedSession([]);
    await expect(h.session.compact()).rejects.toMatchObject({ code: 'NOTHING_TO_RUN' });
  });
});

spec.ownedReasonsAsserted();
