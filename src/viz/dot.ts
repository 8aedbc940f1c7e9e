import type { Chart } from './edgeCatalog.ts';
import { countOf, type DiagramOptions, edgeLabel, safeCaption, visitedStates } from './labels.ts';

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
 * The chart as Graphviz DOT: one edge per catalog edge, labelled with its reason; final states
 * drawn with a double border. With a session's counts, taken edges are bold and coloured and
 * carry `×N`, the rest fade to grey so the path stands out.
 */
export function toDot(chart: Chart, options: DiagramOptions = {}): string {
  const { counts } = options;
  const visited = visitedStates(chart, counts);
  const lines: string[] = [`digraph ${q(chart.id)} {`];
  lines.push(
    `  graph [rankdir=TB, fontname="monospace", labelloc=t, label=${q(safeCaption(options.caption ?? chart.id))}];`,
  );
  lines.push('  node [shape=box, style="rounded", fontname="monospace"];');
  lines.push('  edge [fontname="monospace", fontsize=10];');
  lines.push('  "__start" [shape=point, width=0.15, label=""];');
  lines.push(`  "__start" -> ${q(chart.initial)};`);
  for (const s of chart.states) {
    const attrs = [`label=${q(s.id)}`];
    if (s.final) attrs.push('peripheries=2');
    if (visited.has(s.id)) attrs.push(`penwidth=2.5, color=${q(TAKEN)}`);
    lines.push(`  ${q(s.id)} [${attrs.join(', ')}];`);
  }
  for (const e of chart.edges) {
    const n = countOf(e, counts);
    const attrs = [`label=${q(edgeLabel(e, chart) + (n > 0 ? ` ×${n}` : ''))}`, `tooltip=${q(e.id)}`];
    if (n > 0) attrs.push(`penwidth=2.5, color=${q(TAKEN)}, fontcolor=${q(TAKEN)}`);
    else if (counts) attrs.push(`color=${q(UNTAKEN)}, fontcolor=${q(UNTAKEN)}`);
    lines.push(`  ${q(e.from)} -> ${q(e.to)} [${attrs.join(', ')}];`);
  }
  lines.push('}');
  return `${lines.join('\n')}\n`;
}
