import type { LogRecord, RecordOf } from '../../src/store/records.ts';
import type { EventStore } from '../../src/store/types.ts';

/** Every record of one session's log, in order. */
export async function readLog(store: Pick<EventStore, 'read'>, id: string): Promise<LogRecord[]> {
  const out: LogRecord[] = [];
  for await (const r of store.read(id)) out.push(r);
  return out;
}

/** The records of one type, typed as such. */
export function recordsOf<T extends LogRecord['type']>(
  records: readonly LogRecord[],
  type: T,
): RecordOf<T>[] {
  return records.filter((r): r is RecordOf<T> => r.type === type);
}

/** Every record of one session of the store at `location` (a directory or a postgres:// URL), opened for this read. */
export async function readStoredLog(location: string, id: string): Promise<LogRecord[]> {
  const { openStore, storeLocation } = await import('../../src/store/openStore.ts');
  const store = await openStore(storeLocation(location));
  try {
    return await readLog(store, id);
  } finally {
    await store.close();
  }
}
