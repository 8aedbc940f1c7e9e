/**
 * `reloop serve`'s HTTP API on a real file store: the catalog, records after a seq, the event
 * stream (what is there, then what lands), and the errors a client can get.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startViewerServer, type ViewerServer } from '../../src/serve/server.ts';
import { type FileEventStore, openFileStore } from '../../src/store/fileStore.ts';
import type { LogRecord } from '../../src/store/records.ts';
import { StreamBuilder } from '../store/support/records.ts';
import { interestingSession } from '../viz/vizSessions.ts';

let dir: string;
let store: FileEventStore;
let served: ViewerServer;
let id: string;
let records: LogRecord[];

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'reloop-serve-'));
  store = await openFileStore(dir, { onWarning: () => undefined });
  ({ id, records } = await interestingSession(store));
  served = await startViewerServer({ store, storeDir: dir, port: 0 });
}, 60_000);
afterAll(async () => {
  await served?.close();
  await store?.close();
  await rm(dir, { recursive: true, force: true });
});

const get = (p: string, init?: RequestInit) => fetch(`${served.url}${p}`, init);

/** Reads `record` events off an SSE response until `n` have arrived. */
async function readEvents(res: Response, n: number): Promise<{ id: string; record: LogRecord }[]> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const out: { id: string; record: LogRecord }[] = [];
  let buf = '';
  while (out.length < n) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += value;
    for (let end = buf.indexOf('\n\n'); end !== -1; end = buf.indexOf('\n\n')) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      const field = (name: string) =>
        block
          .split('\n')
          .find((l) => l.startsWith(`${name}: `))
          ?.slice(name.length + 2);
      if (field('event') === 'record') out.push({ id: field('id')!, record: JSON.parse(field('data')!) });
    }
  }
  await reader.cancel();
  return out;
}

describe('reloop serve: the JSON API', () => {
  it('GET /api/sessions is the catalog, as `reloop sessions --json` prints it', async () => {
    const res = await get('/api/sessions');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(await res.json()).toEqual(await store.list());
  });

  it('GET /api/sessions/<id>/records?after=<seq> is the records after that seq, as an array', async () => {
    const res = await get(`/api/sessions/${id}/records?after=${records.length - 3}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(records.slice(-3));
    expect(await (await get(`/api/sessions/${id}/records`)).json()).toEqual(records);
  });

  it('GET /api/sessions/<id>/events streams one `record` event per record, then the ones that land', async () => {
    const s = new StreamBuilder('sse');
    await store.append('sse', [s.created('live'), s.runStarted()], { expectedSeq: 0 });
    const res = await get('/api/sessions/sse/events?after=1');
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const reading = readEvents(res, 3);
    await store.append('sse', [s.user('one'), s.user('two')], { expectedSeq: 2 });
    const events = await reading;
    expect(events.map((e) => e.id)).toEqual(['2', '3', '4']);
    expect(events.map((e) => e.record.type)).toEqual(['run.started', 'user.message', 'user.message']);
  });

  it('resumes an event stream from Last-Event-ID', async () => {
    const res = await get(`/api/sessions/${id}/events`, {
      headers: { 'Last-Event-ID': String(records.length - 1) },
    });
    const [last] = await readEvents(res, 1);
    expect(last?.record).toEqual(records.at(-1));
  });

  it('says what is wrong: unknown session 404, bad seq 400, other methods 405, unknown path 404', async () => {
    const missing = await get('/api/sessions/nope/records');
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({
      error: { code: 'SESSION_NOT_FOUND', message: 'no session with id "nope"' },
    });
    expect((await get('/api/sessions/nope/events')).status).toBe(404);
    expect((await get('/sessions/nope')).status).toBe(404);
    const bad = await get(`/api/sessions/${id}/records?after=x`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toContain('after must be');
    expect((await get('/api/sessions', { method: 'POST' })).status).toBe(405);
    expect((await get('/nothing/here')).status).toBe(404);
  });

  it('on loopback, refuses requests addressed to another host name (DNS rebinding)', async () => {
    const { request } = await import('node:http');
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = request(`${served.url}/api/sessions`, { headers: { Host: 'evil.example:80' } }, (res) => {
        res.resume();
        resolve(res.statusCode);
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(403);
  });

  it('serves the sessions list and a session page with a CSP that allows only its own origin', async () => {
    const list = await (await get('/')).text();
    expect(list).toContain(`href="/sessions/${id}"`);
    expect(list).toContain('fix the failing sum test');
    expect(list).not.toMatch(/<script/i);
    const page = await get(`/sessions/${id}`);
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await page.text();
    expect(html).toContain("connect-src 'self'");
    expect(html).toContain(`"events":"/api/sessions/${id}/events"`);
  });

  it('GET /api/sessions/<id>/view?after=<seq> is the viewer index of what is new', async () => {
    const chunk = (await (await get(`/api/sessions/${id}/view?after=${records.length - 2}`)).json()) as {
      first: number;
      count: number;
      lines: string[];
    };
    expect(chunk.first).toBe(records.length - 2);
    expect(chunk.count).toBe(2);
    expect(chunk.lines.map((l) => JSON.parse(l))).toEqual(records.slice(-2));
  });
});
