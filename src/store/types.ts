import type { LogRecord, RunStatus } from './records.ts';

export interface ReadRange {
  /** First seq to return (inclusive, default 1). */
  fromSeq?: number;
  /** Last seq to return (inclusive, default the end). */
  toSeq?: number;
}

export interface AppendOptions {
  /** The seq of the last record the writer saw; 0 for a new session. Mismatch → ConcurrencyError. */
  expectedSeq: number;
  /**
   * `false`: the records are appended (readers, other processes, see them) but the call does not
   * wait for the disk; the next durable append makes them durable too. For facts no effect
   * depends on. Default `true`; a store that cannot tell the difference treats every append as
   * durable.
   */
  durable?: boolean;
}

/** One row of the session catalog. */
export interface SessionInfo {
  id: string;
  title: string;
  created: number;
  updated: number;
  /**
   * The last run's status; `idle` before any run. `running` while a run is open and (file store)
   * its writer lives; `interrupted` when the last run never ended and nothing runs it: its writer
   * died (no live process holds the session's lock), or it was copied open into a fork. `run
   * --resume` closes it and goes on.
   */
  status: RunStatus | 'running' | 'interrupted' | 'idle';
  lastSeq: number;
  forkedFrom: { session: string; seq: number } | null;
  /** A sub-agent's session: the parent session, the `Task` call and the agent that started it. */
  parent: { session: string; toolUseId: string | null; agent: string } | null;
  /** Stores with a run queue (PostgreSQL): the session's queued run and the worker holding it. */
  job?: SessionJob;
}

/** A session's entry in a store's run queue. */
export interface SessionJob {
  /** `held`: a process outside the queue (`run`, `run --resume`, `approve`) holds the session's lease. */
  state: 'queued' | 'claimed' | 'held' | 'parked' | 'done';
  /** The worker (or process) holding the lease, while `claimed` or `held`. */
  worker: string | null;
  /** When that lease runs out (ms since the epoch). */
  leaseExpires: number | null;
  /** Why the run could not start (`done` without a run: its prompt is still in the queue row). */
  startError?: string;
}

/**
 * The one persistence interface. Records arrive fully formed (seq assigned by the writer);
 * the store validates and persists them and rejects a batch whose first seq does not follow.
 * One `append` call is one durable commit.
 */
export interface EventStore {
  append(session: string, records: readonly LogRecord[], options: AppendOptions): Promise<void>;
  read(session: string, range?: ReadRange): AsyncIterable<LogRecord>;
  /**
   * `read`, synchronously: the same records, checks and errors, pulled one at a time (verify pulls
   * them as its re-drive needs them, so a long log is never held whole). Optional: a store whose
   * reads must wait (PostgreSQL) leaves it out, and callers read with `read`.
   */
  readSync?(session: string, range?: ReadRange): Iterable<LogRecord>;
  list(): Promise<SessionInfo[]>;
  /** Last seq of a session (0 when it has no records); throws SessionNotFoundError when unknown. */
  lastSeq(session: string): Promise<number>;
  exists(session: string): Promise<boolean>;
  /**
   * Writes a whole new stream so that it appears complete or not at all (a fork). Optional: a store
   * without it gets one `append(session, records, { expectedSeq: 0 })`, atomic where appends are.
   */
  create?(session: string, records: AsyncIterable<LogRecord> | Iterable<LogRecord>): Promise<void>;
  /**
   * Replaces a whole existing stream (whose last seq is `expectedSeq`) so that readers see the old
   * one or the new one, never a mix, and a process killed half-way changes nothing. Optional: a
   * store without it replaces with `remove` then one `append` (each atomic on its own).
   */
  replace?(
    session: string,
    records: AsyncIterable<LogRecord> | Iterable<LogRecord>,
    expectedSeq: number,
  ): Promise<void>;
  /**
   * Deletes a whole session: its stream and its catalog row (never part of one). Optional: a
   * store that cannot omits it. `reloop import --force` uses it to replace an import.
   */
  remove?(session: string): Promise<void>;
  /**
   * Where a session's log is, for people and for hooks (`transcript_path`): the file store's file
   * path. Optional: a store without one leaves it out.
   */
  locate?(session: string): string;
  close(): Promise<void>;
  /**
   * Every record of `session` with seq > `afterSeq`, in order, as it lands — first those already
   * there, then each new one as soon as it is committed — until the signal aborts or the store
   * closes; then the iteration just ends (no error). The session need not exist yet. A record
   * that fails validation ends it with the store's typed error. Optional: a store that cannot
   * watch leaves it out, and callers fall back to reading.
   */
  follow?(session: string, options: { afterSeq: number; signal: AbortSignal }): AsyncIterable<LogRecord>;
}
