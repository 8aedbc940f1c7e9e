import { createRequire } from 'node:module';
import parseDot from 'dotparser';
import { beforeAll, describe, expect, it } from 'vitest';
import { setup } from 'xstate';
import { diagramEdges } from '../../src/viz/diagramView.ts';
import { toDot } from '../../src/viz/dot.ts';
import { chartOf, transitionKey } from '../../src/viz/edgeCatalog.ts';
import { toMermaid } from '../../src/viz/mermaid.ts';
import { edgeCounts } from '../../src/viz/sessionView.ts';
import { interestingSession } from './vizSessions.ts';

/** Mermaid's own parser. It sanitises labels with DOMPurify, which needs a window: jsdom's. */
type Mermaid = typeof import('mermaid')['default'];
let mermaid: Mermaid;
beforeAll(async () => {
  // jsdom ships no types and this is all we use of it.
  const { JSDOM } = createRequire(import.meta.url)('jsdom') as {
    JSDOM: new (html: string) => { window: { document: unknown } };
  };
  const dom = new JSDOM('<!doctype html><html><body></body></html>');
  // DOMPurify decides at import time whether it has a DOM, so the globals come first.
  Object.assign(globalThis, { window: dom.window, document: dom.window.document });
  mermaid = (await import('mermaid')).default;
});

interface StateDb {
  getStates(): Map<string, { id: string; classes: string[] }>;
  getRelations(): { id1: string; id2: string; relationTitle: string }[];
}

/** Parses with mermaid and returns its state-diagram model (throws on a syntax error). */
async function mermaidModel(text: string): Promise<StateDb> {
  await mermaid.parse(text);
  const diagram = await mermaid.mermaidAPI.getDiagramFromText(text);
  return diagram.db as unknown as StateDb;
}

const chart = chartOf();

describe('Mermaid', () => {
  it('renders the full chart: every edge, labelled with its reason, final states marked', async () => {
    const text = toMermaid(chart, { view: 'full' });
    await expect(text).toMatchFileSnapshot('./__snapshots__/queryLoop.mmd');
    const db = await mermaidModel(text);
    const relations = db.getRelations().filter((r) => !r.id1.includes('_start') && !r.id2.includes('_end'));
    expect(relations).toHaveLength(chart.edges.length);
    expect(relations).toContainEqual({ id1: 'requesting', id2: 'failed', relationTitle: 'refused' });
    expect(relations).toContainEqual({
      id1: 'requesting',
      id2: 'compacting',
      relationTitle: 'compact_retry [promptTooLongCanCompact]',
    });
    expect(db.getStates().get('completed')?.classes).toContain('final');
  });

  it('marks a session: ×N on taken edges, visited states classed', async () => {
    const { records } = await interestingSession();
    const text = toMermaid(chart, { counts: edgeCounts(records), caption: 's1', view: 'full' });
    await expect(text).toMatchFileSnapshot('./__snapshots__/session.mmd');
    const db = await mermaidModel(text);
    const titles = db.getRelations().map((r) => r.relationTitle);
    expect(titles).toContain('query_built ×7');
    expect(titles).toContain('transport_retry ×1');
    expect(titles).toContain('refused');
    expect(db.getStates().get('recovering')?.classes).toContain('visited');
    expect(db.getStates().get('failed')?.classes).not.toContain('visited');
  });

  it('turns odd state names into Mermaid ids', async () => {
    const nested = setup({}).createMachine({
      id: 'nested',
      initial: 'outer',
      states: {
        outer: {
          initial: 'in-ner',
          states: { 'in-ner': { on: { GO: { target: '#nested.done', meta: { reason: 'completed' } } } } },
        },
        done: { type: 'final' },
      },
    });
    const db = await mermaidModel(toMermaid(chartOf(nested), { view: 'full' }));
    expect(db.getRelations()).toContainEqual({
      id1: 'outer_in_ner',
      id2: 'done',
      relationTitle: 'completed',
    });
  });

  it('fails to parse broken text (so the checks above can fail)', async () => {
    await expect(mermaid.parse('stateDiagram-v2\n  a -->> : b ::: ]]')).rejects.toThrow(/Parse error/);
  });
});

