import { TERMINAL_STATUS } from '../machines/reasons.ts';
import { type DiagramViewName, diagramEdges, edgeIds } from './diagramView.ts';
import type { Chart } from './edgeCatalog.ts';
import { countOf, type DiagramOptions, safeCaption, visitedStates } from './labels.ts';

/**
 * A DOT double-quoted string: quote escaped, backslash doubled (so a name never ends in an
 * escape of the closing quote, and a label shows it literally), newlines as DOT's own `\n`.
 * Ids get the same treatment as labels, so every mention of a state still matches.
 */
function q(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\r?\n/g, '\\n')}"`;
}

const TAKEN = '#d97706';
const UNTAKEN = '#9ca3af';

/**
 * The chart as Graphviz DOT, one edge per arrow of the view (see diagramView.ts), labelled
 * with its reasons; final states drawn with a double border. The overview runs left to right
 * with terminal arrows dashed; the full view top to bottom, one edge per catalog edge. With a
 * session's counts, taken edges are bold and coloured and carry `×N`, the rest fade to grey.
 */
export function toDot(chart: Chart, options: DiagramOptions & { view?: DiagramViewName } = {}): string {
  const { counts } = options;
  const view = options.view ?? 'overview';
  const visited = visitedStates(chart, counts);
  const lines: string[] = [`digraph ${q(chart.id)} {`];
  // Courier: a font Graphviz has metrics for (its estimate for `monospace` is narrower than any
  // browser's, which made labels overlap once drawn). Tight ranks keep the overview ≤ 1 600 px.
  const layout = view === 'overview' ? 'rankdir=LR, ranksep=0.3, nodesep=0.3' : 'rankdir=TB';
  lines.push(
    `  graph [${layout}, fontname="Courier", labelloc=t, label=${q(safeCaption(options.caption ?? chart.id))}];`,
  );
  lines.push('  node [shape=box, style="rounded", fontname="Courier"];');
  lines.push('  edge [fontname="Courier", fontsize=10];');
  lines.push('  "__start" [shape=point, width=0.15, label=""];');
  lines.push(`  "__start" -> ${q(chart.initial)};`);
  for (const s of chart.states) {
    const attrs = [`label=${q(s.id)}`];
    if (s.final) attrs.push('peripheries=2');
    if (visited.has(s.id)) attrs.push(`penwidth=2.5, color=${q(TAKEN)}`);
    lines.push(`  ${q(s.id)} [${attrs.join(', ')}];`);
  }
  for (const d of diagramEdges(chart, view, counts)) {
    const n = d.edges.reduce((sum, i) => sum + countOf(chart.edges[i]!, counts), 0);
    const attrs = [
      `label=${q(d.lines.map((l) => l.text).join('\n'))}`,
      `tooltip=${q(edgeIds(chart, d).join('\n'))}`,
    ];
    if (n > 0) attrs.push(`penwidth=2.5, color=${q(TAKEN)}, fontcolor=${q(TAKEN)}`);
    else if (counts) attrs.push(`color=${q(UNTAKEN)}, fontcolor=${q(UNTAKEN)}`);
    // A terminal arrow is a side exit: it must not push its final state a column further right
    // (the manual-compaction exits from compacting took the overview past 1 600 px).
    if (view === 'overview' && d.terminal) attrs.push('style=dashed, constraint=false');
    lines.push(`  ${q(d.from)} -> ${q(d.to)} [${attrs.join(', ')}];`);
  }
  if (view === 'overview') {
    for (const [state, beside] of parkedBeside(chart))
      lines.push(`  { rank=same; ${q(beside)}; ${q(state)}; }`);
  }
  lines.push('}');
  return `${lines.join('\n')}\n`;
}

/**
 * Final states a run pauses in rather than ends (awaitingApproval: every way in has a `paused`
 * reason), each with the one state that parks there: the overview draws them side by side, so
 * the parked state takes no column of its own (it kept the picture over 1 600 px).
 */
function parkedBeside(chart: Chart): [string, string][] {
  const status = TERMINAL_STATUS as Record<string, string>;
  return chart.states.flatMap((s) => {
    const into = chart.edges.filter((e) => e.to === s.id);
    const from = new Set(into.map((e) => e.from));
    const paused = into.length > 0 && into.every((e) => e.reason !== null && status[e.reason] === 'paused');
    return s.final && paused && from.size === 1 ? [[s.id, [...from][0]!] as [string, string]] : [];
  });
}
