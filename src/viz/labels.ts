import type { Chart, ChartEdge } from './edgeCatalog.ts';

/** Taken-edge counts of a session: transitionKey → how many times the log took that edge. */
export type EdgeCounts = ReadonlyMap<string, number>;

/**
 * The label of an edge: its reason, plus its guard when another edge between the same two
 * states has the same reason (requesting → compacting is compact_retry both on a response that
 * overflowed and on a prompt-too-long error; the guard is what tells them apart).
 */
export function edgeLabel(edge: ChartEdge, chart: Chart): string {
  const reason = edge.reason ?? '(no reason)';
  const twin = chart.edges.some(
    (e) => e !== edge && e.from === edge.from && e.to === edge.to && e.reason === edge.reason,
  );
  return twin && edge.guard ? `${reason} [${edge.guard}]` : twin ? `${reason} [else]` : reason;
}

export interface DiagramOptions {
  /** A session's taken-edge counts: taken edges get `×N`, states it passed through are marked. */
  counts?: EdgeCounts;
  /** A one-line caption (e.g. the session id); characters outside a safe set are dropped. */
  caption?: string;
}

/** Captions come from the command line or the log: keep them to one line of inert characters. */
export function safeCaption(caption: string): string {
  return caption.replace(/[^\w .:/-]+/g, '').slice(0, 120);
}

export function countOf(edge: ChartEdge, counts: EdgeCounts | undefined): number {
  return counts?.get(edge.key) ?? 0;
}

/** States a session was in at least once (both ends of every taken edge). */
export function visitedStates(chart: Chart, counts: EdgeCounts | undefined): Set<string> {
  const out = new Set<string>();
  if (!counts) return out;
  for (const e of chart.edges) {
    if (countOf(e, counts) > 0) {
      out.add(e.from);
      out.add(e.to);
    }
  }
  return out;
}