describe('DOT', () => {
  type Attrs = Record<string, unknown>;
  const attrsOf = (list: { id: string | number; eq: unknown }[]): Attrs =>
    Object.fromEntries(list.map((a) => [String(a.id), a.eq]));

  function edgesOf(text: string) {
    const [graph] = parseDot(text);
    const out: { from: string; to: string; attrs: Attrs }[] = [];
    for (const s of graph!.children) {
      if (s.type !== 'edge_stmt') continue;
      const [a, b] = s.edge_list;
      if (a?.type === 'node_id' && b?.type === 'node_id')
        out.push({ from: String(a.id), to: String(b.id), attrs: attrsOf(s.attr_list) });
    }
    return { graph: graph!, edges: out.filter((e) => e.from !== '__start') };
  }

  it('renders the full chart: parses, every edge labelled, final states doubled', async () => {
    const text = toDot(chart, { view: 'full' });
    await expect(text).toMatchFileSnapshot('./__snapshots__/queryLoop.dot');
    const { graph, edges } = edgesOf(text);
    expect(edges).toHaveLength(chart.edges.length);
    expect(edges.map((e) => e.attrs.label)).toContain('stop_hook_continuation');
    const finals = graph.children.filter(
      (s) =>
        s.type === 'node_stmt' && s.attr_list.some((a) => a.id === 'peripheries' && String(a.eq) === '2'),
    );
    expect(finals.map((s) => (s.type === 'node_stmt' ? s.node_id.id : ''))).toEqual([
      'completed',
      'failed',
      'aborted',
      'awaitingApproval',
    ]);
  });

  it('marks a session: taken edges bold and coloured with ×N, the rest grey', async () => {
    const { records } = await interestingSession();
    const counts = edgeCounts(records);
    const text = toDot(chart, { counts, caption: 's1', view: 'full' });
    await expect(text).toMatchFileSnapshot('./__snapshots__/session.dot');
    const { edges } = edgesOf(text);
    const retry = edges.find((e) => e.attrs.label === 'transport_retry ×1');
    expect(retry).toMatchObject({
      from: 'requesting',
      to: 'recovering',
      attrs: { penwidth: 2.5, color: '#d97706' },
    });
    const refused = edges.find((e) => e.attrs.label === 'refused');
    expect(refused?.attrs.color).toBe('#9ca3af');
    const taken = edges.filter((e) => e.attrs.penwidth === 2.5).length;
    expect(taken).toBe(counts.size);
  });

  it('quotes any state name: a chart with odd names still parses', () => {
    const odd = setup({}).createMachine({
      id: 'odd',
      initial: 'say "hi"',
      states: {
        'say "hi"': { on: { GO: { target: 'a\\\\b', meta: { reason: 'query_built' } } } },
        'a\\b': { type: 'final' },
      },
    });
    const { graph, edges } = edgesOf(toDot(chartOf(odd), { view: 'full' }));
    // DOT keeps backslashes in quoted ids as written; every mention of a state is escaped alike.
    expect(edges).toEqual([
      { from: 'say "hi"', to: 'a\\\\b', attrs: expect.objectContaining({ label: 'query_built' }) },
    ]);
    const nodes = graph.children.flatMap((c) => (c.type === 'node_stmt' ? [String(c.node_id.id)] : []));
    expect(nodes).toEqual(['__start', 'say "hi"', 'a\\\\b']);
    expect(() => parseDot('digraph { a -> }')).toThrow();
  });
});

