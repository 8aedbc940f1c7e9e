import type { IdGenerator } from '../runtime/determinism.ts';
import { nanoidIds } from '../runtime/determinism.ts';
import { SessionNotFoundError } from '../store/errors.ts';
import type { LogRecord } from '../store/records.ts';
import type { EventStore } from '../store/types.ts';
import { createWholeSession } from '../store/wholeStream.ts';

export class ForkPointError extends Error {
  readonly code = 'FORK_POINT';
  constructor(
    readonly session: string,
    readonly seq: number,
    readonly lastSeq: number,
  ) {
    super(`cannot fork ${session} at seq ${seq}: the log has seqs 1..${lastSeq}`);
    this.name = 'ForkPointError';
  }
}

/**
 * A new session whose log is the source's prefix up to `seq`, marked as forked from it.
 * The source is only read. A fork taken mid-run resumes like a crashed session would. The copy
 * is written whole (`EventStore.create`: it appears complete or not at all, even if the process is
 * killed half-way) and sealed anew by the store, since every record now names the new session.
 */
export async function forkSession(
  store: EventStore,
  source: string,
  seq: number,
  ids: IdGenerator = nanoidIds,
): Promise<string> {
  if (!(await store.exists(source))) throw new SessionNotFoundError(source);
  const last = await store.lastSeq(source);
  if (!Number.isInteger(seq) || seq < 1 || seq > last) throw new ForkPointError(source, seq, last);
  const id = ids('session');
  async function* copy(): AsyncGenerator<LogRecord> {
    for await (const r of store.read(source, { toSeq: seq })) {
      const moved = { ...r, session: id } as LogRecord;
      if (moved.type === 'session.created') {
        // A fork is its own root: it was started by no Task call, even when its source was.
        const { parent: _parent, ...data } = moved.data;
        moved.data = { ...data, forkedFrom: { session: source, seq } };
      }
      yield moved;
    }
  }
  await createWholeSession(store, id, copy());
  return id;
}
