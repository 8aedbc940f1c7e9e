import { defaultRedactor, type Redactor } from '../lib/secrets.ts';
import { evolve } from '../store/evolve.ts';
import { CURRENT_SCHEMA_VERSION, type DraftRecord, type LogRecord } from '../store/records.ts';
import type { SessionState } from '../store/sessionState.ts';
import type { EventStore } from '../store/types.ts';
import { validateRecord } from '../store/validate.ts';

export type RecordListener = (record: LogRecord, state: SessionState) => void;

/**
 * The single writer of one session's stream. Records are numbered and folded into the live
 * state as they are added (so the session's state is always the fold of its log), and made
 * durable together by `commit()`: the runtime calls it only before an effect (write-ahead),
 * so a tool round costs two commits, not one per record (one durable for read-only calls).
 */
export class SessionWriter {
  private pending: LogRecord[] = [];
  private seq: number;
  private committedSeq: number;
  private chain: Promise<void> = Promise.resolve();
  private readonly listeners = new Set<RecordListener>();

  constructor(
    readonly sessionId: string,
    private readonly store: EventStore,
    private current: SessionState,
    /** Keeps the runtime's secrets out of every record (src/lib/secrets.ts). */
    private readonly redactor: Redactor = defaultRedactor(),
  ) {
    this.seq = current.lastSeq;
    this.committedSeq = current.lastSeq;
  }

  get state(): SessionState {
    return this.current;
  }

  get lastSeq(): number {
    return this.seq;
  }

  get durableSeq(): number {
    return this.committedSeq;
  }

  /**
   * Redacts, validates and folds the record, and only then gives it its seq: a record refused on
   * the way (a value nested too deep, a field of the wrong shape, a fold that throws) throws here
   * and leaves the writer as it was, so the next record takes the seq this one would have had.
   * (Numbering first once left a seq gap that failed every later append: issue 18.)
   */
  add(draft: DraftRecord): LogRecord {
    const record = {
      v: CURRENT_SCHEMA_VERSION,
      seq: this.seq + 1,
      at: draft.at,
      session: this.sessionId,
      run: draft.run,
      type: draft.type,
      // The one place every record passes: tool output, hook reasons, prompts, model replies.
      data: this.redactor.redact(draft.data),
    } as LogRecord;
    // What the store would refuse at commit is refused now: a pending record that can never be
    // stored would fail every commit after it.
    validateRecord(record, { session: this.sessionId });
    const next = evolve(this.current, record);
    this.seq = record.seq;
    this.current = next;
    this.pending.push(record);
    if (this.listeners.size !== 0) for (const l of this.listeners) l(record, this.current);
    return record;
  }

  /**
   * Makes everything added so far durable, in one store append (`durable: false`: appended,
   * visible to readers, not waited for on disk). A failed commit rejects with the
   * store's error and keeps its records pending, in order: the log on disk stays a valid prefix,
   * and the next commit tries them again (a full disk that was cleared, a lock released) instead
   * of failing forever on the first error.
   */
  commit({ durable = true }: { durable?: boolean } = {}): Promise<void> {
    const done = this.chain.then(() => this.flush(durable));
    this.chain = done.catch(() => undefined);
    return done;
  }

  private async flush(durable: boolean): Promise<void> {
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    try {
      await this.store.append(
        this.sessionId,
        batch,
        durable ? { expectedSeq: this.committedSeq } : { expectedSeq: this.committedSeq, durable },
      );
    } catch (e) {
      this.pending = this.pending.length === 0 ? batch : batch.concat(this.pending);
      throw e;
    }
    this.committedSeq = batch[batch.length - 1]!.seq;
  }

  onRecord(listener: RecordListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
