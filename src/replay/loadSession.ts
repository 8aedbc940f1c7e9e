import { evolve } from '../store/evolve.ts';
import type { LogRecord } from '../store/records.ts';
import { emptySessionState, type SessionState } from '../store/sessionState.ts';
import type { EventStore } from '../store/types.ts';

/** Reads a whole stream (validated by the store) into memory, optionally up to `toSeq`. */
export async function loadRecords(store: EventStore, session: string, toSeq?: number): Promise<LogRecord[]> {
  const out: LogRecord[] = [];
  for await (const r of store.read(session, toSeq !== undefined ? { toSeq } : {})) out.push(r);
  return out;
}

/** The session as of `seq` (inclusive): the fold of its log prefix. */
export async function stateAt(store: EventStore, session: string, seq?: number): Promise<SessionState> {
  let s = emptySessionState();
  for await (const r of store.read(session, seq !== undefined ? { toSeq: seq } : {})) s = evolve(s, r);
  return s;
}
