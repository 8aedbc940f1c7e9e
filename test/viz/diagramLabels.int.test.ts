import { createRequire } from 'node:module';
import path from 'node:path';
import { instance as vizInstance } from '@viz-js/viz';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diagramEdges } from '../../src/viz/diagramView.ts';
import { toDot } from '../../src/viz/dot.ts';
import { chartOf } from '../../src/viz/edgeCatalog.ts';
import { toMermaid } from '../../src/viz/mermaid.ts';
import { edgeCounts } from '../../src/viz/sessionView.ts';
import { chromiumMissing, launchChromium } from '../support/chromium.ts';
import { interestingSession } from './vizSessions.ts';

const MAX_WIDTH = 1600;
const MERMAID_JS = path.join(
  path.dirname(createRequire(import.meta.url).resolve('mermaid/package.json')),
  'dist/mermaid.min.js',
);

interface Box {
  text: string;
  x: number;
  y: number;
  w: number;
  h: number;
}
interface Drawing {
  /** Natural width of the picture in CSS px (Mermaid: its viewBox; Graphviz: its pt width). */
  width: number;
  labels: Box[];
  nodes: Box[];
}

/**
 * Boxes of every edge label (all its lines together) and every state, as the browser drew them.
 * Runs in the page as a string: this project type-checks without the DOM lib.
 */
const MEASURE = (labelSel: string, nodeSel: string, nodeShape: string) => `(() => {
  const box = (els, text) => {
    const bs = els.map((e) => e.getBoundingClientRect()).filter((b) => b.width > 0);
    const x = Math.min(...bs.map((b) => b.x)), y = Math.min(...bs.map((b) => b.y));
    return { text, x, y, w: Math.max(...bs.map((b) => b.right)) - x, h: Math.max(...bs.map((b) => b.bottom)) - y };
  };
  const labels = [...document.querySelectorAll(${JSON.stringify(labelSel)})]
    .map((g) => box([...g.querySelectorAll('text, span, p')], g.textContent.trim()))
    .filter((b) => b.text && b.w > 0);
  const nodes = [...document.querySelectorAll(${JSON.stringify(nodeSel)})]
    .map((g) => box([...g.querySelectorAll(${JSON.stringify(nodeShape)})], g.textContent.trim().split(/\\s+/)[0]))
    .filter((b) => b.text && b.w > 0);
  return { labels, nodes };
})()`;

const overlap = (a: Box, b: Box) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

/** Every pair of label boxes that overlap, and every label that covers a state. */
function collisions(d: Drawing): string[] {
  const out: string[] = [];
  d.labels.forEach((a, i) => {
    for (const b of d.labels.slice(i + 1)) if (overlap(a, b)) out.push(`"${a.text}" overlaps "${b.text}"`);
    for (const n of d.nodes) if (overlap(a, n)) out.push(`"${a.text}" covers state ${n.text}`);
  });
  return out;
}

describe.skipIf(chromiumMissing)('diagram labels, as Mermaid and Graphviz lay them out in Chromium', () => {
  let browser: Browser;
  let page: Page;
  let viz: Awaited<ReturnType<typeof vizInstance>>;
  const chart = chartOf();
  let counts: Map<string, number>;

  beforeAll(async () => {
    counts = edgeCounts((await interestingSession()).records);
    viz = await vizInstance();
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1800, height: 1200 } });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  async function mermaidDrawing(text: string): Promise<Drawing> {
    await page.setContent('<!doctype html><html><body><div id="out"></div></body></html>');
    await page.addScriptTag({ path: MERMAID_JS });
    const viewBox = await page.evaluate(`(async () => {
      mermaid.initialize({ startOnLoad: false });
      const { svg } = await mermaid.render('d', ${JSON.stringify(text)});
      document.getElementById('out').innerHTML = svg;
      return document.querySelector('#out svg').getAttribute('viewBox');
    })()`);
    const width = Number(String(viewBox).split(/\s+/)[2]);
    const boxes = (await page.evaluate(MEASURE('#out g.edgeLabel', '#out g.node', 'rect, path'))) as Drawing;
    return { width, labels: boxes.labels, nodes: boxes.nodes };
  }

  async function graphvizDrawing(text: string): Promise<Drawing> {
    const svg = viz.renderString(text, { format: 'svg' });
    await page.setContent(`<!doctype html><html><body style="margin:0">${svg}</body></html>`);
    const pt = Number(/<svg width="([\d.]+)pt"/.exec(svg)?.[1]);
    const boxes = (await page.evaluate(MEASURE('g.edge', 'g.node', 'path, polygon'))) as Drawing;
    // Graphviz writes points; a browser draws 4/3 px per pt.
    return { width: (pt * 4) / 3, labels: boxes.labels, nodes: boxes.nodes };
  }

  const cases: [string, () => { counts?: Map<string, number>; caption?: string }][] = [
    ['the chart', () => ({})],
    ['a session marked on it', () => ({ counts, caption: 'session s_example' })],
  ];

  for (const [name, opts] of cases) {
    it(`Mermaid overview of ${name}: every arrow labelled, no label on another or on a state, ≤ ${MAX_WIDTH} px`, async () => {
      const o = opts();
      const d = await mermaidDrawing(toMermaid(chart, o));
      expect(d.labels).toHaveLength(diagramEdges(chart, 'overview', o.counts).length);
      expect(d.nodes.map((n) => n.text).sort()).toEqual(chart.states.map((s) => s.id).sort());
      expect(collisions(d)).toEqual([]);
      expect(d.width).toBeLessThanOrEqual(MAX_WIDTH);
    });

    it(`Graphviz overview of ${name}: every arrow labelled, no label on another or on a state, ≤ ${MAX_WIDTH} px`, async () => {
      const o = opts();
      const d = await graphvizDrawing(toDot(chart, o));
      expect(d.labels).toHaveLength(diagramEdges(chart, 'overview', o.counts).length);
      expect(
        d.nodes
          .map((n) => n.text)
          .filter((t) => t !== '__start')
          .sort(),
      ).toEqual(chart.states.map((s) => s.id).sort());
      expect(collisions(d)).toEqual([]);
      expect(d.width).toBeLessThanOrEqual(MAX_WIDTH);
    });
  }

  it('the check sees collisions: the full view (every edge) is what the overview fixes', async () => {
    const d = await mermaidDrawing(toMermaid(chart, { view: 'full' }));
    expect(d.labels).toHaveLength(chart.edges.length);
    expect(collisions(d).length).toBeGreaterThan(0);
    expect(d.width).toBeGreaterThan(MAX_WIDTH);
  });
});
