import type { LogRecord } from './records.ts';
import type { EventStore } from './types.ts';

/**
 * A whole new session, so that it appears complete or not at all (a fork, an import, a copy):
 * `EventStore.create` where the store has it (the file store writes a temporary file and links it
 * into place), else one `append` — one transaction on PostgreSQL, atomic where appends are.
 */
export async function createWholeSession(
  store: EventStore,
  session: string,
  records: AsyncIterable<LogRecord> | Iterable<LogRecord>,
): Promise<void> {
  if (store.create) return store.create(session, records);
  return store.append(session, await collect(records), { expectedSeq: 0 });
}

/**
 * A whole existing session (last seq `expectedSeq`) replaced by `records`: `EventStore.replace`
 * where the store has it (readers see the old stream or the new one), else `remove` then one
 * `append`.
 */
export async function replaceWholeSession(
  store: EventStore,
  session: string,
  records: AsyncIterable<LogRecord> | Iterable<LogRecord>,
  expectedSeq: number,
): Promise<void> {
  if (store.replace) return store.replace(session, records, expectedSeq);
  if (!store.remove) throw new Error(`this store cannot replace session ${session}`);
  const all = await collect(records);
  await store.remove(session);
  await store.append(session, all, { expectedSeq: 0 });
}

async function collect(records: AsyncIterable<LogRecord> | Iterable<LogRecord>): Promise<LogRecord[]> {
  if (Array.isArray(records)) return records;
  const out: LogRecord[] = [];
  for await (const r of records) out.push(r);
  return out;
}
