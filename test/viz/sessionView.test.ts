import { describe, expect, it } from 'vitest';
import { fold } from '../../src/store/evolve.ts';
import type { LogRecord } from '../../src/store/records.ts';
import { emptySessionState } from '../../src/store/sessionState.ts';
import { chartOf } from '../../src/viz/edgeCatalog.ts';
import { sessionView } from '../../src/viz/sessionView.ts';
import { indexRecords } from '../../src/viz/viewerIndex.ts';
import { interestingSession } from './vizSessions.ts';

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
      r.type === 'transition' && r.seq === 5 ? { ...r, data: { ...r.data, reason: 'teleported' } } : r,
    );
    expect(sessionView(forged).unknown.map((t) => t.seq)).toEqual([5]);
  });
});

describe('the viewer index', () => {
  it('gives, for every record, the same history and usage as evolve', async () => {
    const { records } = await interestingSession();
    const chunk = indexRecords(records, chartOf()).chunk();
    expect(chunk.cols.seq).toEqual(records.map((r) => r.seq));
    const segs: number[][] = [];
    for (const [seg, msg] of chunk.tables.segOps) {
      segs[seg] ??= [];
      segs[seg].push(msg);
    }
    for (let i = 0; i < records.length; i++) {
      const state = fold(records.slice(0, i + 1), emptySessionState());
      const history = (segs[chunk.cols.seg[i]!] ?? []).slice(0, chunk.cols.len[i]).map((m) => {
        const { role, content } = JSON.parse(chunk.messages[m]!) as { role: string; content: unknown };
        return { role, content };
      });
      expect(history, `seq ${records[i]!.seq}`).toEqual(state.messages.toArray());
      expect(chunk.tables.usages[chunk.cols.usage[i]!]).toEqual([
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
    const chunk = indexRecords(records, chartOf()).chunk();
    expect(new Set(chunk.tables.segOps.map(([seg]) => seg))).toEqual(new Set([0, 1]));
    const appended = records.filter((r) => r.type === 'message.appended' || r.type === 'user.message').length;
    // One more than appended: the compaction summary. The kept tail is not copied.
    expect(chunk.messages).toHaveLength(appended + 1);
    expect(chunk.messages.filter((m) => m.includes('"origin":"compaction"'))).toHaveLength(1);
  });

  it('places each transition on the chart and links it to the fact that triggered it', async () => {
    const { records } = await interestingSession();
    const chart = chartOf();
    const { cols, tables } = indexRecords(records, chart).chunk();
    const at = (seq: number) => records.findIndex((r) => r.seq === seq);
    const retry = at(21);
    expect(records[retry]).toMatchObject({ type: 'transition', data: { reason: 'transport_retry' } });
    expect(chart.edges[cols.edge[retry]!]?.reason).toBe('transport_retry');
    expect(tables.reasons[cols.reason[retry]!]).toBe('transport_retry');
    // transport_retry ← the model.failed before it; tool_use_requested ← the response; query_built ← the appended results.
    expect(records[cols.cause[retry]!]?.type).toBe('model.failed');
    expect(records[cols.cause[at(8)]!]?.type).toBe('model.responded');
    expect(records[cols.cause[at(18)]!]).toMatchObject({
      type: 'message.appended',
      data: { origin: 'tool_results' },
    });
    expect(records[cols.cause[at(47)]!]?.type).toBe('hook.decided');
    for (let i = 0; i < records.length; i++)
      if (records[i]!.type !== 'transition') expect(cols.cause[i]).toBe(-1);
  });

  it('numbers turns as the chart does, and names the tool of every tool record', async () => {
    const { records } = await interestingSession();
    const { cols, tables } = indexRecords(records, chartOf()).chunk();
    const turnOf = (seq: number) => tables.turns[cols.turn[records.findIndex((r) => r.seq === seq)]!];
    expect(turnOf(16)).toMatchObject({ turn: 1 }); // tool_result_continuation ends turn 1
    expect(turnOf(17)).toMatchObject({ turn: 2 });
    expect(turnOf(59)).toMatchObject({ turn: 1 }); // run 2 starts over
    expect(cols.turn[0]).toBe(-1); // session.created: outside a run
    const tools = records.flatMap((r, i) =>
      cols.tool[i]! >= 0 ? [`${r.type}:${tables.tools[cols.tool[i]!]}`] : [],
    );
    expect(new Set(tools)).toEqual(
      new Set(['permission.decided:echo', 'tool.started:echo', 'tool.finished:echo']),
    );
  });

  it('ships only what is new: a chunk from record i holds records i.. and the table entries they added', async () => {
    const { records } = await interestingSession();
    const chart = chartOf();
    const whole = indexRecords(records, chart).chunk();
    const index = indexRecords(records.slice(0, 40), chart);
    for (const r of records.slice(40)) index.push(r);
    const tail = index.chunk(40);
    expect(tail.first).toBe(40);
    expect(tail.count).toBe(records.length - 40);
    expect(tail.lines).toEqual(whole.lines.slice(40));
    expect(tail.cols.usage).toEqual(whole.cols.usage.slice(40));
    const head = indexRecords(records.slice(0, 40), chart).chunk();
    expect([...head.tables.usages, ...tail.tables.usages]).toEqual(whole.tables.usages);
    expect([...head.messages, ...tail.messages]).toEqual(whole.messages);
    expect([...head.tables.segOps, ...tail.tables.segOps]).toEqual(whole.tables.segOps);
    expect(tail.meta.records).toBe(records.length);
  });

  it('reads a child session’s parent from session.created (absent on other sessions)', async () => {
    const { records } = await interestingSession();
    const parent = { session: 's_parent', run: 'r_1', toolUseId: 'tu_task', agent: 'explorer' };
    const child = records.map((r) =>
      r.type === 'session.created' ? ({ ...r, data: { ...r.data, parent } } as LogRecord) : r,
    );
    expect(indexRecords(child, chartOf()).meta().parent).toEqual(parent);
    expect(indexRecords(records, chartOf()).meta().parent).toBeNull();
  });
});
