import type { Chart } from './edgeCatalog.ts';
import { countOf, type DiagramOptions, edgeLabel, safeCaption, visitedStates } from './labels.ts';

/** Mermaid ids are bare words; a nested state `a.b` becomes `a_b` with its name as the label. */
function mermaidId(id: string): string {
  return id.replace(/\W/g, '_');
}

/** Transition labels run to the end of the line: keep them on it and free of Mermaid syntax. */
function safeText(text: string): string {
  return text.replace(/[\r\n;:#]+/g, ' ').trim();
}

/**
 * The chart as Mermaid `stateDiagram-v2`. Mermaid's state diagrams cannot style one edge (no
 * `linkStyle` there, unlike flowcharts), so a session shows on the edges as `×N` in the label
 * and on the states it passed through as the `visited` class.
 */
export function toMermaid(chart: Chart, options: DiagramOptions = {}): string {
  const { counts } = options;
  const lines: string[] = ['stateDiagram-v2'];
  lines.push(`  %% ${safeCaption(options.caption ?? chart.id)}: edges are labelled with transition reasons`);
  for (const s of chart.states) {
    const id = mermaidId(s.id);
    if (id !== s.id) lines.push(`  state "${safeText(s.id)}" as ${id}`);
  }
  lines.push(`  [*] --> ${mermaidId(chart.initial)}`);
  for (const e of chart.edges) {
    const n = countOf(e, counts);
    const label = safeText(edgeLabel(e, chart)) + (n > 0 ? ` ×${n}` : '');
    lines.push(`  ${mermaidId(e.from)} --> ${mermaidId(e.to)} : ${label}`);
  }
  const finals = chart.states.filter((s) => s.final).map((s) => mermaidId(s.id));
  for (const f of finals) lines.push(`  ${f} --> [*]`);
  lines.push('  classDef final stroke-width:3px,stroke:#8b949e');
  if (finals.length) lines.push(`  class ${finals.join(',')} final`);
  const visited = [...visitedStates(chart, counts)].map(mermaidId);
  if (counts) lines.push('  classDef visited font-weight:bold,stroke-width:3px,stroke:#d97706,fill:#fff4e0');
  if (visited.length) lines.push(`  class ${visited.join(',')} visited`);
  return `${lines.join('\n')}\n`;
}
