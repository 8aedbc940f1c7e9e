import { CONTINUATION_REASONS, TERMINAL_STATUS } from '../machines/reasons.ts';
import { type ChartLayout, FONT, LINE_H, layoutChart } from './chartLayout.ts';
import type { Chart } from './edgeCatalog.ts';
import { escapeXml } from './escape.ts';
import type { EdgeCounts } from './labels.ts';

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

/**
 * The chart as inline SVG. Every piece carries data attributes (`data-state`, `data-edges`,
 * `data-edge`) so the page script can re-mark it for any step; with `counts` it is already
 * marked for the whole session, so it reads right before any script runs. Text here comes from
 * the machine definition, not the log, and is escaped all the same.
 */
export function chartSvg(
  chart: Chart,
  counts?: EdgeCounts,
  layout: ChartLayout = layoutChart(chart),
): string {
  const count = (i: number) => counts?.get(chart.edges[i]!.key) ?? 0;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 ${layout.width} ${layout.height}" ` +
      `role="img" aria-label="${escapeXml(`${chart.id} statechart`)}">`,
  );
  out.push('<defs>');
  for (const kind of ['base', 'taken', 'last']) {
    out.push(
      `<marker id="arrow-${kind}" class="arrow-${kind}" viewBox="0 0 10 10" refX="9" refY="5" ` +
        'markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z"/></marker>',
    );
  }
  out.push('</defs>');

  out.push('<g class="edges">');
  for (const s of layout.edges) {
    const n = s.edges.reduce((sum, i) => sum + count(i), 0);
    const ids = s.edges.map((i) => chart.edges[i]!.id).join('\n');
    out.push(
      `<g class="edge${s.toRail ? ' to-rail' : ''}${n > 0 ? ' taken' : ''}" data-edges="${s.edges.join(' ')}" ` +
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
      `<g class="${cls}" data-state="${escapeXml(n.state)}"><rect x="${x}" y="${y}" width="${n.w}" height="${n.h}" rx="${n.rail ? 6 : 10}"/>` +
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
    if (!s.toRail) {
      out.push(
        `<rect class="label-bg" x="${x.toFixed(1)}" y="${(y - 2).toFixed(1)}" width="${w.toFixed(1)}" height="${lines.length * LINE_H + 4}" rx="3"/>`,
      );
    }
    lines.forEach((l, j) => {
      const n = count(l.edge);
      const edge = chart.edges[l.edge]!;
      const tx = s.toRail ? x : x + 4;
      out.push(
        `<text class="edge-label ${reasonClass(edge.reason)}${n > 0 ? ' taken' : ''}" data-edge="${l.edge}" ` +
          `x="${tx.toFixed(1)}" y="${(y + (j + 1) * LINE_H - 3).toFixed(1)}"><title>${escapeXml(edge.id)}</title>` +
          `${s.toRail && edge.reason === s.to ? '' : escapeXml(l.text)}<tspan class="count">${n > 0 ? ` ×${n}` : ''}</tspan></text>`,
      );
    });
    out.push('</g>');
  }
  out.push('</g></svg>');
  return out.join('\n');
}
