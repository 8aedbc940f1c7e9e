import { isDeepStrictEqual } from 'node:util';
import { type Message, textOf } from '../model/messages.ts';
import { evolve } from '../store/evolve.ts';
import type { LogRecord } from '../store/records.ts';
import { emptySessionState, type SessionState } from '../store/sessionState.ts';
import { recordNote } from './recordNotes.ts';

/** What one side did after the fork point. */
export interface ForkSide {
  session: string;
  lastSeq: number;
  /** Records after the fork point. */
  records: number;
  transitions: number;
  /** Runs that ended after the fork point (and the one still open, as `running`). */
  runs: { status: string; reason: string | null; turns: number }[];
  /** Tokens and cost of the model calls after the fork point. */
  usage: { input: number; output: number; costUsd: number };
}

export interface ForkMessage {
  /** Position in the history (1-based). */
  n: number;
  role: string;
  text: string;
}

export interface ForkDiff {
  source: string;
  seq: number;
  /** Where the fork left its source: the loop's state and the history's length at `seq`. */
  at: { state: string | null; messages: number };
  /**
   * First seq where the two logs say different things (null: the fork adds nothing yet), each
   * side's record in words, and for a record that carries content (a response, a tool result, a
   * message: what a counterfactual fork replaces) an excerpt of each side's content.
   */
  firstDifference: {
    seq: number;
    source: string | null;
    fork: string | null;
    content?: { source: string | null; fork: string | null };
  } | null;
  sides: { source: ForkSide; fork: ForkSide };
  /** The histories as they end: how many messages they share, then each side's own. */
  messages: { common: number; source: ForkMessage[]; fork: ForkMessage[]; more: boolean };
  /** Transitions after the fork point, aligned (longest common subsequence). */
  transitions: { rows: { op: 'same' | 'source' | 'fork'; text: string }[]; truncated: boolean };
}

const MAX_MESSAGES = 40;
const MAX_TRANSITIONS = 400;
const TEXT = 400;

function excerpt(m: Message): string {
  const text = textOf(m.content) || JSON.stringify(m.content);
  return text.length > TEXT ? `${text.slice(0, TEXT - 1)}…` : text;
}

/** The content a record carries, for showing what a fork changed; null when it carries none. */
function contentOf(r: LogRecord | undefined): string | null {
  if (!r) return null;
  switch (r.type) {
    case 'model.responded':
      return excerpt({ role: 'assistant', content: r.data.response.content });
    case 'tool.finished':
      return excerpt({ role: 'user', content: r.data.result.content as Message['content'] });
    case 'user.message':
      return excerpt(r.data.message);
    case 'message.appended':
      return r.data.message ? excerpt(r.data.message) : null;
    default:
      return null;
  }
}

function side(
  records: readonly LogRecord[],
  seq: number,
  final: SessionState,
  atFork: SessionState,
): ForkSide {
  const after = records.filter((r) => r.seq > seq);
  const runs = [...final.runs.view(), ...(final.currentRun ? [final.currentRun] : [])].filter(
    (r) => r.endedSeq === null || r.endedSeq > seq,
  );
  return {
    session: final.id ?? records[0]?.session ?? '',
    lastSeq: final.lastSeq,
    records: after.length,
    transitions: after.filter((r) => r.type === 'transition').length,
    runs: runs.map((r) => ({ status: r.status, reason: r.reason, turns: r.turns })),
    usage: {
      input: final.usage.inputTokens - atFork.usage.inputTokens,
      output: final.usage.outputTokens - atFork.usage.outputTokens,
      costUsd: final.usage.costUsd - atFork.usage.costUsd,
    },
  };
}

function foldUpTo(records: readonly LogRecord[], seq: number): { atFork: SessionState; final: SessionState } {
  let s = emptySessionState();
  let atFork = s;
  for (const r of records) {
    s = evolve(s, r);
    if (r.seq === seq) atFork = s;
  }
  return { atFork, final: s };
}

