import { SessionNotFoundError } from '../store/errors.ts';
import type { LogRecord, ParentLink } from '../store/records.ts';
import type { EventStore } from '../store/types.ts';
import type { TraceOptions } from './sessionTrace.ts';
import type { SpanSink } from './spanData.ts';
import { TraceTree } from './traceTree.ts';

export interface ExportSessionsOptions extends TraceOptions {
  /**
   * Called every `checkpointEvery` records and after each session: where the sink buffers spans
   * for a network exporter, it waits here until they are sent (so a long log is never held whole).
   */
  checkpoint?: () => Promise<void>;
  checkpointEvery?: number;
}

export interface ExportSessionsResult {
  /** Sessions whose spans were exported, in the order they were. */
  sessions: string[];
  /** Records read, ancestors read only for their links included. */
  records: number;
}

/**
 * Spans of stored sessions, after the fact: each session's log through the same translator the
 * live path uses, with the records' own times. A sub-agent's session is read after its parent's
 * (its spans join the parent's trace); a parent not asked for is read for its links only.
 */
export async function exportSessions(
  store: EventStore,
  which: readonly string[] | 'all',
  sink: SpanSink,
  options: ExportSessionsOptions = {},
): Promise<ExportSessionsResult> {
  const plan = which === 'all' ? await allSessions(store) : await withAncestors(store, which);
  const tree = new TraceTree(sink, options, Number.POSITIVE_INFINITY);
  const every = options.checkpointEvery ?? 2048;
  let records = 0;
  let sinceCheckpoint = 0;
  const exported: string[] = [];
  for (const { id, emit } of plan) {
    const trace = tree.attach(id);
    if (!emit) {
      const prior: LogRecord[] = [];
      for await (const r of store.read(id)) prior.push(r);
      records += prior.length;
      trace.prime(prior);
      continue;
    }
    /** One record on; a promise only when it is time to let the sink send what it holds. */
    const step = (r: LogRecord): Promise<void> | undefined => {
      trace.push(r);
      records++;
      if (!options.checkpoint || ++sinceCheckpoint < every) return undefined;
      sinceCheckpoint = 0;
      return options.checkpoint();
    };
    // The store's synchronous reader when it has one (the file store): no promise per record.
    // (`await` only on a promise: awaiting undefined still costs a microtask per record.)
    if (store.readSync) {
      for (const r of store.readSync(id)) {
        const wait = step(r);
        if (wait) await wait;
      }
    } else {
      for await (const r of store.read(id)) {
        const wait = step(r);
        if (wait) await wait;
      }
    }
    exported.push(id);
    await options.checkpoint?.();
  }
  return { sessions: exported, records };
}

interface Planned {
  id: string;
  /** False: an ancestor read only so its children find their parent's runs and calls. */
  emit: boolean;
}

/** Every session of the store, each parent before its children. */
async function allSessions(store: EventStore): Promise<Planned[]> {
  const rows = await store.list();
  const parentOf = new Map(rows.map((r) => [r.id, r.parent?.session ?? null]));
  return byDepth(
    rows.map((r) => r.id),
    (id) => parentOf.get(id) ?? null,
  ).map((id) => ({ id, emit: true }));
}

/** The sessions asked for, after the ancestors they need (read, not exported, unless asked for). */
async function withAncestors(store: EventStore, ids: readonly string[]): Promise<Planned[]> {
  const parentOf = new Map<string, string | null>();
  const visit = async (id: string, asked: boolean): Promise<void> => {
    if (parentOf.has(id)) return;
    const link = await linkOf(store, id, asked);
    parentOf.set(id, link?.session ?? null);
    if (link) await visit(link.session, false);
  };
  for (const id of ids) await visit(id, true);
  const asked = new Set(ids);
  return byDepth([...parentOf.keys()], (id) => parentOf.get(id) ?? null).map((id) => ({
    id,
    emit: asked.has(id),
  }));
}

/** A session's parent link; an ancestor that is gone leaves its children to their own traces. */
async function linkOf(store: EventStore, id: string, asked: boolean): Promise<ParentLink | null> {
  try {
    for await (const r of store.read(id, { toSeq: 1 })) {
      return r.type === 'session.created' ? (r.data.parent ?? null) : null;
    }
    if (asked) throw new SessionNotFoundError(id);
    return null;
  } catch (e) {
    if (!asked && e instanceof SessionNotFoundError) return null;
    throw e;
  }
}

/** Ids ordered so that every parent comes before its children (stable otherwise). */
function byDepth(ids: readonly string[], parentOf: (id: string) => string | null): string[] {
  const known = new Set(ids);
  const depth = new Map<string, number>();
  const depthOf = (id: string, seen: Set<string>): number => {
    const d = depth.get(id);
    if (d !== undefined) return d;
    const p = parentOf(id);
    // A cycle (a corrupt link) or a parent outside the set: treated as a root.
    const value = p !== null && known.has(p) && !seen.has(p) ? depthOf(p, seen.add(id)) + 1 : 0;
    depth.set(id, value);
    return value;
  };
  return ids
    .map((id, i) => ({ id, i, d: depthOf(id, new Set()) }))
    .sort((a, b) => a.d - b.d || a.i - b.i)
    .map((x) => x.id);
}
