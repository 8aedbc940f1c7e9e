import type { TransitionReason } from '../machines/reasons.ts';
import type { RecordData } from '../store/records.ts';
import { type ChartEdge, chartOf } from '../viz/edgeCatalog.ts';

/** The effects whose outcomes are the chart's triggers (`xstate.done.actor.<effect>` …). */
export type Effect = 'buildQuery' | 'callModel' | 'runTools' | 'compact' | 'backoff' | 'stopChecks';

export const done = (effect: Effect) => `xstate.done.actor.${effect}`;
export const failed = (effect: Effect) => `xstate.error.actor.${effect}`;

/** An inferred transition the chart has no edge for: a bug of the importer, never of the transcript. */
export class ImportBugError extends Error {
  readonly code = 'IMPORT_BUG';
  constructor(
    readonly from: string,
    readonly trigger: string,
    readonly reason: string,
  ) {
    super(`importer bug: the chart has no edge from ${from} on ${trigger} with reason ${reason}`);
    this.name = 'ImportBugError';
  }
}

/** The chart's edges by where they leave from, what triggers them and their reason. */
class EdgeIndex {
  private readonly byKey = new Map<string, ChartEdge>();
  readonly initial: string;
  readonly finals: ReadonlySet<string>;

  constructor() {
    const chart = chartOf();
    this.initial = chart.initial;
    this.finals = new Set(chart.states.filter((s) => s.final).map((s) => s.id));
    // Several guarded edges may share (from, trigger, reason) and differ only in the guard:
    // they lead to the same state with the same reason, so the first one stands for them all.
    for (const e of chart.edges) {
      const key = `${e.from}|${e.event}|${e.reason}`;
      if (!this.byKey.has(key)) this.byKey.set(key, e);
    }
  }

  find(from: string, trigger: string, reason: string): ChartEdge | undefined {
    return this.byKey.get(`${from}|${trigger}|${reason}`);
  }
}

let index: EdgeIndex | null = null;

function edges(): EdgeIndex {
  index ??= new EdgeIndex();
  return index;
}

/**
 * One run's walk on the chart. The importer never names a target state: it says what happened
 * (the trigger, from the recorded fact) and why (the reason), and the chart's own edge catalog
 * says where that leads. A step the chart does not have throws `ImportBugError`.
 */
export class ChartWalk {
  state: string;

  constructor() {
    this.state = edges().initial;
  }

  get final(): boolean {
    return edges().finals.has(this.state);
  }

  take(trigger: string, reason: TransitionReason): RecordData<'transition'> {
    const edge = edges().find(this.state, trigger, reason);
    if (!edge) throw new ImportBugError(this.state, trigger, reason);
    const t = { from: edge.from, to: edge.to, trigger: edge.event, reason };
    this.state = edge.to;
    return t;
  }

  /** Whether the chart has this step from the current state (for choices that depend on it). */
  can(trigger: string, reason: TransitionReason): boolean {
    return edges().find(this.state, trigger, reason) !== undefined;
  }
}
