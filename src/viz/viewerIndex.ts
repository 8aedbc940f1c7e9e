import type { Message, Usage } from '../model/messages.ts';
import { evolve } from '../store/evolve.ts';
import type { LogRecord, ParentLink } from '../store/records.ts';
import { emptySessionState, type SessionState } from '../store/sessionState.ts';
import { type Chart, transitionKey } from './edgeCatalog.ts';
import { recordNote } from './recordNotes.ts';
import { NEW_TURN_REASONS } from './sessionView.ts';

/** A message of the history, stored once however many steps show it. */
export interface PooledMessage {
  role: Message['role'];
  /** user, assistant, tool_results, … (message.appended's origin) or `compaction` for a summary. */
  origin: string;
  content: Message['content'];
}

/** Where a child session hangs off its parent (`session.created.parent`): the `Task` call that started it. */
export type ParentRef = ParentLink;

/** The per-record columns, one number per record each (−1: does not apply). */
export const COLUMNS = [
  'seq',
  /** ms since the session's first record (the only float column). */
  'at',
  /** Index into `types`. */
  'type',
  /** Index into `runs`. */
  'run',
  /** Index into the chart's states: where the loop was after this record. */
  'state',
  /** Transitions: index into chart.edges; −2 for a transition this chart has no edge for. */
  'edge',
  /** Transitions and run.ended: index into `reasons`. */
  'reason',
  /** Records about one tool call: index into `tools`. */
  'tool',
  /** Index into `turns`. */
  'turn',
  /** The history as of this record: the first `len` messages of segment `seg`. */
  'seg',
  'len',
  /** Index into `usages`: the session's usage so far. */
  'usage',
  /** Transitions: index of the record that triggered it (the fact the chart decided on). */
  'cause',
] as const;
export type ColumnName = (typeof COLUMNS)[number];

/** The tables records refer to by index. Append-only: a live page receives only their new entries. */
export interface ViewerTables {
  types: string[];
  runs: string[];
  reasons: string[];
  tools: string[];
  /** Distinct session usage values: [input, output, cacheRead, cacheCreation, costUsd]. */
  usages: [number, number, number, number, number][];
  /** Turns in log order: run, number within the run, index of its first record. */
  turns: { run: string; turn: number; first: number }[];
  /** Messages appended to segments, in order: [segment, message]. A new segment starts at compaction. */
  segOps: [number, number][];
}

export interface SessionMeta {
  id: string;
  title: string;
  cwd: string | null;
  forkedFrom: { session: string; seq: number } | null;
  parent: ParentRef | null;
  /** `at` of the first record: every `at` column is relative to it. */
  t0: number;
  records: number;
  runs: {
    id: string;
    status: string;
    reason: string | null;
    turns: number;
    startedSeq: number;
    endedSeq: number | null;
  }[];
}

/**
 * Everything the viewer knows about records `first .. first + count − 1`: their columns, raw
 * JSON and one-line notes, the table entries they added, the messages they pooled, and the
 * session as of the last one. The page gets chunk 0 (all of it) embedded, a live page the
 * later ones. Log data: the page shows all of it as text only.
 */
export interface ViewerChunk {
  first: number;
  count: number;
  cols: Record<ColumnName, number[]>;
  lines: string[];
  notes: string[];
  /** Pooled messages added by these records, as JSON text (parsed by the page when shown). */
  messages: string[];
  tables: ViewerTables;
  meta: SessionMeta;
}

const ANNOUNCEMENTS: ReadonlySet<string> = new Set(['transition', 'model.requested', 'tool.started']);

/** An append-only list that remembers which record added each entry. */
class Ledger<T> {
  readonly items: T[] = [];
  readonly addedBy: number[] = [];
  private readonly index = new Map<string, number>();

  constructor(private readonly keyOf: (v: T) => string = String) {}

  /** Index of `v`, added (by record `i`) when not seen before. */
  intern(v: T, i: number): number {
    const k = this.keyOf(v);
    const known = this.index.get(k);
    if (known !== undefined) return known;
    this.index.set(k, this.items.length);
    return this.add(v, i);
  }

  add(v: T, i: number): number {
    this.addedBy.push(i);
    return this.items.push(v) - 1;
  }

