import { CONTINUATION_REASONS, TERMINAL_STATUS } from '../machines/reasons.ts';
import { type ChartLayout, FONT, LINE_H } from './chartLayout.ts';
import type { Chart } from './edgeCatalog.ts';
import { escapeXml } from './escape.ts';

/** Colour family of a reason: the run goes on, ends well, ends badly, or steps within a turn. */
export function reasonClass(reason: string | null): string {
  if (reason === null) return 'r-none';
  if ((CONTINUATION_REASONS as readonly string[]).includes(reason)) return 'r-cont';
  const status = (TERMINAL_STATUS as Record<string, string>)[reason];
  if (status === 'completed') return 'r-ok';
  if (status === 'aborted') return 'r-abort';
  if (status) return 'r-fail';
  return 'r-step';
}

/** Colour of a label line: its reason's, or — for a folded line of several reasons — the first one's. */
function lineClass(chart: Chart, edges: readonly number[]): string {
  return reasonClass(chart.edges[edges[0] ?? -1]?.reason ?? null);
}

/**
 * The chart as inline SVG, unmarked: the page script marks what a session took up to the
 * selected record. Every piece carries data attributes (`data-state`, `data-edges` — indices
 * into the catalog) so the script can mark and filter by it. Text here comes from the machine
 * definition, not the log, and is escaped all the same.
 */
export function chartSvg(chart: Chart, layout: ChartLayout): string {
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" class="chart" data-view="${layout.view}" ` +
      `viewBox="${layout.left} ${layout.top} ${layout.width} ${layout.height}" width="${layout.width}" height="${layout.height}" ` +
      `preserveAspectRatio="xMidYMin meet" role="img" aria-label="${escapeXml(`${chart.id} statechart (${layout.view})`)}"` +
      `${layout.view === 'overview' ? '' : ' hidden'}>`,
  );
  out.push('<defs>');
  for (const kind of ['base', 'taken', 'last']) {
    out.push(
      `<marker id="arrow-${kind}-${layout.view}" class="arrow-${kind}" viewBox="0 0 10 10" refX="9" refY="5" ` +
        'markerUnits="userSpaceOnUse" markerWidth="11" markerHeight="11" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z"/></marker>',
    );
  }
  out.push('</defs>');
  // Markers are per view (two SVGs share the page); the CSS names them through these vars.
  out.push('<g class="edges">');
  for (const s of layout.edges) {
    const ids = s.edges.map((i) => chart.edges[i]!.id).join('\n');
    out.push(
      `<g class="edge${s.toRail ? ' to-rail' : ''}${s.terminal ? ' terminal' : ''}" data-edges="${s.edges.join(' ')}" ` +
        `data-from="${escapeXml(s.from)}" data-to="${escapeXml(s.to)}"><title>${escapeXml(ids)}</title>` +
        `<path class="hit" d="${s.d}"/><path class="line" d="${s.d}"/></g>`,
    );
  }
  out.push('</g>');

  out.push('<g class="states">');
  const { start } = layout;
  out.push(`<circle class="start" cx="${start.x}" cy="${start.y}" r="6"/>`);
  const initial = layout.nodes.find((n) => n.initial);
  if (initial) {
    out.push(
      `<path class="start-line" d="M${start.x + 6},${start.y} L${initial.x - initial.w / 2 - 2},${initial.y}"/>`,
    );
  }
  for (const n of layout.nodes) {
    const x = n.x - n.w / 2;
    const y = n.y - n.h / 2;
    const cls = `state${n.final ? ' final' : ''}${n.rail ? ' rail' : ''}`;
    const textX = n.rail ? x + 16 : n.x;
    const anchor = n.rail ? 'start' : 'middle';
    out.push(
      `<g class="${cls}" data-state="${escapeXml(n.state)}"><title>${escapeXml(`${n.state}: click to filter the timeline`)}</title>` +
        `<rect x="${x}" y="${y}" width="${n.w}" height="${n.h}" rx="${n.rail ? 6 : 10}"/>` +
        (n.final
          ? `<rect class="inner" x="${x + 4}" y="${y + 4}" width="${n.w - 8}" height="${n.h - 8}" rx="${n.rail ? 4 : 7}"/>`
          : '') +
        `<text x="${textX}" y="${n.y + FONT.state * 0.35}" text-anchor="${anchor}">${escapeXml(n.state)}</text></g>`,
    );
  }
  out.push('</g>');

  out.push('<g class="labels">');
  for (const s of layout.edges) {
    const { x, y, w, lines } = s.label;
    out.push(`<g class="label" data-edges="${s.edges.join(' ')}">`);
    const shown = (l: { text: string }) => !(s.toRail && l.text === s.to);
    if (lines.some(shown)) {
      const bx = s.toRail ? x - 3 : x;
      out.push(
        `<rect class="label-bg" x="${bx.toFixed(1)}" y="${(y - 2).toFixed(1)}" width="${w.toFixed(1)}" height="${lines.length * LINE_H + 4}" rx="3"/>`,
      );
    }
    lines.forEach((l, j) => {
      const tx = s.toRail ? x : x + 4;
      const ids = l.edges.map((i) => chart.edges[i]!.id).join('\n');
      // On a rail the rail's own name says it (`aborted` into aborted): only the count shows.
      const text = shown(l) ? l.text : '';
      out.push(
        `<text class="edge-label ${lineClass(chart, l.edges)}" data-edges="${l.edges.join(' ')}" ` +
          `x="${tx.toFixed(1)}" y="${(y + (j + 1) * LINE_H - 3).toFixed(1)}"><title>${escapeXml(ids)}</title>` +
          `${escapeXml(text)}<tspan class="count"></tspan></text>`,
      );
    });
    out.push('</g>');
  }
  out.push('</g></svg>');
  return out.join('\n');
}
