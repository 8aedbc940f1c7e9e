import type { Message, Usage } from '../model/messages.ts';
import { evolve } from '../store/evolve.ts';
import type { LogRecord } from '../store/records.ts';
import { emptySessionState, type SessionState } from '../store/sessionState.ts';
import { turnAfter } from '../store/turns.ts';
import type { Chart } from './edgeCatalog.ts';
import { recordNote } from './recordNotes.ts';

/** A message of the history, stored once in the page however many steps show it. */
export interface PooledMessage {
  role: Message['role'];
  /** user, assistant, tool_results, … (message.appended's origin) or `compaction` for a summary. */
  origin: string;
  content: Message['content'];
}

/**
 * The state as of every record, for the step slider, in columns (one array per field, one
 * entry per record). The history is never copied per step: it is append-only between
 * compactions, so a step's history is the first `len[i]` entries of segment `seg[i]`, and a
 * segment is a list of indices into `messages`, where each message is stored once. A
 * 1 000-record session costs ~30 bytes of numbers per record plus its messages once, where a
 * snapshot per step would cost the square of the history.
 */
export interface ViewerSteps {
  types: string[];
  runs: string[];
  messages: PooledMessage[];
  segments: number[][];
  /** Distinct session usage values: [input, output, cacheRead, cacheCreation, costUsd]. */
  usages: [number, number, number, number, number][];
  seq: number[];
  /** ms since the first record. */
  at: number[];
  type: number[];
  /** Index into `runs`; -1 outside a run. */
  run: number[];
  seg: number[];
  len: number[];
  usage: number[];
  /** Index into the chart's states: where the loop was after this record; -1 before any run. */
  state: number[];
  /** Index into the view's turns (tokens per turn) of the turn this record belongs to; -1 if none. */
  turn: number[];
  /** One line saying what the record is (built from log data: the page shows it as text only). */
  note: string[];
}

function indexer<T>(list: T[], keyOf: (v: T) => string = String) {
  const seen = new Map<string, number>();
  return (v: T): number => {
    const k = keyOf(v);
    let i = seen.get(k);
    if (i === undefined) {
      i = list.push(v) - 1;
      seen.set(k, i);
    }
    return i;
  };
}

function usageTuple(u: Usage): [number, number, number, number, number] {
  return [u.inputTokens, u.outputTokens, u.cacheReadInputTokens, u.cacheCreationInputTokens, u.costUsd];
}

/**
 * Folds the log with `evolve` (the one definition of session state) and records, per record,
 * where the history and the usage stood. Returns the final state too.
 */
export function viewerSteps(
  records: readonly LogRecord[],
  chart: Chart,
  turns: readonly { run: string; turn: number }[],
): { steps: ViewerSteps; final: SessionState } {
  const steps: ViewerSteps = {
    types: [],
    runs: [],
    messages: [],
    segments: [[]],
    usages: [],
    seq: [],
    at: [],
    type: [],
    run: [],
    seg: [],
    len: [],
    usage: [],
    state: [],
    turn: [],
    note: [],
  };
  const typeIx = indexer(steps.types);
  const runIx = indexer(steps.runs);
  const usageIx = indexer(steps.usages, (u) => u.join(','));
  const stateIx = new Map(chart.states.map((s, i) => [s.id, i] as const));
  const turnIx = new Map(turns.map((t, i) => [`${t.run}\n${t.turn}`, i] as const));
  // Compaction keeps a tail of the history: find those messages in the pool instead of copying.
  const pooled = new Map<string, number>();
  const pool = (m: Message, origin: string): number => {
    const key = JSON.stringify(m);
    const known = pooled.get(key);
    if (known !== undefined && origin === 'compaction') return known;
    const i = steps.messages.push({ role: m.role, origin, content: m.content }) - 1;
    pooled.set(key, i);
    return i;
  };

  let s = emptySessionState();
  let seg = 0;
  let lastTo: string | null = null;
  const turnOfRun = new Map<string, number>();
  const t0 = records[0]?.at ?? 0;
  for (const r of records) {
    const prev = s;
    s = evolve(s, r);
    if (s.messages !== prev.messages) {
      const now = s.messages.view();
      if (r.type === 'compaction.finished') {
        steps.segments.push(now.map((m) => pool(m, 'compaction')));
        seg = steps.segments.length - 1;
      } else {
        const origin = r.type === 'message.appended' ? r.data.origin : 'user';
        for (const m of now.slice(prev.messages.length)) steps.segments[seg]!.push(pool(m, origin));
      }
    }
    const run = r.run ?? '';
    if (r.type === 'run.started') {
      turnOfRun.set(run, 1);
      lastTo = chart.initial;
    }
    const turn = turnOfRun.get(run);
    if (r.type === 'transition') {
      lastTo = r.data.to;
      turnOfRun.set(run, turnAfter(turn ?? 1, r.data.reason));
    }
    steps.seq.push(r.seq);
    steps.at.push(r.at - t0);
    steps.type.push(typeIx(r.type));
    steps.run.push(r.run === null ? -1 : runIx(r.run));
    steps.seg.push(seg);
    steps.len.push(s.messages.length);
    steps.usage.push(usageIx(usageTuple(s.usage)));
    steps.state.push(lastTo === null ? -1 : (stateIx.get(lastTo) ?? -1));
    steps.turn.push(turn === undefined ? -1 : (turnIx.get(`${run}\n${turn}`) ?? -1));
    steps.note.push(recordNote(r));
  }
  return { steps, final: s };
}