  /** Entries added by record `from` or later. */
  since(from: number): T[] {
    let lo = 0;
    let hi = this.addedBy.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.addedBy[mid]! < from) lo = mid + 1;
      else hi = mid;
    }
    return this.items.slice(lo);
  }
}

function usageTuple(u: Usage): [number, number, number, number, number] {
  return [u.inputTokens, u.outputTokens, u.cacheReadInputTokens, u.cacheCreationInputTokens, u.costUsd];
}

/**
 * The viewer's index of one session, built record by record (so `reloop serve` keeps one per
 * watched session and ships only what is new). The history at each record comes from `evolve`,
 * the fold that rebuilds sessions, so the viewer cannot disagree with replay about it — and it
 * does not care how a record stores its message. The history is never copied per record:
 * between compactions it only grows, so a record stores (segment, length) and every message
 * is pooled once (a compaction's kept tail points at the messages already there).
 */
export class ViewerIndex {
  private readonly cols = Object.fromEntries(COLUMNS.map((c) => [c, [] as number[]])) as Record<
    ColumnName,
    number[]
  >;
  private readonly lines: string[] = [];
  private readonly notes: string[] = [];
  private readonly types = new Ledger<string>();
  private readonly runs = new Ledger<string>();
  private readonly reasons = new Ledger<string>();
  private readonly tools = new Ledger<string>();
  private readonly usages = new Ledger<[number, number, number, number, number]>((u) => u.join(','));
  private readonly turns = new Ledger<{ run: string; turn: number; first: number }>();
  private readonly segOps = new Ledger<[number, number]>();
  private readonly messages = new Ledger<string>();
  /** Pool ids of the current segment's messages, in history order. */
  private segIds: number[] = [];
  private lastUsage: unknown;
  private usageIx = -1;
  private readonly edgeIndex: Map<string, number>;
  private readonly stateIndex: Map<string, number>;
  private readonly toolOfUse = new Map<string, string>();
  private readonly turnOfRun = new Map<string, { turn: number; index: number }>();
  private readonly lastFact = new Map<string, number>();
  private state: SessionState = emptySessionState();
  private seg = -1;
  private segments = 0;
  private lastTo: string | null = null;
  private t0: number | null = null;
  private parent: ParentRef | null = null;

  constructor(readonly chart: Chart) {
    this.edgeIndex = new Map(chart.edges.map((e, i) => [e.key, i] as const));
    this.stateIndex = new Map(chart.states.map((s, i) => [s.id, i] as const));
  }

  get length(): number {
    return this.lines.length;
  }

  get session(): SessionState {
    return this.state;
  }

  push(r: LogRecord): void {
    const i = this.lines.length;
    const prev = this.state;
    this.state = evolve(prev, r);
    this.t0 ??= r.at;
    if (this.seg < 0) this.seg = this.segments++;
    const appended = this.poolMessages(r, prev, i);
    const run = r.run ?? '';
    if (r.type === 'session.created') this.parent = r.data.parent ?? null;
    if (r.type === 'run.started') {
      this.lastTo = this.chart.initial;
      this.lastFact.delete(run);
    }
    const c = this.cols;
    c.seq.push(r.seq);
    c.at.push(r.at - this.t0);
    c.type.push(this.types.intern(r.type, i));
    c.run.push(r.run === null ? -1 : this.runs.intern(r.run, i));
    c.turn.push(this.turnIndex(r, i));
    let edge = -1;
    let reason = -1;
    let cause = -1;
    if (r.type === 'transition') {
      this.lastTo = r.data.to;
      edge = this.edgeIndex.get(transitionKey(r.data)) ?? -2;
      reason = this.reasons.intern(r.data.reason, i);
      cause = this.lastFact.get(run) ?? -1;
    } else if (r.type === 'run.ended') {
      reason = this.reasons.intern(r.data.reason, i);
    }
    if (r.run !== null && !ANNOUNCEMENTS.has(r.type)) this.lastFact.set(run, i);
    c.edge.push(edge);
    c.reason.push(reason);
    c.cause.push(cause);
    c.tool.push(this.toolIndex(r, i));
    c.state.push(this.lastTo === null ? -1 : (this.stateIndex.get(this.lastTo) ?? -1));
    c.seg.push(this.seg);
    c.len.push(this.state.messages.length);
    if (this.state.usage !== this.lastUsage) {
      this.lastUsage = this.state.usage;
      this.usageIx = this.usages.intern(usageTuple(this.state.usage), i);
    }
    c.usage.push(this.usageIx);
    this.lines.push(JSON.stringify(r));
    this.notes.push(recordNote(r, appended).replace(/[\r\n]+/g, ' '));
  }

