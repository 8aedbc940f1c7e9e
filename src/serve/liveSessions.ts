import type { LogRecord } from '../store/records.ts';
import type { EventStore } from '../store/types.ts';
import type { Chart } from '../viz/edgeCatalog.ts';
import { ViewerIndex } from '../viz/viewerIndex.ts';

/**
 * The viewer's index of one session, kept up to date by following the store: built once from
 * the log, then one record at a time as records land, so a live page asks only for what is new
 * and the server never re-reads the whole log.
 */
class SessionFeed {
  readonly index: ViewerIndex;
  private lastSeq = 0;
  /** The session's `child.started` records: which sub-agents a page of it must hold. */
  private readonly starts: LogRecord[] = [];
  /** Stops this feed's follow (it is evicted, or the server stops). */
  readonly stop = new AbortController();
  private waiters: { seq: number; resolve: () => void }[] = [];
  private failure: unknown;

  constructor(
    store: EventStore & Required<Pick<EventStore, 'follow'>>,
    readonly session: string,
    chart: Chart,
    signal: AbortSignal,
  ) {
    this.index = new ViewerIndex(chart);
    const both = AbortSignal.any([signal, this.stop.signal]);
    void (async () => {
      try {
        for await (const r of store.follow(session, { afterSeq: 0, signal: both })) this.push(r);
      } catch (e) {
        this.failure = e;
      } finally {
        // Nothing more will come: nobody waits for it.
        for (const w of this.waiters) w.resolve();
        this.waiters = [];
      }
    })();
  }

  private push(r: LogRecord): void {
    this.index.push(r);
    if (r.type === 'child.started') this.starts.push(r);
    this.lastSeq = r.seq;
    const ready = this.waiters.filter((w) => w.seq <= r.seq);
    if (ready.length === 0) return;
    this.waiters = this.waiters.filter((w) => w.seq > r.seq);
    for (const w of ready) w.resolve();
  }

  /** Resolves once the index holds record `seq` (or the feed has stopped, or after `ms`). */
  async reach(seq: number, ms: number): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.lastSeq >= seq) return;
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      this.waiters.push({ seq, resolve });
      timer = setTimeout(resolve, ms);
    });
    clearTimeout(timer);
    if (this.failure) throw this.failure;
  }

  childStarts(): LogRecord[] {
    return [...this.starts];
  }

  /** Index of the record with this seq (seqs are contiguous from the log's first). */
  indexAfter(seq: number): number {
    const first = this.lastSeq - this.index.length + 1;
    return Math.max(0, Math.min(this.index.length, seq - first + 1));
  }
}

/**
 * Feeds kept at once. Each holds its session's whole index (the size of its log, and more): pages
 * of many sessions, asked one after another (or by a page elsewhere, issue 18), must not pile up.
 */
const MAX_FEEDS = 8;

/** One feed per session a page has looked at recently (the least recently used is dropped). */
export class LiveSessions {
  private readonly feeds = new Map<string, SessionFeed>();
  private readonly closing = new AbortController();

  constructor(
    private readonly store: EventStore & Required<Pick<EventStore, 'follow'>>,
    private readonly chart: Chart,
  ) {}

  /** The session's index, holding at least every record committed when this was called. */
  async current(session: string, upToSeq?: number): Promise<SessionFeed> {
    let feed = this.feeds.get(session);
    if (feed) {
      this.feeds.delete(session); // re-inserted last: the map's order is the order of use
    } else {
      feed = new SessionFeed(this.store, session, this.chart, this.closing.signal);
    }
    this.feeds.set(session, feed);
    for (const [id, old] of this.feeds) {
      if (this.feeds.size <= MAX_FEEDS) break;
      this.feeds.delete(id);
      old.stop.abort();
    }
    await feed.reach(upToSeq ?? (await this.store.lastSeq(session)), 30_000);
    return feed;
  }

  close(): void {
    this.closing.abort();
  }
}
