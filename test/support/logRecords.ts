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
