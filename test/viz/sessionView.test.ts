import { describe, expect, it } from 'vitest';
import { fold } from '../../src/store/evolve.ts';
import { emptySessionState } from '../../src/store/sessionState.ts';
import { chartOf } from '../../src/viz/edgeCatalog.ts';
import { sessionView, viewerData } from '../../src/viz/sessionView.ts';
import { interestingSession, longSession } from './vizSessions.ts';

describe('sessionView', () => {
  it('places every transition on the chart, with its run and turn', async () => {
    const { records } = await interestingSession();
    const view = sessionView(records);
    const transitions = records.filter((r) => r.type === 'transition');
    expect(view.timeline).toHaveLength(transitions.length);
    expect(view.unknown).toEqual([]);
    const chart = chartOf();
    for (const t of view.timeline) expect(chart.edges[t.edge]?.reason).toBe(t.reason);
    const brief = view.timeline.map((t) => `${t.run}:${t.turn}:${t.reason}`);
    expect(brief.slice(0, 5)).toEqual([
      'r1:1:query_built',
      'r1:1:tool_use_requested',
      'r1:1:tool_result_continuation',
      'r1:2:query_built',
      'r1:2:transport_retry',
    ]);
    expect(brief).toContain('r1:2:auto_compact');
    expect(brief).toContain('r1:3:compacted');
    expect(brief.at(-1)).toBe('r2:2:completed');
  });

  it('sums tokens per turn from model.responded, compaction calls included and noted', async () => {
    const { records } = await interestingSession();
    const turns = sessionView(records).turns;
    expect(turns.map((t) => `${t.run}:${t.turn}`)).toEqual(['r1:1', 'r1:2', 'r1:3', 'r2:1', 'r2:2']);
    // r1 turn 2: a 529 (no usage), then the retried response.
    expect(turns[1]).toMatchObject({ input: 900, output: 60, compaction: 0, calls: 1 });
    // auto_compact opens turn 3 (the chart's nextTurn), so the compaction (1200 / 80) counts there,
    // with the max-tokens response, the answer the stop hook blocked and the final one.
    expect(turns[2]).toMatchObject({ input: 2180, output: 8342, compaction: 1280, calls: 4 });
    const total = turns.reduce((n, t) => n + t.input + t.output, 0);
    const state = fold(records, emptySessionState());
    expect(total).toBe(state.usage.inputTokens + state.usage.outputTokens);
  });

  it('reports transitions the chart has no edge for', async () => {
    const { records } = await interestingSession();
    const forged = records.map((r) =>
      r.type === 'transition' && r.seq === 4 ? { ...r, data: { ...r.data, reason: 'teleported' } } : r,
    );
    expect(sessionView(forged).unknown.map((t) => t.seq)).toEqual([4]);
  });
});

describe('viewerData steps', () => {
  it('gives, for every record, the same history and usage as evolve', async () => {
    const { records } = await interestingSession();
    const { steps } = viewerData(records);
    expect(steps.seq).toEqual(records.map((r) => r.seq));
    for (let i = 0; i < records.length; i++) {
      const state = fold(records.slice(0, i + 1), emptySessionState());
      const history = steps.segments[steps.seg[i]!]!.slice(0, steps.len[i]).map((m) => {
        const { role, content } = steps.messages[m]!;
        return { role, content };
      });
      expect(history, `seq ${records[i]!.seq}`).toEqual(state.messages.toArray());
      const u = steps.usages[steps.usage[i]!]!;
      expect(u).toEqual([
        state.usage.inputTokens,
        state.usage.outputTokens,
        state.usage.cacheReadInputTokens,
        state.usage.cacheCreationInputTokens,
        state.usage.costUsd,
      ]);
    }
  });

  it('stores each message once: the compacted history reuses the kept tail', async () => {
    const { records } = await interestingSession();
    const { steps } = viewerData(records);
    expect(steps.segments).toHaveLength(2);
    const appended = records.filter((r) => r.type === 'message.appended' || r.type === 'user.message').length;
    // One more than appended: the compaction summary. The kept tail is not copied.
    expect(steps.messages).toHaveLength(appended + 1);
    expect(steps.messages.filter((m) => m.origin === 'compaction')).toHaveLength(1);
  });

  it('stays linear in the log: a 1 000-record session embeds less than its own log', async () => {
    const records = await longSession(110);
    expect(records.length).toBeGreaterThan(1000);
    const data = JSON.stringify(viewerData(records));
    const log = records.map((r) => JSON.stringify(r)).join('\n');
    expect(data.length).toBeLessThan(log.length);
  });
});
