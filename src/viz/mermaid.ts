import { type DiagramViewName, diagramEdges, edgeIds } from './diagramView.ts';
import type { Chart } from './edgeCatalog.ts';
import { type DiagramOptions, safeCaption, visitedStates } from './labels.ts';

/** Mermaid ids are bare words; a nested state `a.b` becomes `a_b` with its name as the label. */
function mermaidId(id: string): string {
  return id.replace(/\W/g, '_');
}

/** Transition labels run to the end of the line: keep them on it and free of Mermaid syntax. */
function safeText(text: string): string {
  return text.replace(/[\r\n;:#<>]+/g, ' ').trim();
}

/**
 * The chart as Mermaid `stateDiagram-v2`. Mermaid's state diagrams cannot style one edge (no
 * `linkStyle` there, unlike flowcharts), so a session shows on the edges as `×N` in the label
 * and on the states it passed through as the `visited` class.
 *
 * The overview (default) is laid out left to right, one arrow per pair of states with its
 * reasons as stacked lines (`<br>`), terminal arrows folded, and no `[*]` end markers (they
 * drew three more long arrows across the picture; final states have their own class). The
 * full view is one arrow per catalog edge, top to bottom, as the chart is defined.
 */
export function toMermaid(chart: Chart, options: DiagramOptions & { view?: DiagramViewName } = {}): string {
  const { counts } = options;
  const view = options.view ?? 'overview';
  const lines: string[] = ['stateDiagram-v2'];
  if (view === 'overview') lines.push('  direction LR');
  lines.push(`  %% ${safeCaption(options.caption ?? chart.id)}: edges are labelled with transition reasons`);
  for (const s of chart.states) {
    const id = mermaidId(s.id);
    if (id !== s.id) lines.push(`  state "${safeText(s.id)}" as ${id}`);
  }
  lines.push(`  [*] --> ${mermaidId(chart.initial)}`);
  for (const d of diagramEdges(chart, view, counts)) {
    if (view === 'overview' && d.terminal && d.edges.length > d.lines.length) {
      // The folded reasons, for whoever reads the source (GitHub shows only the picture).
      lines.push(`  %% ${safeText(`${d.from} to ${d.to}`)} folds ${edgeIds(chart, d).length} edges`);
      for (const id of edgeIds(chart, d)) lines.push(`  %%   ${id.replace(/[\r\n]+/g, ' ')}`);
    }
    lines.push(
      `  ${mermaidId(d.from)} --> ${mermaidId(d.to)} : ${d.lines.map((l) => safeText(l.text)).join('<br>')}`,
    );
  }
  const finals = chart.states.filter((s) => s.final).map((s) => mermaidId(s.id));
  if (view === 'full') for (const f of finals) lines.push(`  ${f} --> [*]`);
  lines.push('  classDef final stroke-width:3px,stroke:#8b949e');
  if (finals.length) lines.push(`  class ${finals.join(',')} final`);
  const visited = [...visitedStates(chart, counts)].map(mermaidId);
  if (counts)
    lines.push(
      // Not bold: bold names widened the marked overview past 1 600 px; colour and border say it.
      '  classDef visited stroke-width:3px,stroke:#d97706,fill:#fff4e0',
    );
  if (visited.length) lines.push(`  class ${visited.join(',')} visited`);
  return `${lines.join('\n')}\n`;
}
