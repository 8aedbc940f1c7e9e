import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { messageOf } from '../lib/errors.ts';
import { sessionTree } from '../replay/sessionTree.ts';
import { SessionNotFoundError } from '../store/errors.ts';
import type { LogRecord } from '../store/records.ts';
import type { EventStore } from '../store/types.ts';
import { type Chart, chartOf } from '../viz/edgeCatalog.ts';
import { forkDiff } from '../viz/forkDiff.ts';
import { type PageSession, renderViewerPage } from '../viz/html.ts';
import { indexRecords } from '../viz/viewerIndex.ts';
import { checkToken, hostOf, isLoopback } from './access.ts';
import { type StreamLimits, streamEvents } from './eventStream.ts';
import {
  drained,
  Gate,
  MAX_BUFFERED,
  MAX_CONNECTIONS,
  MAX_RENDERS,
  MAX_STREAMS,
  MAX_WAITING,
  SLOW_CLIENT_MS,
} from './limits.ts';
import { LiveSessions } from './liveSessions.ts';
import { sessionsPage } from './sessionsPage.ts';

export interface ViewerServerOptions {
  store: EventStore & Required<Pick<EventStore, 'follow'>>;
  /** Shown on the sessions page. */
  storeDir: string;
  host?: string;
  /** 0: any free port. */
  port?: number;
  chart?: Chart;
  /** Every request must carry this token (docs/cli.md, `reloop serve`); null: none needed (`--no-auth`). */
  token?: string | null;
  /** Tighter or looser bounds than limits.ts (tests use a short `slowClientMs`). */
  limits?: Partial<StreamLimits & { maxStreams: number }>;
}

/** What the server holds for its clients right now (tests assert on it). */
export interface ViewerStats {
  /** Open event streams, each with the bytes it has waiting for its client. */
  streams: { session: string; buffered: number }[];
  /** Event streams the server closed because their client stopped reading. */
  slowClosed: number;
}

export interface ViewerServer {
  /** The server's base URL, without the token. */
  url: string;
  /** The URL to open: the base URL with `?token=` (the base URL when no token is needed). */
  openUrl: string;
  token: string | null;
  server: Server;
  stats(): ViewerStats;
  close(): Promise<void>;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const SECURITY_HEADERS = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
};

/** `body` as a Buffer is sent as it is: one page built for twenty requests is not copied twenty times. */
function send(res: ServerResponse, status: number, type: string, body: string | Buffer): void {
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    'Content-Type': type,
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

const json = (res: ServerResponse, value: unknown, status = 200) =>
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(value));

/** A whole number ≥ 0 from a query parameter (or header), or 400 naming it. */
function seqParam(name: string, raw: string | null | undefined): number | undefined {
  if (raw === null || raw === undefined) return undefined;
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isSafeInteger(n) || n < 0)
    throw new HttpError(400, 'BAD_REQUEST', `${name} must be a whole number, got ${JSON.stringify(raw)}`);
  return n;
}

/**
 * The last seq the client has: the Last-Event-ID an EventSource sends when it reconnects (it
 * wins: the URL still carries the `after` of the first connection), else `after`, else 0.
 */
function afterOf(url: URL, req: IncomingMessage): number {
  const header = req.headers['last-event-id'] as string | undefined;
  if (header !== undefined) return seqParam('after', header) ?? 0;
  return seqParam('after', url.searchParams.get('after')) ?? 0;
}

/**
 * `reloop serve`: the sessions of a store over HTTP (Node's own http, nothing else).
 *   GET /                                   sessions list (HTML)
 *   GET /sessions/<id>                      the viewer of a session, following it live
 *   GET /api/sessions                       the catalog: what `reloop sessions --json` prints
 *   GET /api/sessions/<id>/records?after=N  records with seq > N, as a JSON array
 *   GET /api/sessions/<id>/events?after=N   Server-Sent Events: one `record` event per record
 *                                           (id = seq, data = the record), those after N first
 *   GET /api/sessions/<id>/view?after=N     the viewer's index of records after N (its page uses it)
 * Every request needs the token unless it is null (access.ts); on a loopback address only requests
 * addressed to a loopback name are answered (DNS rebinding). What a client may cost is bounded
 * (limits.ts): connections, live streams, what a stream buffers, pages built at once.
 */
