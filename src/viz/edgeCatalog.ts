import type { AnyStateMachine, AnyStateNode } from 'xstate';
import { queryLoopMachine } from '../machines/queryLoop.machine.ts';
import { REASON_DOCS } from '../machines/reasons.ts';

/**
 * The edge catalog, read from the machine definition itself (the definition is the
 * single source of the catalog; the diagrams, the viewer and the coverage tools all read it).
 * Nothing here is hand-maintained: add an edge to the chart and it shows up everywhere.
 */

export interface ChartEdge {
  /** Stable, human-readable: `requesting --[xstate.done.actor.callModel / responseRefused]--> failed`. */
  id: string;
  from: string;
  to: string;
  /** The event type: `xstate.done.actor.<id>`, `xstate.error.actor.<id>`, `xstate.after.*`, `always`. */
  event: string;
  /** Guard name, or null for the unguarded (fallback) edge of its event. */
  guard: string | null;
  /** `meta.reason`; null when the edge has none (the catalog check reports it). */
  reason: string | null;
  /** What a logged transition carries (from, trigger, to, reason): the key of session counts. */
  key: string;
}

export interface ChartState {
  id: string;
  final: boolean;
  initial: boolean;
}

export interface Chart {
  id: string;
  initial: string;
  states: ChartState[];
  edges: ChartEdge[];
}

/** Key of a taken edge, from the fields a `transition` record carries. */
export function transitionKey(t: {
  from: string;
  trigger: string;
  to: string;
  reason: string | null;
}): string {
  return `${t.from} --[${t.trigger}]--> ${t.to} : ${t.reason ?? ''}`;
}

/** State ids are paths below the root (`a.b` for nested states), as the runtime logs them. */
function stateId(node: AnyStateNode): string {
  return node.path.join('.');
}

function guardName(guard: unknown): string | null {
  if (guard === undefined || guard === null) return null;
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'function') return guard.name || 'inline';
  if (typeof guard === 'object' && 'type' in guard && typeof guard.type === 'string') return guard.type;
  return 'inline';
}

function reasonOf(meta: unknown): string | null {
  if (meta && typeof meta === 'object' && 'reason' in meta && typeof meta.reason === 'string')
    return meta.reason;
  return null;
}

interface RawTransition {
  eventType: string;
  guard?: unknown;
  meta?: unknown;
  target?: readonly AnyStateNode[] | undefined;
}

function* nodesOf(node: AnyStateNode): Generator<AnyStateNode> {
  for (const child of Object.values(node.states) as AnyStateNode[]) {
    yield child;
    yield* nodesOf(child);
  }
}

function edgesOfNode(node: AnyStateNode): ChartEdge[] {
  const from = stateId(node);
  // `transitions` holds event edges, invoke onDone/onError and `after` (xstate.after.*) alike;
  // `always` lives apart. The chart avoids `always` but a catalog must not hide one.
  const groups: [string, readonly RawTransition[]][] = [...node.transitions.entries()];
  if (node.always?.length) groups.push(['always', node.always]);
  const out: ChartEdge[] = [];
  for (const [event, transitions] of groups) {
    for (const t of transitions) {
      const guard = guardName(t.guard);
      const reason = reasonOf(t.meta);
      // A targetless transition stays in its state: draw it as a self-loop.
      const targets = t.target?.length ? t.target.map(stateId) : [from];
      for (const to of targets) {
        const id = `${from} --[${event}${guard ? ` / ${guard}` : ''}]--> ${to}`;
        out.push({
          id,
          from,
          to,
          event,
          guard,
          reason,
          key: transitionKey({ from, trigger: event, to, reason }),
        });
      }
    }
  }
  return out;
}

/** Every edge of the chart, in definition order (state order, then event, then guard priority). */
export function edgeCatalog(machine: AnyStateMachine = queryLoopMachine): ChartEdge[] {
  const out: ChartEdge[] = [];
  for (const node of nodesOf(machine.root)) out.push(...edgesOfNode(node));
  return out;
}

/** States and edges of the chart, what every renderer draws. */
export function chartOf(machine: AnyStateMachine = queryLoopMachine): Chart {
  const root = machine.root;
  const initialTargets = root.initial?.target ?? [];
  const initial = initialTargets[0] ? stateId(initialTargets[0]) : '';
  const states: ChartState[] = [];
  for (const node of nodesOf(root)) {
    // Compound states are containers, not places the loop can be; their children are drawn.
    if (node.type === 'compound' || node.type === 'parallel') continue;
    states.push({ id: stateId(node), final: node.type === 'final', initial: stateId(node) === initial });
  }
  return { id: machine.id, initial, states, edges: edgeCatalog(machine) };
}

/**
 * What is wrong with a catalog, one line per problem: an edge without a reason, a reason not in
 * the vocabulary, a non-final state without a way out, a state nothing leads to, two edges
 * with one id.
 */
export function catalogProblems(chart: Chart): string[] {
  const problems: string[] = [];
  const ids = new Set<string>();
  for (const e of chart.edges) {
    if (e.reason === null) problems.push(`edge ${e.id} has no meta.reason`);
    else if (!Object.hasOwn(REASON_DOCS, e.reason))
      problems.push(`edge ${e.id} has reason "${e.reason}", which is not in REASON_DOCS`);
    if (ids.has(e.id)) problems.push(`two edges share the id ${e.id}`);
    ids.add(e.id);
  }
  for (const s of chart.states) {
    if (!s.final && !chart.edges.some((e) => e.from === s.id))
      problems.push(`state ${s.id} has no outgoing edge`);
    if (!s.initial && !chart.edges.some((e) => e.to === s.id && e.from !== s.id))
      problems.push(`state ${s.id} has no incoming edge`);
  }
  return problems;
}
