import { getShortestPaths } from '@xstate/graph';
import { type AnyEventObject, type AnyMachineSnapshot, initialTransition, transition } from 'xstate';
import type { RunContext } from '../machines/context.ts';
import { type QueryLoopMachine, queryLoopMachine } from '../machines/queryLoop.machine.ts';
import type { RunSettings } from '../runtime/config.ts';
import { type ChartEdge, edgeCatalog, transitionKey } from '../viz/edgeCatalog.ts';
import { FACT_VARIANTS } from './factVariants.ts';
import { type FactVariant, TRAVERSAL_SETTINGS, traversalInput } from './traversal.ts';

/** One shortest path to one edge: the fact variants fed in order; the last step takes `edge`. */
export interface EdgePath {
  edge: ChartEdge;
  steps: FactVariant[];
  /** Every edge the path takes, in order (replayed on the real chart, so exact). */
  edges: ChartEdge[];
}

export interface PathReport {
  /** The edge catalog of the machine. */
  edges: ChartEdge[];
  /** One path per reachable edge, in catalog order. */
  paths: EdgePath[];
  /** Catalog edges no path reaches with these variants and this configuration. */
  unreached: ChartEdge[];
  /** Depth the search went to, and whether it saw the whole (finite) state space. */
  depth: number;
  exhaustive: boolean;
}

export interface PathOptions {
  machine?: QueryLoopMachine;
  variants?: readonly FactVariant[];
  settings?: RunSettings;
  /** Iterative deepening stops here (default 32). */
  maxDepth?: number;
}

/**
 * The graph key of a snapshot: its state value plus the counters the guards read, never the
 * whole context (the history and usage objects would make every state unique).
 * A key that merged states the guards tell apart could only hide edges (they would be
 * reported unreached), never invent one: every path is replayed on the real chart.
 */
export function serializeRunState(s: AnyMachineSnapshot): string {
  if (s.status !== 'active') return JSON.stringify(s.value);
  const c = s.context as RunContext;
  return JSON.stringify([
    s.value,
    c.turn,
    c.output.maxTokens,
    c.output.escalated,
    c.output.recoveries,
    c.transport.attempt,
    c.transport.consecutiveOverloads,
    c.transport.fellBack,
    c.compaction.reactiveTried,
    c.compaction.mode,
    c.compaction.autoFailures,
    c.stop.blocks,
    c.usage.inputTokens + c.usage.outputTokens,
    c.usage.costUsd,
    c.contextTokens,
  ]);
}

/** The catalog edge a snapshot takes on an event, or null when no transition is enabled. */
export function edgeTaken(
  machine: QueryLoopMachine,
  byKey: ReadonlyMap<string, ChartEdge>,
  snapshot: AnyMachineSnapshot,
  event: AnyEventObject,
): ChartEdge | null {
  const t = machine.getTransitionData(snapshot as never, event as never)[0];
  if (!t) return null;
  const key = transitionKey({
    from: t.source.path.join('.'),
    trigger: t.eventType,
    to: (t.target?.[0] ?? t.source).path.join('.'),
    reason: (t.meta as { reason?: string } | undefined)?.reason ?? null,
  });
  const edge = byKey.get(key);
  if (!edge) throw new Error(`transition ${key} is not in the edge catalog`);
  return edge;
}

export interface Replay {
  edges: ChartEdge[];
  end: AnyMachineSnapshot;
}

/** Feeds the steps to the real chart (pure transitions) from `from` and lists the edges taken. */
export function replaySteps(
  machine: QueryLoopMachine,
  steps: readonly FactVariant[],
  from: AnyMachineSnapshot,
): Replay {
  const byKey = new Map(edgeCatalog(machine).map((e) => [e.key, e]));
  const edges: ChartEdge[] = [];
  let snapshot = from;
  for (const step of steps) {
    const edge = edgeTaken(machine, byKey, snapshot, step.event);
    if (!edge) throw new Error(`step ${step.id} is not accepted in state ${JSON.stringify(snapshot.value)}`);
    edges.push(edge);
    [snapshot] = transition(machine, snapshot as never, step.event as never) as [AnyMachineSnapshot, unknown];
  }
  return { edges, end: snapshot };
}

export function initialSnapshot(machine: QueryLoopMachine, settings: RunSettings): AnyMachineSnapshot {
  return initialTransition(machine, traversalInput(settings))[0] as AnyMachineSnapshot;
}

interface Search {
  machine: QueryLoopMachine;
  variants: readonly FactVariant[];
  settings: RunSettings;
  fromState?: AnyMachineSnapshot;
  depth: number;
  toState?: (s: AnyMachineSnapshot) => boolean;
}

/**
 * getShortestPaths, bounded by depth. The depth of a snapshot is learnt from the state it was
 * reached from (serializeState sees both, in breadth-first order). `truncated` says whether
 * the bound cut anything off: if not, the search saw every reachable state.
 */
