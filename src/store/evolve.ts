import { AppendOnlyList } from '../lib/appendOnlyList.ts';
import { addUsage, textOf, ZERO_USAGE } from '../model/messages.ts';
import type { LogRecord } from './records.ts';
import type { SessionState } from './sessionState.ts';

/**
 * The fold of the log into session state. Pure: it never mutates `state` (lists are
 * AppendOnlyLists, so sharing is safe) and reads nothing but its arguments. O(1) per record
 * except compaction, which replaces the history.
 */
export function evolve(state: SessionState, record: LogRecord): SessionState {
  const s: SessionState = { ...state, lastSeq: record.seq, lastAt: record.at };
  switch (record.type) {
    case 'session.created':
      s.id = record.session;
      s.createdAt = record.at;
      s.title = record.data.title ?? s.title;
      s.cwd = record.data.cwd ?? null;
      s.forkedFrom = record.data.forkedFrom ?? null;
      return s;
    case 'run.started':
      s.id ??= record.session;
      s.currentRun = {
        id: record.run ?? '',
        startedSeq: record.seq,
        endedSeq: null,
        status: 'running',
        reason: null,
        turns: 0,
        usage: ZERO_USAGE,
        state: 'building',
        config: record.data.config,
        resumedFrom: record.data.resumedFrom ?? null,
      };
      s.modelInFlight = false;
      s.toolsInFlight = {};
      return s;
    case 'user.message':
      s.messages = s.messages.append(record.data.message);
      s.unappendedResults = {};
      if (!s.title) s.title = textOf(record.data.message.content).replace(/\s+/g, ' ').trim().slice(0, 80);
      return s;
    case 'message.appended':
      s.messages = s.messages.append(record.data.message);
      s.unappendedResults = {};
      return s;
    case 'model.requested':
      s.modelInFlight = true;
      return s;
    case 'model.responded':
      s.modelInFlight = false;
      s.usage = addUsage(s.usage, record.data.response.usage);
      if (s.currentRun)
        s.currentRun = { ...s.currentRun, usage: addUsage(s.currentRun.usage, record.data.response.usage) };
      return s;
    case 'model.failed':
      s.modelInFlight = false;
      return s;
    case 'backoff.scheduled':
    case 'hook.decided':
    case 'abort.requested':
    case 'actor.failed':
      return s;
    case 'tool.started':
      s.toolsInFlight = {
        ...s.toolsInFlight,
        [record.data.toolUseId]: {
          toolUseId: record.data.toolUseId,
          name: record.data.name,
          input: record.data.input,
          readOnly: record.data.readOnly,
          index: record.data.index,
        },
      };
      return s;
    case 'tool.finished': {
      if (record.data.toolUseId in s.toolsInFlight) {
        const { [record.data.toolUseId]: _done, ...rest } = s.toolsInFlight;
        s.toolsInFlight = rest;
      }
      s.unappendedResults = { ...s.unappendedResults, [record.data.toolUseId]: record.data.result };
      const facts = record.data.filesRead;
      if (facts?.length) {
        const next = { ...s.filesRead };
        for (const f of facts) next[f.path] = { ...f, seq: record.seq };
        s.filesRead = next;
      }
      return s;
    }
    case 'permission.decided':
      if (record.data.resolved === 'deny') {
        s.denials = s.denials.append({
          seq: record.seq,
          toolUseId: record.data.toolUseId,
          name: record.data.name,
          by: record.data.by,
          message: record.data.message,
        });
      }
      return s;
    case 'compaction.finished':
      if (record.data.ok) {
        s.messages = AppendOnlyList.from(record.data.messages);
        s.compactions = state.compactions + 1;
        if (record.data.mode === 'auto') s.autoCompactFailures = 0;
      } else if (record.data.mode === 'auto') {
        s.autoCompactFailures = state.autoCompactFailures + 1;
      }
      return s;
    case 'transition':
      s.transitions = state.transitions + 1;
      if (s.currentRun) {
        const turns =
          record.data.reason === 'tool_result_continuation' ||
          record.data.reason === 'auto_compact' ||
          record.data.reason === 'pause_turn_continuation';
        s.currentRun = {
          ...s.currentRun,
          state: record.data.to,
          turns: s.currentRun.turns === 0 ? 1 : s.currentRun.turns + (turns ? 1 : 0),
        };
      }
      return s;
    case 'run.ended': {
      const run = s.currentRun;
      if (run) {
        s.runs = s.runs.append({
          ...run,
          endedSeq: record.seq,
          status: record.data.status,
          reason: record.data.reason,
          turns: record.data.turns,
        });
      }
      s.currentRun = null;
      s.modelInFlight = false;
      s.toolsInFlight = {};
      s.unappendedResults = {};
      return s;
    }
    default: {
      const never: never = record;
      throw new Error(`evolve: unhandled record ${JSON.stringify(never)}`);
    }
  }
}

/** Folds records into state. */
export function fold(records: Iterable<LogRecord>, initial: SessionState): SessionState {
  let s = initial;
  for (const r of records) s = evolve(s, r);
  return s;
}
