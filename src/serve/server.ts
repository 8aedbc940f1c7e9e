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
}

export interface ViewerServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);
/** An SSE comment now and then, so proxies and browsers keep a quiet stream open. */
const HEARTBEAT_MS = 15_000;

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

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    'Content-Type': type,
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

const json = (res: ServerResponse, value: unknown, status = 200) =>
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(value));

/**
 * The last seq the client has: the Last-Event-ID an EventSource sends when it reconnects (it
 * wins: the URL still carries the `after` of the first connection), else `after`, else 0.
 */
function afterOf(url: URL, req: IncomingMessage): number {
  const raw = (req.headers['last-event-id'] as string | undefined) ?? url.searchParams.get('after') ?? '0';
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0)
    throw new HttpError(400, 'BAD_REQUEST', `after must be a whole number, got ${JSON.stringify(raw)}`);
  return n;
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
 * On a loopback address it answers only requests addressed to a loopback name, so a web page
 * elsewhere cannot read sessions through DNS rebinding.
 */
export async function startViewerServer(options: ViewerServerOptions): Promise<ViewerServer> {
  const { store } = options;
  const host = options.host ?? '127.0.0.1';
  const chart = options.chart ?? chartOf();
  const live = new LiveSessions(store, chart);
  const streams = new Set<ServerResponse>();

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
    for (const child of (await sessionTree(store, session)).slice(1)) {
      sessions.push({ index: indexRecords(child.records, chart), role: 'child' });
    }
    const base = `/api/sessions/${encodeURIComponent(session)}`;
    return renderViewerPage(sessions, {
      chart,
      fork,
      live: { events: `${base}/events`, view: `${base}/view` },
    });
  }

  async function events(session: string, url: URL, req: IncomingMessage, res: ServerResponse): Promise<void> {
    await existing(session);
    const after = afterOf(url, req);
    const stop = new AbortController();
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'Content-Type': 'text/event-stream; charset=utf-8',
      Connection: 'keep-alive',
    });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    res.write(': reloop session events\n\n');
    streams.add(res);
    const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS);
    req.on('close', () => stop.abort());
    try {
      for await (const r of store.follow(session, { afterSeq: after, signal: stop.signal })) {
        // A record's JSON has no raw newline: one `data:` line.
        if (!res.write(`event: record\nid: ${r.seq}\ndata: ${JSON.stringify(r)}\n\n`))
          await new Promise((resolve) => res.once('drain', resolve));
      }
    } finally {
      clearInterval(heartbeat);
      streams.delete(res);
      res.end();
    }
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (LOOPBACK.has(host)) {
      const name = (req.headers.host ?? '').replace(/:\d+$/, '');
      if (!LOOPBACK.has(name))
        throw new HttpError(403, 'FORBIDDEN_HOST', `host ${JSON.stringify(name)} is not served here`);
    }
    if (req.method !== 'GET' && req.method !== 'HEAD')
      throw new HttpError(405, 'METHOD', 'only GET is served');
    let parts: string[];
    try {
      parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    } catch {
      throw new HttpError(400, 'BAD_REQUEST', 'malformed path');
    }
    const [a, b, c, d] = parts;
    if (parts.length === 0) {
      send(res, 200, 'text/html; charset=utf-8', sessionsPage(await store.list(), options.storeDir));
    } else if (a === 'sessions' && b && parts.length === 2) {
      send(res, 200, 'text/html; charset=utf-8', await viewerPage(b));
    } else if (a === 'api' && b === 'sessions' && parts.length === 2) {
      json(res, await store.list());
    } else if (a === 'api' && b === 'sessions' && c && d === 'records' && parts.length === 4) {
      const after = afterOf(url, req);
      const out: LogRecord[] = [];
      for await (const r of store.read(await existing(c), { fromSeq: after + 1 })) out.push(r);
      json(res, out);
    } else if (a === 'api' && b === 'sessions' && c && d === 'events' && parts.length === 4) {
      await events(c, url, req, res);
    } else if (a === 'api' && b === 'sessions' && c && d === 'view' && parts.length === 4) {
      const after = afterOf(url, req);
      const until = Number(url.searchParams.get('until') ?? 0) || undefined;
      const feed = await live.current(await existing(c), until);
      json(res, feed.index.chunk(feed.indexAfter(after)));
    } else {
      throw new HttpError(404, 'NOT_FOUND', `nothing at ${url.pathname}`);
    }
  }

  const server = createServer((req, res) => {
    route(req, res).catch((e: unknown) => {
      const status = e instanceof HttpError ? e.status : e instanceof SessionNotFoundError ? 404 : 500;
      const code = (e as { code?: unknown }).code;
      const message = messageOf(e);
      if (res.headersSent) res.end();
      else json(res, { error: { code: typeof code === 'string' ? code : 'INTERNAL', message } }, status);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}`,
    server,
    async close() {
      live.close();
      for (const res of streams) res.end();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
