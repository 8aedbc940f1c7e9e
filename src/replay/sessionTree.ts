import type { LogRecord } from '../store/records.ts';
import type { EventStore, SessionInfo } from '../store/types.ts';
import { loadRecords } from './loadSession.ts';

/** One session of a tree, with the session that started it (null for the root). */
export interface TreeMember {
  session: string;
  parent: string | null;
  records: LogRecord[];
}

/**
 * A session and every sub-agent below it, the root first, then breadth first; each session's
 * children in the order its log started them (`child.started`), then those that only name it
 * in their own `parent` link (an imported sub-agent has no `child.started`), oldest first.
 * `rootRecords` lets a caller pass the root's records already read (or cut at a seq).
 */
export async function sessionTree(
  store: EventStore,
  root: string,
  rootRecords?: LogRecord[],
): Promise<TreeMember[]> {
  const linked = new Map<string, SessionInfo[]>();
  for (const row of await store.list()) {
    if (!row.parent) continue;
    const list = linked.get(row.parent.session) ?? [];
    list.push(row);
    linked.set(row.parent.session, list);
  }
  const out: TreeMember[] = [];
  const seen = new Set<string>([root]);
  const queue: { session: string; parent: string | null; records?: LogRecord[] }[] = [
    { session: root, parent: null, records: rootRecords },
  ];
  while (queue.length > 0) {
    const next = queue.shift()!;
    const records = next.records ?? (await loadRecords(store, next.session));
    out.push({ session: next.session, parent: next.parent, records });
    const children: string[] = [];
    for (const r of records) if (r.type === 'child.started') children.push(r.data.child);
    const others = [...(linked.get(next.session) ?? [])].sort(
      (a, b) => a.created - b.created || a.id.localeCompare(b.id),
    );
    for (const row of others) children.push(row.id);
    for (const child of children) {
      // A child.started whose child was never written (a crash before it) has no log to show.
      if (seen.has(child) || !(await store.exists(child))) continue;
      seen.add(child);
      queue.push({ session: child, parent: next.session });
    }
  }
  return out;
}
