import { updateCatalogRow } from './catalogRow.ts';
import { catalogSorted } from './catalogSort.ts';
import { ConcurrencyError, SessionNotFoundError } from './errors.ts';
import type { LogRecord } from './records.ts';
import { sealRecords } from './seal.ts';
import type { AppendOptions, EventStore, ReadRange, SessionInfo } from './types.ts';
import { checkContiguous, validateRecord } from './validate.ts';
import { Wakeup } from './wakeup.ts';

/**
 * One stream. Records are sealed when first read, not when appended: the seal is a pure function
 * of the records, so nobody can tell through the interface, and the loop benchmarks that run on
 * this store measure the loop rather than the hashing a durable store does anyway.
 */
interface Stream {
  records: LogRecord[];
  sealed: number;
  head: string | undefined;
}

/** In-memory store for tests and benchmarks. Same contract as the file store, nothing durable. */
export class MemoryEventStore implements EventStore {
  private readonly streams = new Map<string, Stream>();
  private readonly catalog = new Map<string, SessionInfo>();
  private readonly followers = new Map<string, Set<Wakeup>>();
  private readonly closing = new AbortController();
  /** Validation on write can be turned off only by benchmarks measuring the machine alone. */
  constructor(private readonly options: { validate?: boolean } = {}) {}

  async append(
    session: string,
    records: readonly LogRecord[],
    { expectedSeq }: AppendOptions,
  ): Promise<void> {
    const stream = this.streams.get(session) ?? { records: [], sealed: 0, head: undefined };
    const length = stream.records.length;
    if (length !== expectedSeq) throw new ConcurrencyError(session, expectedSeq, length);
    if (records.length === 0) return;
    const where = { session };
    const valid = this.options.validate === false ? records : records.map((r) => validateRecord(r, where));
    checkContiguous(session, valid, expectedSeq);
    for (const r of valid) stream.records.push(r);
    this.streams.set(session, stream);
    this.catalog.set(session, updateCatalogRow(this.catalog.get(session), valid));
    for (const w of this.followers.get(session) ?? []) w.poke();
  }

  async *follow(
    session: string,
    { afterSeq, signal }: { afterSeq: number; signal: AbortSignal },
  ): AsyncIterable<LogRecord> {
    const stop = AbortSignal.any([signal, this.closing.signal]);
    const wake = new Wakeup();
    const set = this.followers.get(session) ?? new Set<Wakeup>();
    set.add(wake);
    this.followers.set(session, set);
    try {
      let next = afterSeq + 1;
      while (!stop.aborted) {
        const stream = this.streams.get(session);
        if (stream && next <= stream.records.length) {
          if (next > stream.sealed) seal(stream, next);
          yield stream.records[next - 1]!;
          next++;
        } else {
          await wake.wait(stop);
        }
      }
    } finally {
      set.delete(wake);
      if (set.size === 0) this.followers.delete(session);
    }
  }

  async *read(session: string, range: ReadRange = {}): AsyncIterable<LogRecord> {
    const stream = this.streams.get(session);
    if (!stream) throw new SessionNotFoundError(session);
    const length = stream.records.length;
    const from = Math.max(1, range.fromSeq ?? 1);
    const to = Math.min(length, range.toSeq ?? length);
    if (to > stream.sealed) seal(stream, to);
    for (let seq = from; seq <= to; seq++) yield stream.records[seq - 1]!;
  }

  async list(): Promise<SessionInfo[]> {
    return catalogSorted([...this.catalog.values()]);
  }

  async lastSeq(session: string): Promise<number> {
    const stream = this.streams.get(session);
    if (!stream) throw new SessionNotFoundError(session);
    return stream.records.length;
  }

  async exists(session: string): Promise<boolean> {
    return this.streams.has(session);
  }

  async remove(session: string): Promise<void> {
    this.streams.delete(session);
    this.catalog.delete(session);
  }

  async close(): Promise<void> {
    this.closing.abort();
  }
}

function seal(stream: Stream, upTo: number): void {
  const batch = sealRecords(stream.head, stream.records.slice(stream.sealed, upTo));
  for (let i = 0; i < batch.records.length; i++) stream.records[stream.sealed + i] = batch.records[i]!;
  stream.sealed = upTo;
  stream.head = batch.head;
}
