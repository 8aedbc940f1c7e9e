import type { Chart, ChartEdge } from './edgeCatalog.ts';

/**
 * A fixed layered layout of the chart for the viewer's SVG, computed here (no layout library
 * in the page: it must work offline and stay small). Each working state owns a column, so the
 * terminal states that half the edges lead to can be drawn as rails along the bottom, reached
 * by straight drops that never cross another state. Rows put the tool loop, the retry loop and
 * the compaction loop apart. States the table does not know get the next columns, so a new
 * state shows up (less prettily) without touching this file.
 */

export const FONT = { state: 15, label: 12 } as const;
/** Monospace advance ≈ 0.6 em (DejaVu Sans Mono, Menlo, Consolas alike). */
const charW = (size: number) => size * 0.6;

const COL_W = 196;
const LEFT = 112;
const ROW_Y = [92, 222, 386] as const;
const NODE_H = 40;
const RAIL_H = 26;
const RAIL_GAP = 32;
export const LINE_H = 15;

/** Where the known states go: column (left to right) and row (0 top). */
const PLACES: Readonly<Record<string, { col: number; row: number }>> = {
  building: { col: 0, row: 1 },
  compacting: { col: 1, row: 2 },
  requesting: { col: 2, row: 1 },
  recovering: { col: 3, row: 0 },
  dispatchingTools: { col: 4, row: 2 },
  awaitingStopHook: { col: 5, row: 1 },
  completed: { col: 6.3, row: 1 },
  // A run parked on an approval: beside the tool batch it parked.
  awaitingApproval: { col: 6.3, row: 2 },
};

/**
 * Bend (px, + = left of travel), label position (0..1 along the edge) and label side (out of
 * the bend, or in) where the defaults read poorly.
 */
const ROUTES: Readonly<Record<string, { bend?: number; t?: number; side?: 'in' | 'out' }>> = {
  // The stop-hook continuations arc over the whole loop back to building.
  'awaitingStopHook>building': { bend: 360, t: 0.2, side: 'in' },
  'building>requesting': { bend: 0, side: 'in' },
  'requesting>building': { bend: 46 },
  'dispatchingTools>building': { bend: -40, t: 0.42, side: 'in' },
  'dispatchingTools>compacting': { bend: -34, t: 0.5 },
  'requesting>awaitingStopHook': { t: 0.55 },
  'requesting>compacting': { bend: -30, t: 0.32, side: 'in' },
  'compacting>building': { side: 'in' },
  // A resumed batch: under the tool loop's return edge, its label near building.
  'building>dispatchingTools': { bend: 70, t: 0.2, side: 'out' },
};

export interface NodeBox {
  state: string;
  x: number;
  y: number;
  w: number;
  h: number;
  final: boolean;
  initial: boolean;
  rail: boolean;
}

export interface LabelLine {
  /** Index of the edge in chart.edges. */
  edge: number;
  text: string;
}

export interface EdgeShape {
  from: string;
  to: string;
  edges: number[];
  d: string;
  /** Top-left of the label block, its width, and its lines (one per catalog edge). */
  label: { x: number; y: number; w: number; lines: LabelLine[] };
  toRail: boolean;
}

export interface ChartLayout {
  width: number;
  height: number;
  nodes: NodeBox[];
  edges: EdgeShape[];
  start: { x: number; y: number };
}

const r1 = (n: number) => Math.round(n * 10) / 10;

/** Rails: final states that three or more states lead to (failed, aborted). */
function railStates(chart: Chart): string[] {
  return chart.states
    .filter((s) => s.final && new Set(chart.edges.filter((e) => e.to === s.id).map((e) => e.from)).size >= 3)
    .map((s) => s.id);
}

/** Short labels: the reason, and which event when two edges of a pair share a reason. */
function lineText(e: ChartEdge, pair: readonly ChartEdge[]): string {
  const reason = e.reason ?? '(no reason)';
  if (pair.filter((o) => o.reason === e.reason).length < 2) return reason;
  return `${reason} (${e.event.startsWith('xstate.error.') ? 'error' : 'done'})`;
}

/** Where a ray from the box centre towards (tx, ty) leaves the box. */
function clip(b: NodeBox, tx: number, ty: number): [number, number] {
  const dx = tx - b.x;
  const dy = ty - b.y;
  const t = Math.min(
    dx === 0 ? Infinity : b.w / 2 / Math.abs(dx),
    dy === 0 ? Infinity : b.h / 2 / Math.abs(dy),
  );
  return [b.x + dx * t, b.y + dy * t];
}

