import type { LogRecord } from '../store/records.ts';
import { turnAfter } from '../store/turns.ts';
import { type Chart, chartOf, transitionKey } from './edgeCatalog.ts';

/** The one turn numbering (src/store/turns.ts), for the viewer's modules. */
export { NEW_TURN_REASONS } from '../store/turns.ts';

/** One transition of the log, placed on the chart. */
export interface TimelineEntry {
  seq: number;
  at: number;
  run: string | null;
  from: string;
  to: string;
  trigger: string;
  reason: string;
  /** The turn of its run the transition was taken in (1-based; the edge leaving a turn counts in it). */
  turn: number;
  /** Index of its edge in `chart.edges`; -1 when no edge of this chart matches (an older chart's log). */
  edge: number;
}

/** Tokens the model calls of one turn used (turn requests and the compactions that followed them). */
export interface TurnTokens {
  run: string;
  turn: number;
  input: number;
  output: number;
  cacheRead: number;
  cacheCreation: number;
  /** Input + output tokens of compaction calls made in the turn (already included above). */
  compaction: number;
  calls: number;
}

export interface SessionView {
  chart: Chart;
  counts: Map<string, number>;
  timeline: TimelineEntry[];
  /** Transitions the chart has no edge for: the log was written by another version of it. */
  unknown: TimelineEntry[];
  turns: TurnTokens[];
}

/** Taken-edge counts of a log: what the diagrams mark. */
export function edgeCounts(records: Iterable<LogRecord>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of records) {
    if (r.type !== 'transition') continue;
    const key = transitionKey(r.data);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/** Timeline, counts and tokens per turn of a session, in one pass over its records. */
export function sessionView(records: readonly LogRecord[], chart: Chart = chartOf()): SessionView {
  const edgeIndex = new Map(chart.edges.map((e, i) => [e.key, i] as const));
  const timeline: TimelineEntry[] = [];
  const turns: TurnTokens[] = [];
  const turnOfRun = new Map<string, number>();
  let current: TurnTokens | null = null;

  const turnEntry = (run: string, turn: number): TurnTokens => {
    if (current && current.run === run && current.turn === turn) return current;
    current = { run, turn, input: 0, output: 0, cacheRead: 0, cacheCreation: 0, compaction: 0, calls: 0 };
    turns.push(current);
    return current;
  };

  for (const r of records) {
    const run = r.run ?? '';
    if (r.type === 'run.started') turnOfRun.set(run, 1);
    else if (r.type === 'transition') {
      const turn = turnOfRun.get(run) ?? 1;
      const { from, to, trigger, reason } = r.data;
      const edge = edgeIndex.get(transitionKey(r.data)) ?? -1;
      timeline.push({ seq: r.seq, at: r.at, run: r.run, from, to, trigger, reason, turn, edge });
      turnOfRun.set(run, turnAfter(turn, reason));
    } else if (r.type === 'model.responded') {
      const u = r.data.response.usage;
      const t = turnEntry(run, turnOfRun.get(run) ?? 1);
      t.input += u.inputTokens;
      t.output += u.outputTokens;
      t.cacheRead += u.cacheReadInputTokens;
      t.cacheCreation += u.cacheCreationInputTokens;
      t.calls += 1;
      if (r.data.purpose === 'compaction') t.compaction += u.inputTokens + u.outputTokens;
    }
  }
  return {
    chart,
    counts: edgeCounts(records),
    timeline,
    unknown: timeline.filter((t) => t.edge < 0),
    turns,
  };
}
