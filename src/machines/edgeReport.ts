/** What the chart emits each time it takes an edge: the `transition` record's data. */
export interface EdgeTaken {
  type: 'edge';
  from: string;
  to: string;
  trigger: string;
  reason: string;
}

/** The action `reportEdges` puts first on every edge (declared in queryLoop.setup.ts). */
export const REPORT_EDGE_ACTION = 'reportEdge';

export type EdgeFact = Omit<EdgeTaken, 'type'>;

type TransitionLike = { target?: string; meta?: { reason?: string }; actions?: unknown } & Record<
  string,
  unknown
>;
type StateLike = { on?: Record<string, TransitionLike | TransitionLike[]> } & Record<string, unknown>;

/**
 * Makes every edge of a flat chart report itself: its first action emits
 * `{ type: 'edge', from, to, trigger, reason }`, all four known from the definition (the
 * state, the event it routes on, its target and its `meta.reason`). The runtime logs these as
 * `transition` records. Emitting is how a chart tells the world something in xstate; the
 * alternative, inspection, builds and copies an event object for every event, snapshot,
 * action and microstep of every actor (~19 % of the chart's time when measured, versus one
 * cheap emit per edge). First, because emitted events are delivered in order: the edge comes
 * before the messages its actions append and before the next state's effect starts.
 *
 * Only what the chart uses is supported: top-level states routing with `on`. `always`,
 * `after`, nested states and root-level `on` would take edges this could not name, so they
 * are refused loudly rather than left unreported.
 */
export function reportEdges<T>(config: T): T {
  const c = config as { states?: Record<string, StateLike>; on?: unknown; always?: unknown };
  if (c.on || c.always) throw new Error('reportEdges: root-level edges are not supported');
  const states: Record<string, StateLike> = {};
  for (const [from, state] of Object.entries(c.states ?? {})) {
    for (const key of ['always', 'after', 'states'] as const) {
      if (state[key]) throw new Error(`reportEdges: state "${from}" uses \`${key}\`, which the chart avoids`);
    }
    if (!state.on) {
      states[from] = state;
      continue;
    }
    const on: Record<string, TransitionLike[]> = {};
    for (const [trigger, edges] of Object.entries(state.on)) {
      on[trigger] = (Array.isArray(edges) ? edges : [edges]).map((edge) => {
        const fact: EdgeFact = {
          from,
          to: edge.target ?? from,
          trigger,
          reason: edge.meta?.reason ?? '(none)',
        };
        const actions =
          edge.actions === undefined ? [] : Array.isArray(edge.actions) ? edge.actions : [edge.actions];
        return { ...edge, actions: [{ type: REPORT_EDGE_ACTION, params: fact }, ...actions] };
      });
    }
    states[from] = { ...state, on };
  }
  return { ...c, states } as T;
}
