import type { LogRecord } from './records.ts';
import type { SessionInfo } from './types.ts';

/** Folds appended records into the catalog row: the store derives the catalog, it never asks the machine. */
export function updateCatalogRow(row: SessionInfo | undefined, records: readonly LogRecord[]): SessionInfo {
  const first = records[0];
  let next: SessionInfo = row ?? {
    id: first?.session ?? '',
    title: '',
    created: first?.at ?? 0,
    updated: first?.at ?? 0,
    status: 'idle',
    lastSeq: 0,
    forkedFrom: null,
    parent: null,
  };
  // One copy per batch, not per record: appends stay O(batch). Field by field: a spread costs
  // V8 ~3× as much here (bench/micro/writer.ts).
  next = {
    id: next.id,
    title: next.title,
    created: next.created,
    updated: next.updated,
    status: next.status,
    lastSeq: next.lastSeq,
    forkedFrom: next.forkedFrom,
    parent: next.parent,
  };
  for (const r of records) {
    next.updated = r.at;
    next.lastSeq = r.seq;
    switch (r.type) {
      case 'session.created':
        next.title = r.data.title ?? next.title;
        next.created = r.at;
        next.forkedFrom = r.data.forkedFrom ?? null;
        next.parent = r.data.parent
          ? { session: r.data.parent.session, toolUseId: r.data.parent.toolUseId, agent: r.data.parent.agent }
          : null;
        break;
      case 'user.message':
        if (!next.title) {
          const c = r.data.message.content;
          const text = typeof c === 'string' ? c : c.map((b) => (b.type === 'text' ? b.text : '')).join(' ');
          next.title = text.replace(/\s+/g, ' ').trim().slice(0, 80);
        }
        break;
      case 'run.started':
        // A run copied into a fork is open in the log but nobody runs it: the fork resumes it.
        next.status = next.forkedFrom && r.seq <= next.forkedFrom.seq ? 'interrupted' : 'running';
        break;
      case 'run.ended':
        next.status = r.data.status;
        break;
      default:
        break;
    }
  }
  return next;
}
