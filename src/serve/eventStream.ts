import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EventStore } from '../store/types.ts';
import { drained, MAX_BUFFERED, SLOW_CLIENT_MS } from './limits.ts';

/** An SSE comment now and then, so proxies and browsers keep a quiet stream open. */
const HEARTBEAT_MS = 15_000;

export interface StreamLimits {
  /** Bytes that may wait for the client before the stream waits for it (limits.ts MAX_BUFFERED). */
  maxBuffered: number;
  /** How long a client that stopped reading is waited for (SLOW_CLIENT_MS). */
  slowClientMs: number;
}

/**
 * One client's event stream: every record after `after`, then each as it lands. What it holds is
 * bounded: the store's follow reads in batches, a record is written only once the one before it
 * has left (or fits in `maxBuffered`), and a client that stops reading is waited for
 * `slowClientMs`, then closed — its browser's EventSource reconnects with Last-Event-ID and loses
 * nothing. Every wait ends when the client goes or `stopping` aborts (the server stops). Says how
 * the stream ended: `slow` when it was closed on a client that stopped reading.
 */
export async function streamEvents(
  store: EventStore & Required<Pick<EventStore, 'follow'>>,
  session: string,
  after: number,
  req: IncomingMessage,
  res: ServerResponse,
  stopping: AbortSignal,
  limits: StreamLimits = { maxBuffered: MAX_BUFFERED, slowClientMs: SLOW_CLIENT_MS },
): Promise<'ended' | 'slow'> {
  const gone = new AbortController();
  const end = () => gone.abort();
  req.on('close', end);
  res.on('close', end);
  const signal = AbortSignal.any([gone.signal, stopping]);
  res.write(': reloop session events\n\n');
  // Only a stream with nothing waiting gets a heartbeat: a stalled client is not fed more.
  const heartbeat = setInterval(() => {
    if (res.writableLength === 0) res.write(': keep-alive\n\n');
  }, HEARTBEAT_MS);
  heartbeat.unref();
  try {
    for await (const r of store.follow(session, { afterSeq: after, signal })) {
      // A record's JSON has no raw newline: one `data:` line.
      const fits = res.write(`event: record\nid: ${r.seq}\ndata: ${JSON.stringify(r)}\n\n`);
      if (fits && res.writableLength <= limits.maxBuffered) continue;
      if (!(await drained(res, signal, limits.slowClientMs))) {
        // Too slow, gone, or the server stops: what it had waiting is dropped with it.
        const slow = !signal.aborted && !res.destroyed;
        res.destroy();
        return slow ? 'slow' : 'ended';
      }
    }
    return 'ended';
  } finally {
    clearInterval(heartbeat);
    req.off('close', end);
    res.off('close', end);
    if (!res.destroyed) res.end();
  }
}
