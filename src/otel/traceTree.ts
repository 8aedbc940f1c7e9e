import type { LogRecord } from '../store/records.ts';
import { type SessionLookup, SessionTrace, type TraceOptions } from './sessionTrace.ts';
import type { SpanSink } from './spanData.ts';

/**
 * The translators of every session one exporter has seen, so a sub-agent's spans find its
 * parent's trace and `Task` call. Live that is every session of the process sharing a tracer
 * provider (a parent and the children it starts); after the fact, every session read, parents
 * before their children. Sessions without an open run are forgotten past `limit` (a worker runs
 * sessions for days); one reopened later is primed from its log again.
 */
export class TraceTree implements SessionLookup {
  private readonly sessions = new Map<string, SessionTrace>();

  constructor(
    readonly sink: SpanSink,
    readonly options: TraceOptions = {},
    private readonly limit = 10_000,
  ) {}

  get(session: string): SessionTrace | undefined {
    return this.sessions.get(session);
  }

  /** A fresh translator for `session`, primed with the records written before it attached. */
  attach(session: string, prior: Iterable<LogRecord> = []): SessionTrace {
    const trace = new SessionTrace(session, this.sink, this, this.options);
    trace.prime(prior);
    this.sessions.delete(session);
    this.sessions.set(session, trace);
    this.evict();
    return trace;
  }

  private evict(): void {
    if (this.sessions.size <= this.limit) return;
    for (const [id, t] of this.sessions) {
      if (this.sessions.size <= this.limit) return;
      if (t.openRunId === null) this.sessions.delete(id);
    }
  }
}
