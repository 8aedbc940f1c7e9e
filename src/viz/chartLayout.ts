import { type DiagramLine, type DiagramViewName, diagramEdges } from './diagramView.ts';
import type { Chart, ChartEdge } from './edgeCatalog.ts';

/**
 * A fixed layout of the chart for the viewer's SVG, computed here (no layout library in the
 * page: it must work offline and stay small). Terminal states that many states lead to are
 * drawn as rails along the bottom, reached by straight drops that cross no state. Two
 * placements: the overview, compact enough to sit beside the timeline at 1400×900, and the
 * full chart, one column per state. States a placement does not know get places of their own
 * to the right, so a new state shows up (less prettily) without touching this file.
 */

export const FONT = { state: 15, label: 12 } as const;
/** Monospace advance ≈ 0.6 em (DejaVu Sans Mono, Menlo, Consolas alike). */
const charW = (size: number) => size * 0.6;
export const LINE_H = 15;
const NODE_H = 40;
const RAIL_H = 24;

interface Route {
  /** Bend in px (+ = left of travel). */
  bend?: number;
  /** Label position along the edge (0..1). */
  t?: number;
  /** Label out of the bend (default) or inside it. */
  side?: 'in' | 'out';
}

interface Placement {
  places: Readonly<Record<string, { x: number; y: number }>>;
  routes: Readonly<Record<string, Route>>;
  /** Horizontal offset of a state's drop to each rail (by rail order), when the default would cross something. */
  drops: Readonly<Record<string, readonly number[]>>;
  defaultDrops: readonly number[];
  railTop: number;
  railGap: number;
  /** Where states the table does not know go: first x, step, y. */
  extra: { x: number; step: number; y: number };
}

// The tool loop building → requesting → dispatchingTools → building is a triangle with
// compacting below it (so compact_retry and auto_compact reach it without crossing the loop),
// the retry loop hangs off requesting to the right, the stop-hook continuations arc over the top.
const OVERVIEW: Placement = {
  places: {
    building: { x: 100, y: 160 },
    requesting: { x: 430, y: 160 },
    awaitingStopHook: { x: 790, y: 160 },
    completed: { x: 790, y: 270 },
    dispatchingTools: { x: 270, y: 262 },
    recovering: { x: 640, y: 270 },
    compacting: { x: 270, y: 364 },
  },
  routes: {
    'building>requesting': { bend: 0, t: 0.3, side: 'in' },
    'requesting>building': { bend: 56 },
    'awaitingStopHook>building': { bend: 230, t: 0.5, side: 'in' },
    'requesting>awaitingStopHook': { bend: 0 },
    'awaitingStopHook>completed': { bend: 0 },
    'requesting>dispatchingTools': { bend: 0, side: 'in' },
    'dispatchingTools>building': { bend: 0, t: 0.45 },
    'dispatchingTools>compacting': { bend: 0 },
    'compacting>building': { bend: -50, t: 0.62 },
    'requesting>compacting': { bend: -70, t: 0.42 },
    'requesting>recovering': { bend: 16 },
    'recovering>requesting': { bend: 16 },
  },
  drops: {
    building: [-22, -48],
    dispatchingTools: [-110, -136],
    awaitingStopHook: [72, 96],
  },
  defaultDrops: [-22, -48],
  railTop: 410,
  railGap: 14,
  extra: { x: 1060, step: 190, y: 262 },
};

const COL_W = 196;
const ROW_Y = [92, 222, 386] as const;
const col = (c: number, row: 0 | 1 | 2) => ({ x: 112 + c * COL_W, y: ROW_Y[row] });

