import type { Chart, ChartEdge } from './edgeCatalog.ts';
import { countOf, type EdgeCounts, edgeLabel } from './labels.ts';

/**
 * What a diagram draws. `full`: one arrow per catalog edge. `overview`: the loop and its
 * continuations, one arrow per pair of states (its reasons stacked as lines), and each state's
 * ways into a terminal folded into one arrow per terminal — 40 catalog edges become ~25 arrows
 * that Mermaid and Graphviz can lay out without labels colliding.
 */
export type DiagramViewName = 'overview' | 'full';
export const DIAGRAM_VIEWS: readonly DiagramViewName[] = ['overview', 'full'];

export interface DiagramLine {
  text: string;
  /** Indices into chart.edges of the catalog edges this line names. */
  edges: number[];
}

export interface DiagramEdge {
  from: string;
  to: string;
  /** Indices into chart.edges of the catalog edges this arrow stands for. */
  edges: number[];
  /** Label lines, top to bottom (a session's counts already in them as ` ×N`), each with its edges. */
  lines: DiagramLine[];
  /** The arrow leads into a final state (in the overview: every way there, folded into one). */
  terminal: boolean;
}

/**
 * A folded arrow names its reason when it has one; past that it says how many there are (with a
 * session, the ones taken are named). Two names stacked on dispatchingTools → failed collided
 * with the labels around it once the chart grew the approval edges.
 */
const FOLD_LIST_MAX = 1;

const times = (n: number) => (n > 0 ? ` ×${n}` : '');

const finalStates = (chart: Chart) => new Set(chart.states.filter((s) => s.final).map((s) => s.id));

function fullEdges(chart: Chart, counts: EdgeCounts | undefined): DiagramEdge[] {
  const finals = finalStates(chart);
  return chart.edges.map((e, i) => ({
    from: e.from,
    to: e.to,
    edges: [i],
    lines: [{ text: edgeLabel(e, chart) + times(countOf(e, counts)), edges: [i] }],
    terminal: finals.has(e.to),
  }));
}

type Group = readonly { e: ChartEdge; i: number }[];

/** Reasons of a group of edges, in catalog order, each once, with the edges that carry it. */
function byReason(group: Group): Map<string, Group> {
  const out = new Map<string, { e: ChartEdge; i: number }[]>();
  for (const g of group) {
    const r = g.e.reason ?? '(no reason)';
    out.set(r, [...(out.get(r) ?? []), g]);
  }
  return out;
}

const line = (text: string, group: Group): DiagramLine => ({ text, edges: group.map((g) => g.i) });

function foldedLines(reasons: Map<string, Group>, counts: EdgeCounts | undefined): DiagramLine[] {
  const sum = (es: Group) => es.reduce((n, g) => n + countOf(g.e, counts), 0);
  if (reasons.size <= FOLD_LIST_MAX) return [...reasons].map(([r, es]) => line(r + times(sum(es)), es));
  // With a session, the reasons it ended on are named; the rest stay a number.
  const taken = [...reasons].filter(([, es]) => sum(es) > 0);
  const rest = [...reasons].filter(([, es]) => sum(es) === 0);
  const lines = taken.map(([r, es]) => line(r + times(sum(es)), es));
  if (rest.length > 0)
    lines.push(
      line(
        `${rest.length} ${taken.length ? 'other reasons' : 'reasons'}`,
        rest.flatMap(([, es]) => es),
      ),
    );
  return lines;
}

function overviewEdges(chart: Chart, counts: EdgeCounts | undefined): DiagramEdge[] {
  const finals = finalStates(chart);
  const pairs = new Map<string, { e: ChartEdge; i: number }[]>();
  chart.edges.forEach((e, i) => {
    const k = `${e.from}\n${e.to}`;
    pairs.set(k, [...(pairs.get(k) ?? []), { e, i }]);
  });
  const out: DiagramEdge[] = [];
  for (const group of pairs.values()) {
    const { from, to } = group[0]!.e;
    const reasons = byReason(group);
    const terminal = finals.has(to);
    const lines = terminal
      ? foldedLines(reasons, counts)
      : // Twin edges (same reason, told apart by a guard) are one line here: the guard is detail.
        [...reasons].map(([r, es]) => line(r + times(es.reduce((n, g) => n + countOf(g.e, counts), 0)), es));
    out.push({ from, to, edges: group.map((g) => g.i), lines, terminal });
  }
  return out;
}

export function diagramEdges(chart: Chart, view: DiagramViewName, counts?: EdgeCounts): DiagramEdge[] {
  return view === 'full' ? fullEdges(chart, counts) : overviewEdges(chart, counts);
}

/** The catalog edges behind an arrow, one per line, for tooltips and comments. */
export function edgeIds(chart: Chart, d: DiagramEdge): string[] {
  return d.edges.map((i) => chart.edges[i]!.id);
}