describe('the overview', () => {
  const arrows = diagramEdges(chart, 'overview');

  it('stands for every catalog edge exactly once, one arrow per pair of states', () => {
    expect(arrows.flatMap((a) => a.edges).sort((a, b) => a - b)).toEqual(chart.edges.map((_, i) => i));
    const pairs = arrows.map((a) => `${a.from}>${a.to}`);
    expect(new Set(pairs).size).toBe(pairs.length);
    expect(arrows.length).toBeLessThan(chart.edges.length);
  });

  it('folds a state’s ways into a terminal into one labelled arrow; continuations stay named', () => {
    const arrow = (from: string, to: string) => arrows.find((a) => a.from === from && a.to === to);
    const toFailed = arrow('requesting', 'failed');
    expect(toFailed?.terminal).toBe(true);
    expect(toFailed?.edges.length).toBeGreaterThan(5);
    expect(toFailed?.lines.map((l) => l.text)).toEqual(['7 reasons']);
    expect(arrow('dispatchingTools', 'failed')?.lines.map((l) => l.text)).toEqual(['3 reasons']);
    expect(arrow('dispatchingTools', 'awaitingApproval')?.lines.map((l) => l.text)).toEqual([
      'awaiting_approval',
    ]);
    expect(arrow('requesting', 'aborted')?.lines.map((l) => l.text)).toEqual(['aborted']);
    expect(arrow('requesting', 'building')?.lines.map((l) => l.text)).toEqual([
      'max_tokens_escalation',
      'max_tokens_recovery',
      'pause_turn_continuation',
      'model_fallback',
    ]);
    // Twin edges (one reason, two guards) are one line.
    expect(arrow('requesting', 'compacting')?.lines.map((l) => l.text)).toEqual(['compact_retry']);
    expect(arrow('requesting', 'compacting')?.edges).toHaveLength(2);
  });

  it('names the reasons a session ended on inside a folded arrow, with counts', async () => {
    const { records } = await interestingSession();
    const counts = edgeCounts(records);
    const marked = diagramEdges(chart, 'overview', counts);
    expect(
      marked.find((a) => a.from === 'building' && a.to === 'requesting')?.lines.map((l) => l.text),
    ).toEqual(['hook_context', 'query_built ×7']);
    const refused = chart.edges.find((e) => e.reason === 'refused')!;
    const withRefusal = new Map([[refused.key, 2]]);
    expect(
      diagramEdges(chart, 'overview', withRefusal)
        .find((a) => a.from === 'requesting' && a.to === 'failed')
        ?.lines.map((l) => l.text),
    ).toEqual(['refused ×2', '6 other reasons']);
  });

  it('Mermaid: left to right, stacked reasons, the folded edges listed in comments; parses', async () => {
    const text = toMermaid(chart);
    await expect(text).toMatchFileSnapshot('./__snapshots__/queryLoop.overview.mmd');
    expect(text).toContain('direction LR');
    expect(text).toContain('%%   requesting --[xstate.done.actor.callModel / responseRefused]--> failed');
    const db = await mermaidModel(text);
    const relations = db.getRelations().filter((r) => !r.id1.includes('_start'));
    expect(relations).toHaveLength(arrows.length);
    expect(relations).toContainEqual({
      id1: 'compacting',
      id2: 'building',
      relationTitle: 'compaction_blocked<br>compacted<br>compaction_failed',
    });
  });

  it('DOT: left to right, terminal arrows dashed, tooltips name the catalog edges; parses', async () => {
    const text = toDot(chart);
    await expect(text).toMatchFileSnapshot('./__snapshots__/queryLoop.overview.dot');
    const [graph] = parseDot(text);
    const edges = graph!.children.filter((c) => c.type === 'edge_stmt');
    expect(edges).toHaveLength(arrows.length + 1);
    expect(text).toContain('rankdir=LR');
    expect(text).toMatch(
      /"requesting" -> "failed" \[label="7 reasons", tooltip="[^"]*responseRefused[^"]*", style=dashed, constraint=false\]/,
    );
  });
});

describe('counts', () => {
  it('are keyed by what a transition record carries', async () => {
    const { records } = await interestingSession();
    const counts = edgeCounts(records);
    const key = transitionKey({
      from: 'dispatchingTools',
      trigger: 'xstate.done.actor.runTools',
      to: 'compacting',
      reason: 'auto_compact',
    });
    expect(counts.get(key)).toBe(1);
  });
});