export function layoutChart(chart: Chart): ChartLayout {
  const rails = railStates(chart);
  const nodes: NodeBox[] = [];
  let nextCol = Math.max(...Object.values(PLACES).map((p) => p.col)) + 1;
  for (const s of chart.states) {
    if (rails.includes(s.id)) continue;
    const place = PLACES[s.id] ?? { col: nextCol++, row: 1 };
    const w = Math.max(110, s.id.length * charW(FONT.state) + 28);
    nodes.push({
      state: s.id,
      x: LEFT + place.col * COL_W,
      y: ROW_Y[place.row] ?? ROW_Y[1],
      w,
      h: NODE_H,
      final: s.final,
      initial: s.initial,
      rail: false,
    });
  }
  const width = Math.max(...nodes.map((n) => n.x + n.w / 2)) + 40;
  const railTop = ROW_Y[2] + NODE_H / 2 + 118;
  rails.forEach((id, i) => {
    nodes.push({
      state: id,
      x: width / 2,
      y: railTop + i * (RAIL_H + RAIL_GAP) + RAIL_H / 2,
      w: width - 24,
      h: RAIL_H,
      final: true,
      initial: false,
      rail: true,
    });
  });
  const byState = new Map(nodes.map((n) => [n.state, n] as const));

  const pairs = new Map<string, number[]>();
  chart.edges.forEach((e, i) => {
    const k = `${e.from}>${e.to}`;
    pairs.set(k, [...(pairs.get(k) ?? []), i]);
  });

  const shapes: EdgeShape[] = [];
  for (const [k, idx] of pairs) {
    const pairEdges = idx.map((i) => chart.edges[i]!);
    const { from, to } = pairEdges[0]!;
    const a = byState.get(from);
    const b = byState.get(to);
    if (!a || !b) continue;
    const lines = idx.map((i) => ({ edge: i, text: lineText(chart.edges[i]!, pairEdges) }));
    const lw = Math.max(...lines.map((l) => l.text.length)) * charW(FONT.label) + 44;
    const lh = lines.length * LINE_H;
    if (b.rail) {
      // A straight drop from the bottom of the state to its rail; labels sit just above the rail.
      const dx = rails.indexOf(to) === 0 ? -26 : -62;
      const x = a.x + dx;
      const y0 = a.y + a.h / 2;
      const y1 = b.y - b.h / 2;
      const labelY = rails.indexOf(to) === 0 ? y1 - lh - 4 : y1 - RAIL_GAP + 2;
      shapes.push({
        from,
        to,
        edges: idx,
        d: `M${r1(x)},${r1(y0)} L${r1(x)},${r1(y1)}`,
        label: { x: x + 5, y: labelY, w: lw, lines },
        toRail: true,
      });
      continue;
    }
    if (a === b) {
      // Self-loop (a targetless transition): a small arc over the state.
      const x = a.x;
      const y = a.y - a.h / 2;
      const d = `M${r1(x - 16)},${r1(y)} C${r1(x - 40)},${r1(y - 46)} ${r1(x + 40)},${r1(y - 46)} ${r1(x + 16)},${r1(y)}`;
      shapes.push({
        from,
        to,
        edges: idx,
        d,
        label: { x: x - lw / 2, y: y - 50 - lh, w: lw, lines },
        toRail: false,
      });
      continue;
    }
    const route = ROUTES[k] ?? {};
    const reverse = pairs.has(`${to}>${from}`);
    const bend = route.bend ?? (reverse ? 22 : 0);
    const len = Math.hypot(b.x - a.x, b.y - a.y);
    const nx = -(b.y - a.y) / len;
    const ny = (b.x - a.x) / len;
    const cx = (a.x + b.x) / 2 + nx * bend;
    const cy = (a.y + b.y) / 2 + ny * bend;
    const [sx, sy] = clip(a, cx, cy);
    const [ex, ey] = clip(b, cx, cy);
    const t = route.t ?? 0.5;
    const px = (1 - t) ** 2 * sx + 2 * (1 - t) * t * cx + t ** 2 * ex;
    const py = (1 - t) ** 2 * sy + 2 * (1 - t) * t * cy + t ** 2 * ey;
    // The label goes on the outer side of the bend (or the inner one); a straight edge's above it.
    const flip = route.side === 'in' ? -1 : 1;
    const side = bend !== 0 ? Math.sign(bend) * flip : flip;
    const ox = bend !== 0 ? nx * side : 0;
    const oy = bend !== 0 ? ny * side : -side;
    const lx = px + ox * (lw / 2 + 4) - lw / 2;
    const ly = py + oy * (lh / 2 + 4) - lh / 2;
    const d = `M${r1(sx)},${r1(sy)} Q${r1(cx)},${r1(cy)} ${r1(ex)},${r1(ey)}`;
    shapes.push({ from, to, edges: idx, d, label: { x: lx, y: ly, w: lw, lines }, toRail: false });
  }
  const railBottom = Math.max(...nodes.map((n) => n.y + n.h / 2));
  const initial = byState.get(chart.initial);
  return {
    width: Math.ceil(width),
    height: Math.ceil(railBottom + 14),
    nodes,
    edges: shapes,
    start: initial ? { x: initial.x - initial.w / 2 - 46, y: initial.y } : { x: 10, y: 10 },
  };
}