export function shortestPaths(s: Search) {
  const depthOf = new WeakMap<object, number>();
  let truncated = false;
  const variantOf = new Map<object, FactVariant>(s.variants.map((v) => [v.event, v]));
  const paths = getShortestPaths(s.machine, {
    input: traversalInput(s.settings),
    ...(s.fromState ? { fromState: s.fromState as never } : {}),
    events: s.variants.map((v) => v.event) as never,
    serializeState: (state, _event, prev) => {
      if (!depthOf.has(state)) depthOf.set(state, prev ? (depthOf.get(prev) ?? 0) + 1 : 0);
      return serializeRunState(state);
    },
    stopWhen: (state) => {
      if (state.status !== 'active' || s.toState?.(state)) return true;
      if ((depthOf.get(state) ?? 0) < s.depth) return false;
      truncated = true;
      return true;
    },
    ...(s.toState ? { toState: s.toState as never } : {}),
  });
  return {
    truncated,
    paths: paths.map((p) => ({
      state: p.state as AnyMachineSnapshot,
      // The first step of each path is the synthetic xstate.init; the rest are our events.
      steps: p.steps.slice(1).map((step) => {
        const v = variantOf.get(step.event);
        if (!v) throw new Error(`unknown event in a path: ${step.event.type}`);
        return v;
      }),
    })),
  };
}

/**
 * One shortest path to every edge of the chart. The shortest path to an edge is the shortest
 * path to its source state plus the event that takes it, so every state's path is extended by
 * each variant and, per edge, the first shortest candidate (breadth-first, variant order) is
 * kept. The depth bound grows until every edge is reached or the state space is exhausted.
 */
export function computeEdgePaths(opts: PathOptions = {}): PathReport {
  const machine = opts.machine ?? queryLoopMachine;
  const variants = opts.variants ?? FACT_VARIANTS;
  const settings = opts.settings ?? TRAVERSAL_SETTINGS;
  const maxDepth = opts.maxDepth ?? 32;
  const catalog = edgeCatalog(machine);
  const byKey = new Map(catalog.map((e) => [e.key, e]));
  const start = initialSnapshot(machine, settings);
  const searched = variants.filter((v) => !v.firstStepOnly);
  for (let depth = 8; ; depth *= 2) {
    const search = shortestPaths({ machine, variants: searched, settings, depth });
    const best = new Map<string, FactVariant[]>();
    for (const p of search.paths) {
      if (p.state.status !== 'active') continue;
      for (const v of variants) {
        if (v.firstStepOnly && p.steps.length > 0) continue;
        const edge = edgeTaken(machine, byKey, p.state, v.event);
        const have = edge && best.get(edge.key);
        if (edge && (!have || have.length > p.steps.length + 1)) best.set(edge.key, [...p.steps, v]);
      }
    }
    // Edges only a run that starts in a particular way reaches (a manual compaction's): searched
    // from the state after that first step, only for edges no other path reaches.
    for (const first of variants) {
      if (!first.firstStepOnly || !edgeTaken(machine, byKey, start, first.event)) continue;
      const { end: after } = replaySteps(machine, [first], start);
      if (after.status !== 'active') continue;
      const from = shortestPaths({ machine, variants: searched, settings, fromState: after, depth: 4 });
      for (const p of from.paths) {
        if (p.state.status !== 'active') continue;
        for (const v of searched) {
          const edge = edgeTaken(machine, byKey, p.state, v.event);
          if (edge && !best.has(edge.key)) best.set(edge.key, [first, ...p.steps, v]);
        }
      }
    }
    const unreached = catalog.filter((e) => !best.has(e.key));
    const exhaustive = !search.truncated;
    if (unreached.length > 0 && !exhaustive && depth * 2 <= maxDepth) continue;
    const paths = catalog.flatMap((edge) => {
      const steps = best.get(edge.key);
      if (!steps) return [];
      const { edges } = replaySteps(machine, steps, start);
      if (edges.at(-1)?.key !== edge.key) {
        throw new Error(`path to ${edge.id} replays to ${edges.at(-1)?.id}: serializeRunState merges states`);
      }
      return [{ edge, steps, edges }];
    });
    return { edges: catalog, paths, unreached, depth, exhaustive };
  }
}

/**
 * The shortest way from where a path ends to a final state, so a scenario can run to the end
 * of the run: to `completed` when it is near, else to any final state.
 */
export function completion(
  path: EdgePath,
  opts: Omit<PathOptions, 'maxDepth'> = {},
): { steps: FactVariant[]; edges: ChartEdge[] } {
  const machine = opts.machine ?? queryLoopMachine;
  const variants = (opts.variants ?? FACT_VARIANTS).filter((v) => !v.firstStepOnly);
  const settings = opts.settings ?? TRAVERSAL_SETTINGS;
  const { end } = replaySteps(machine, path.steps, initialSnapshot(machine, settings));
  if (end.status !== 'active') return { steps: [], edges: [] };
  const ends: ((s: AnyMachineSnapshot) => boolean)[] = [
    (s) => s.value === 'completed',
    (s) => s.status !== 'active',
  ];
  // Shallow searches first: a final state is usually a few steps away, and each search is a
  // full breadth-first traversal to its depth.
  for (const depth of [4, 8]) {
    for (const toState of ends) {
      const { paths } = shortestPaths({ machine, variants, settings, fromState: end, depth, toState });
      const found = paths.filter((p) => toState(p.state)).sort((a, b) => a.steps.length - b.steps.length)[0];
      if (found) return { steps: found.steps, edges: replaySteps(machine, found.steps, end).edges };
    }
  }
  throw new Error(`no final state is reachable after the path to ${path.edge.id}`);
}