const FULL: Placement = {
  places: {
    building: col(0, 1),
    compacting: col(1, 2),
    requesting: col(2, 1),
    recovering: col(3, 0),
    dispatchingTools: col(4, 2),
    awaitingStopHook: col(5, 1),
    completed: col(6.3, 1),
  },
  routes: {
    // The stop-hook continuations arc over the whole loop back to building.
    'awaitingStopHook>building': { bend: 360, t: 0.2, side: 'in' },
    'building>requesting': { bend: 0, side: 'in' },
    'requesting>building': { bend: 46 },
    'dispatchingTools>building': { bend: -40, t: 0.42, side: 'in' },
    'dispatchingTools>compacting': { bend: -34, t: 0.5 },
    'requesting>awaitingStopHook': { t: 0.55 },
    'requesting>compacting': { bend: -30, t: 0.32, side: 'in' },
    'compacting>building': { side: 'in' },
  },
  drops: {},
  defaultDrops: [-26, -62],
  railTop: ROW_Y[2] + NODE_H / 2 + 118,
  railGap: 32,
  extra: { x: 112 + 7.3 * COL_W, step: COL_W, y: ROW_Y[1] },
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

export interface EdgeShape {
  from: string;
  to: string;
  /** Indices into chart.edges. */
  edges: number[];
  d: string;
  /** Top-left of the label block, its width, and its lines. */
  label: { x: number; y: number; w: number; lines: DiagramLine[] };
  toRail: boolean;
  terminal: boolean;
}

export interface ChartLayout {
  view: DiagramViewName;
  /** viewBox origin: labels may stick out left of x = 0 or above y = 0. */
  left: number;
  top: number;
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

/** Full view: one line per catalog edge; the event tells apart two edges of a pair sharing a reason. */
function fullLines(chart: Chart): { from: string; to: string; lines: DiagramLine[]; terminal: boolean }[] {
  const finals = new Set(chart.states.filter((s) => s.final).map((s) => s.id));
  const pairs = new Map<string, { e: ChartEdge; i: number }[]>();
  chart.edges.forEach((e, i) => {
    const k = `${e.from}>${e.to}`;
    pairs.set(k, [...(pairs.get(k) ?? []), { e, i }]);
  });
  return [...pairs.values()].map((group) => {
    const { from, to } = group[0]!.e;
    const lines = group.map(({ e, i }) => {
      const reason = e.reason ?? '(no reason)';
      const twin = group.filter((o) => o.e.reason === e.reason).length > 1;
      const text = twin ? `${reason} (${e.event.startsWith('xstate.error.') ? 'error' : 'done'})` : reason;
      return { text, edges: [i] };
    });
    return { from, to, lines, terminal: finals.has(to) };
  });
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

function placeStates(chart: Chart, p: Placement, rails: readonly string[]): NodeBox[] {
  const nodes: NodeBox[] = [];
  let extra = 0;
  for (const s of chart.states) {
    if (rails.includes(s.id)) continue;
    const place = p.places[s.id] ?? { x: p.extra.x + extra++ * p.extra.step, y: p.extra.y };
    nodes.push({
      state: s.id,
      x: place.x,
      y: place.y,
      w: Math.max(110, s.id.length * charW(FONT.state) + 28),
      h: NODE_H,
      final: s.final,
      initial: s.initial,
      rail: false,
    });
  }
  return nodes;
}

function railBoxes(rails: readonly string[], width: number, top: number, gap: number): NodeBox[] {
  return rails.map((id, i) => ({
    state: id,
    x: width / 2,
    y: top + i * (RAIL_H + gap) + RAIL_H / 2,
    w: width - 16,
    h: RAIL_H,
    final: true,
    initial: false,
    rail: true,
  }));
}

interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}
const overlaps = (a: Box, b: Box) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

/**
 * Labels of the drops into the first rail, stacked just above it: each as low as it can go
 * without covering a label already placed (y relative to the rail's top, so negative).
 */
function stackRailLabels(labels: { x: number; w: number; h: number }[]): number[] {
  const placed: Box[] = [];
  return labels.map((l) => {
    const box = { x: l.x, y: -4 - l.h, w: l.w, h: l.h };
    for (let hit = placed.find((o) => overlaps(o, box)); hit; hit = placed.find((o) => overlaps(o, box)))
      box.y = hit.y - box.h - 2;
    placed.push(box);
    return box.y;
  });
}

export function layoutChart(chart: Chart, view: DiagramViewName = 'overview'): ChartLayout {
  const p = view === 'overview' ? OVERVIEW : FULL;
  const rails = railStates(chart);
  const states = placeStates(chart, p, rails);
  const byState = new Map(states.map((n) => [n.state, n] as const));
  const arrows = view === 'overview' ? diagramEdges(chart, 'overview') : fullLines(chart);
  const pairs = new Set(arrows.map((a) => `${a.from}>${a.to}`));
  const labelW = (lines: readonly DiagramLine[]) =>
    Math.max(...lines.map((l) => l.text.length)) * charW(FONT.label);

  const shapes: EdgeShape[] = [];
  const drops: { shape: EdgeShape; from: NodeBox; x: number; railNo: number }[] = [];
  for (const arrow of arrows) {
    const { from, to, lines, terminal } = arrow;
    const edges = lines.flatMap((l) => l.edges);
    const a = byState.get(from);
    const railNo = rails.indexOf(to);
    const b = byState.get(to);
    if (!a || (!b && railNo < 0)) continue;
    // Room for the ` ×N` the page adds to a taken line.
    const lw = labelW(lines) + 8 + 5 * charW(FONT.label);
    const lh = lines.length * LINE_H;
    const base = { from, to, edges, terminal };
    if (railNo >= 0) {
      // A straight drop from the bottom of the state to its rail; drawn once the rails are placed.
      const dx = (p.drops[from] ?? p.defaultDrops)[railNo] ?? p.defaultDrops[0]!;
      const shape = {
        ...base,
        d: '',
        label: { x: a.x + dx + 5, y: 0, w: labelW(lines) + 8 + 4 * charW(FONT.label), lines },
        toRail: true,
      };
      shapes.push(shape);
      drops.push({ shape, from: a, x: a.x + dx, railNo });
      continue;
    }
    if (!b) continue;
    if (a === b) {
      // Self-loop (a targetless transition): a small arc over the state.
      const x = a.x;
      const y = a.y - a.h / 2;
      const d = `M${r1(x - 16)},${r1(y)} C${r1(x - 40)},${r1(y - 46)} ${r1(x + 40)},${r1(y - 46)} ${r1(x + 16)},${r1(y)}`;
      shapes.push({ ...base, d, label: { x: x - lw / 2, y: y - 50 - lh, w: lw, lines }, toRail: false });
      continue;
    }
    const route = p.routes[`${from}>${to}`] ?? {};
    const bend = route.bend ?? (pairs.has(`${to}>${from}`) ? 22 : 0);
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
    // The label goes on the outer side of the bend (or the inner one); a straight edge's above
    // it (or below), or — when it runs more up than across — to its right (or left).
    const flip = route.side === 'in' ? -1 : 1;
    let ox: number;
    let oy: number;
    if (bend !== 0) {
      ox = nx * Math.sign(bend) * flip;
      oy = ny * Math.sign(bend) * flip;
    } else if (Math.abs(b.y - a.y) > Math.abs(b.x - a.x)) {
      ox = flip;
      oy = 0;
    } else {
      ox = 0;
      oy = -flip;
    }
    const lx = px + ox * (lw / 2 + 4) - lw / 2;
    const ly = py + oy * (lh / 2 + 4) - lh / 2;
    const d = `M${r1(sx)},${r1(sy)} Q${r1(cx)},${r1(cy)} ${r1(ex)},${r1(ey)}`;
    shapes.push({ ...base, d, label: { x: lx, y: ly, w: lw, lines }, toRail: false });
  }

  // Rails: under the lowest state and the labels stacked above the first rail. A label that
  // would run past the rails' end goes to the left of its drop.
  const width = Math.max(...states.map((n) => n.x + n.w / 2)) + 24;
  for (const d of drops) {
    const l = d.shape.label;
    if (l.x + l.w > width) l.x = d.x - 5 - l.w + 4 * charW(FONT.label);
  }
  const toFirst = drops.filter((d) => d.railNo === 0).sort((a, b) => a.x - b.x);
  const stacked = stackRailLabels(
    toFirst.map((d) => ({ x: d.shape.label.x, w: d.shape.label.w, h: d.shape.label.lines.length * LINE_H })),
  );
  const lowest = Math.max(...states.map((n) => n.y + n.h / 2));
  const railTop = Math.max(p.railTop, lowest + 10 - Math.min(0, ...stacked));
  const railNodes = railBoxes(rails, width, railTop, p.railGap);
  toFirst.forEach((d, k) => {
    d.shape.label.y = railTop + stacked[k]!;
  });

  for (const d of drops) {
    const rail = railNodes[d.railNo]!;
    const y1 = rail.y - rail.h / 2;
    d.shape.d = `M${r1(d.x)},${r1(d.from.y + d.from.h / 2)} L${r1(d.x)},${r1(y1)}`;
    // Past the first rail only a count shows: it sits in the gap just above its rail.
    if (d.railNo > 0) d.shape.label.y = y1 - LINE_H + 1;
  }
  const nodes = [...states, ...railNodes];
  const right = Math.max(...nodes.map((n) => n.x + n.w / 2), ...shapes.map((s) => s.label.x + s.label.w));
  const top = Math.min(0, ...shapes.map((s) => s.label.y - 4));
  const left = Math.min(0, ...shapes.map((s) => s.label.x - 4));
  const bottom = Math.max(...nodes.map((n) => n.y + n.h / 2));
  const initial = byState.get(chart.initial);
  return {
    view,
    left: Math.floor(left),
    top: Math.floor(top),
    width: Math.ceil(right + 8 - Math.floor(left)),
    height: Math.ceil(bottom + 10 - top),
    nodes,
    edges: shapes,
    start: initial ? { x: initial.x - initial.w / 2 - 36, y: initial.y } : { x: 10, y: 10 },
  };
}