/** Longest common subsequence alignment of two short lists. */
function align(a: readonly string[], b: readonly string[]): ForkDiff['transitions']['rows'] {
  const n = a.length;
  const m = b.length;
  const dp = Array.from({ length: n + 1 }, () => new Int32Array(m + 1));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      dp[i]![j] = a[i] === b[j] ? dp[i + 1]![j + 1]! + 1 : Math.max(dp[i + 1]![j]!, dp[i]![j + 1]!);
  const rows: ForkDiff['transitions']['rows'] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      rows.push({ op: 'same', text: a[i]! });
      i++;
      j++;
    } else if (j < m && (i === n || dp[i]![j + 1]! >= dp[i + 1]![j]!))
      rows.push({ op: 'fork', text: b[j++]! });
    else rows.push({ op: 'source', text: a[i++]! });
  }
  return rows;
}

/** What a record says, for comparing two logs: its type and data (not its session, run id or time). */
const sameFact = (a: LogRecord, b: LogRecord) => a.type === b.type && isDeepStrictEqual(a.data, b.data);

/**
 * Where a fork left its source and what differs after: both logs are folded with `evolve`, so
 * the histories compared are the ones replay rebuilds, whatever the records store.
 */
export function forkDiff(fork: readonly LogRecord[], source: readonly LogRecord[]): ForkDiff | null {
  const from = fork.find((r) => r.type === 'session.created')?.data.forkedFrom;
  if (!from) return null;
  const { seq } = from;
  const f = foldUpTo(fork, seq);
  const s = foldUpTo(source, seq);

  let firstDifference: ForkDiff['firstDifference'] = null;
  const bySeq = new Map(source.map((r) => [r.seq, r] as const));
  for (const r of fork) {
    if (r.seq <= seq) continue;
    const other = bySeq.get(r.seq);
    if (!other || !sameFact(other, r)) {
      const content = { source: contentOf(other), fork: contentOf(r) };
      firstDifference = {
        seq: r.seq,
        source: other ? recordNote(other) : null,
        fork: recordNote(r),
        ...(content.source !== null || content.fork !== null ? { content } : {}),
      };
      break;
    }
  }
  if (!firstDifference) {
    const extra = source.find((r) => r.seq > Math.max(seq, f.final.lastSeq));
    if (extra) firstDifference = { seq: extra.seq, source: recordNote(extra), fork: null };
  }

  const hs = s.final.messages.view();
  const hf = f.final.messages.view();
  let common = 0;
  while (common < hs.length && common < hf.length && isDeepStrictEqual(hs[common], hf[common])) common++;
  const own = (h: readonly Message[]) =>
    h
      .slice(common, common + MAX_MESSAGES)
      .map((m, k) => ({ n: common + k + 1, role: m.role, text: excerpt(m) }));

  const keys = (records: readonly LogRecord[]) =>
    records.flatMap((r) =>
      r.type === 'transition' && r.seq > seq ? [`${r.data.from} → ${r.data.to}: ${r.data.reason}`] : [],
    );
  const ks = keys(source);
  const kf = keys(fork);
  return {
    source: from.session,
    seq,
    at: { state: f.atFork.currentRun?.state ?? null, messages: f.atFork.messages.length },
    firstDifference,
    sides: { source: side(source, seq, s.final, s.atFork), fork: side(fork, seq, f.final, f.atFork) },
    messages: {
      common,
      source: own(hs),
      fork: own(hf),
      more: hs.length - common > MAX_MESSAGES || hf.length - common > MAX_MESSAGES,
    },
    transitions: {
      rows: align(ks.slice(0, MAX_TRANSITIONS), kf.slice(0, MAX_TRANSITIONS)),
      truncated: ks.length > MAX_TRANSITIONS || kf.length > MAX_TRANSITIONS,
    },
  };
}