  /** Records `from ..` (all of them by default) as a chunk; the session meta as of now. */
  chunk(from = 0): ViewerChunk {
    return {
      first: from,
      count: this.length - from,
      cols: Object.fromEntries(COLUMNS.map((c) => [c, this.cols[c].slice(from)])) as Record<
        ColumnName,
        number[]
      >,
      lines: this.lines.slice(from),
      notes: this.notes.slice(from),
      messages: this.messages.since(from),
      tables: {
        types: this.types.since(from),
        runs: this.runs.since(from),
        reasons: this.reasons.since(from),
        tools: this.tools.since(from),
        usages: this.usages.since(from),
        turns: this.turns.since(from),
        segOps: this.segOps.since(from),
      },
      meta: this.meta(),
    };
  }

  meta(): SessionMeta {
    const s = this.state;
    const runs = [...s.runs.view(), ...(s.currentRun ? [s.currentRun] : [])];
    return {
      id: s.id ?? '',
      title: s.title,
      cwd: s.cwd,
      forkedFrom: s.forkedFrom,
      parent: this.parent,
      t0: this.t0 ?? 0,
      records: this.length,
      runs: runs.map((r) => ({
        id: r.id,
        status: r.status,
        reason: r.reason,
        turns: r.turns,
        startedSeq: r.startedSeq,
        endedSeq: r.endedSeq,
      })),
    };
  }

  private pool(m: Message, origin: string, i: number): number {
    return this.messages.add(JSON.stringify({ role: m.role, origin, content: m.content }), i);
  }

  /** Pools what the record added to the history; returns the added messages (none for a compaction). */
  private poolMessages(r: LogRecord, prev: SessionState, i: number): readonly Message[] {
    if (this.state.messages === prev.messages) return [];
    const now = this.state.messages.view();
    if (r.type === 'compaction.finished') {
      // The kept tail is the same messages again: find them in the segment that ends here.
      const before = new Map<string, number>();
      prev.messages.view().forEach((m, k) => {
        before.set(JSON.stringify(m), this.segIds[k]!);
      });
      this.seg = this.segments++;
      this.segIds = now.map((m) => before.get(JSON.stringify(m)) ?? this.pool(m, 'compaction', i));
      for (const id of this.segIds) this.segOps.add([this.seg, id], i);
      return [];
    }
    const origin = r.type === 'message.appended' ? r.data.origin : 'user';
    const added = now.slice(prev.messages.length);
    for (const m of added) {
      const id = this.pool(m, origin, i);
      this.segIds.push(id);
      this.segOps.add([this.seg, id], i);
    }
    return added;
  }

  private turnIndex(r: LogRecord, i: number): number {
    if (r.run === null) return -1;
    const run = r.run;
    let t = this.turnOfRun.get(run);
    if (r.type === 'run.started' || !t) {
      t = { turn: 1, index: this.turns.add({ run, turn: 1, first: i }, i) };
      this.turnOfRun.set(run, t);
      return t.index;
    }
    const index = t.index;
    // The edge that leaves a turn belongs to it; the next record starts the new one.
    if (r.type === 'transition' && NEW_TURN_REASONS.has(r.data.reason)) {
      const turn = t.turn + 1;
      this.turnOfRun.set(run, { turn, index: this.turns.add({ run, turn, first: i + 1 }, i) });
    }
    return index;
  }

  private toolIndex(r: LogRecord, i: number): number {
    switch (r.type) {
      case 'tool.started':
      case 'tool.finished':
      case 'permission.decided':
        this.toolOfUse.set(r.data.toolUseId, r.data.name);
        return this.tools.intern(r.data.name, i);
      case 'hook.decided': {
        const name = r.data.toolUseId ? this.toolOfUse.get(r.data.toolUseId) : undefined;
        return name === undefined ? -1 : this.tools.intern(name, i);
      }
      default:
        return -1;
    }
  }
}

/** The index of a whole log. */
export function indexRecords(records: Iterable<LogRecord>, chart: Chart): ViewerIndex {
  const index = new ViewerIndex(chart);
  for (const r of records) index.push(r);
  return index;
}
