import type { EventStore, SessionInfo } from '../../store/types.ts';
import { out } from '../io.ts';
import type { ChatTerminal } from './terminal.ts';

const PICK_LIMIT = 20;

/** `5s`, `12m`, `3h`, `2d` ago. */
export function age(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.round(s / 60)}m`;
  if (s < 86_400) return `${Math.round(s / 3600)}h`;
  return `${Math.round(s / 86_400)}d`;
}

/** The sessions a person resumes: not sub-agents', newest first, those of `cwd` (the session's own directory). */
export async function sessionsOf(store: EventStore, cwd: string): Promise<SessionInfo[]> {
  const rows = (await store.list()).filter((r) => r.parent === null).sort((a, b) => b.updated - a.updated);
  const mine: SessionInfo[] = [];
  for (const row of rows) {
    for await (const r of store.read(row.id, { fromSeq: 1, toSeq: 1 })) {
      if (r.type === 'session.created' && r.data.cwd === cwd) mine.push(row);
    }
  }
  return mine;
}

/**
 * `--resume` without an id: the recent sessions of this directory, numbered (title, age,
 * status); the user types a number (Enter alone takes the newest). Null: none, or cancelled.
 */
export async function pickSession(
  term: ChatTerminal,
  store: EventStore,
  cwd: string,
  now: number,
): Promise<string | null> {
  const rows = (await sessionsOf(store, cwd)).slice(0, PICK_LIMIT);
  if (rows.length === 0) {
    out('no session of this directory to resume: starting a new one');
    return null;
  }
  out('recent sessions of this directory:');
  rows.forEach((r, i) => {
    const title = r.title ? JSON.stringify(r.title.slice(0, 60)) : '(untitled)';
    out(`  ${String(i + 1).padStart(2)}. ${title}  ${age(now - r.updated)} ago  ${r.status}  ${r.id}`);
  });
  for (;;) {
    const read = await term.readLine(`resume which (1-${rows.length}, Enter: 1, Esc: new session)? `, {
      escape: true,
    });
    if (read.kind !== 'line') return null;
    const text = read.text.trim();
    const n = text === '' ? 1 : Number(text);
    if (Number.isInteger(n) && n >= 1 && n <= rows.length) return rows[n - 1]!.id;
    const byId = rows.find((r) => r.id === text);
    if (byId) return byId.id;
    out(`not one of 1-${rows.length}`);
  }
}