export async function startViewerServer(options: ViewerServerOptions): Promise<ViewerServer> {
  const { store } = options;
  const host = options.host ?? '127.0.0.1';
  const token = options.token ?? null;
  const loopback = isLoopback(host);
  const chart = options.chart ?? chartOf();
  const live = new LiveSessions(store, chart);
  const stopping = new AbortController();
  const streams = new Map<ServerResponse, string>();
  const limits = {
    maxBuffered: options.limits?.maxBuffered ?? MAX_BUFFERED,
    slowClientMs: options.limits?.slowClientMs ?? SLOW_CLIENT_MS,
    maxStreams: options.limits?.maxStreams ?? MAX_STREAMS,
  };
  let slowClosed = 0;
  const renders = new Gate<Buffer>(MAX_RENDERS, MAX_WAITING);
  let port = 0;

  async function existing(session: string): Promise<string> {
    if (!(await store.exists(session))) throw new SessionNotFoundError(session);
    return session;
  }

  async function viewerPage(session: string): Promise<string> {
    const feed = await live.current(await existing(session));
    const sessions: PageSession[] = [{ index: feed.index, role: 'main' }];
    let fork = null;
    const from = feed.index.meta().forkedFrom;
    if (from && (await store.exists(from.session))) {
      const read = async (id: string) => {
        const out: LogRecord[] = [];
        for await (const r of store.read(id)) out.push(r);
        return out;
      };
      const source = await read(from.session);
      fork = forkDiff(await read(session), source);
      sessions.push({ index: indexRecords(source, chart), role: 'source' });
    }
    // Its sub-agents, as they are now: Task calls link to them (only the session itself is live).
    // The feed knows which children the session started: its own log is not read again.
    for (const child of (await sessionTree(store, session, feed.childStarts())).slice(1)) {
      sessions.push({ index: indexRecords(child.records, chart), role: 'child' });
    }
    const base = `/api/sessions/${encodeURIComponent(session)}`;
    return renderViewerPage(sessions, {
      chart,
      fork,
      live: { events: `${base}/events`, view: `${base}/view` },
    });
  }

  /** The records after `after` as a JSON array, written as the client takes them (never built whole). */
  async function records(session: string, after: number, res: ServerResponse): Promise<void> {
    const source = store.read(await existing(session), { fromSeq: after + 1 });
    res.writeHead(200, { ...SECURITY_HEADERS, 'Content-Type': 'application/json; charset=utf-8' });
    let first = true;
    for await (const r of source) {
      const fits = res.write(`${first ? '[' : ','}${JSON.stringify(r)}`);
      if (!fits && !(await drained(res, stopping.signal, limits.slowClientMs))) {
        res.destroy();
        return;
      }
      first = false;
    }
    res.end(first ? '[]' : ']');
  }

  async function events(session: string, url: URL, req: IncomingMessage, res: ServerResponse): Promise<void> {
    await existing(session);
    const after = afterOf(url, req);
    if (streams.size >= limits.maxStreams)
      throw new HttpError(503, 'BUSY', `${limits.maxStreams} live event streams are open: close a viewer`);
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'Content-Type': 'text/event-stream; charset=utf-8',
      Connection: 'keep-alive',
    });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    streams.set(res, session);
    try {
      const end = await streamEvents(store, session, after, req, res, stopping.signal, limits);
      if (end === 'slow') slowClosed++;
    } finally {
      streams.delete(res);
    }
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (loopback && !isLoopback(hostOf(req)))
      throw new HttpError(403, 'FORBIDDEN_HOST', `host ${JSON.stringify(hostOf(req))} is not served here`);
    if (req.method !== 'GET' && req.method !== 'HEAD')
      throw new HttpError(405, 'METHOD', 'only GET is served');
    let parts: string[];
    try {
      parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    } catch {
      throw new HttpError(400, 'BAD_REQUEST', 'malformed path');
    }
    const [a, b, c, d] = parts;
    if (token !== null) {
      const access = checkToken(req, url, token, port, a !== 'api');
      if (!access.ok)
        throw new HttpError(
          401,
          'UNAUTHORIZED',
          'this server needs its token: open the URL `reloop serve` printed (…/?token=…), or send Authorization: Bearer <token>',
        );
      if ('location' in access) {
        res.writeHead(303, {
          ...SECURITY_HEADERS,
          'Set-Cookie': access.setCookie,
          Location: access.location,
        });
        res.end();
        return;
      }
    }
    if (parts.length === 0) {
      send(res, 200, 'text/html; charset=utf-8', sessionsPage(await store.list(), options.storeDir));
    } else if (a === 'sessions' && b && parts.length === 2) {
      const page = await renders.run(`page ${b}`, async () => Buffer.from(await viewerPage(b)));
      send(res, 200, 'text/html; charset=utf-8', page);
    } else if (a === 'api' && b === 'sessions' && parts.length === 2) {
      json(res, await store.list());
    } else if (a === 'api' && b === 'sessions' && c && d === 'records' && parts.length === 4) {
      await records(c, afterOf(url, req), res);
    } else if (a === 'api' && b === 'sessions' && c && d === 'events' && parts.length === 4) {
      await events(c, url, req, res);
    } else if (a === 'api' && b === 'sessions' && c && d === 'view' && parts.length === 4) {
      const after = afterOf(url, req);
      const until = seqParam('until', url.searchParams.get('until'));
      await existing(c);
      // The page asks up to the seq of an event it got, which is committed: a later one is refused
      // at once (it held the request 30 s waiting for a record that might never come).
      const last = await store.lastSeq(c);
      if (until !== undefined && until > last)
        throw new HttpError(
          400,
          'BAD_REQUEST',
          `until ${until} is past the session's last record (seq ${last})`,
        );
      const body = await renders.run(`view ${c} ${after} ${until ?? ''}`, async () => {
        const feed = await live.current(c, until || undefined);
        return Buffer.from(JSON.stringify(feed.index.chunk(feed.indexAfter(after))));
      });
      send(res, 200, 'application/json; charset=utf-8', body);
    } else {
      throw new HttpError(404, 'NOT_FOUND', `nothing at ${url.pathname}`);
    }
  }

  const server = createServer((req, res) => {
    route(req, res).catch((e: unknown) => {
      const status =
        e instanceof HttpError || (e as { status?: unknown }).status === 503
          ? (e as { status: number }).status
          : e instanceof SessionNotFoundError
            ? 404
            : 500;
      const code = (e as { code?: unknown }).code;
      const message = messageOf(e);
      if (res.headersSent) res.destroy();
      else json(res, { error: { code: typeof code === 'string' ? code : 'INTERNAL', message } }, status);
    });
  });
  server.maxConnections = MAX_CONNECTIONS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  const shown = host.includes(':') ? `[${host}]` : host;
  const url = `http://${shown}:${port}`;
  return {
    url,
    openUrl: token === null ? url : `${url}/?token=${token}`,
    token,
    server,
    stats: () => ({
      streams: [...streams].map(([res, session]) => ({ session, buffered: res.writableLength })),
      slowClosed,
    }),
    async close() {
      // Every wait of a stream races this: none outlives it, and no socket is waited for.
      stopping.abort();
      live.close();
      for (const res of streams.keys()) res.destroy();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
