/**
 * Issue 18, items 13, 14 and 17 (serve's half): who may read a store through `reloop serve`.
 * Before: no authentication (any local user read every session, whatever the store's mode); the
 * DNS-rebinding Host check only when `--host` was spelled 127.0.0.1 / localhost / ::1; and
 * `/view?until=1e20` held a request 30 s. Real servers on loopback, real HTTP.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLoopback, sameToken } from '../../src/serve/access.ts';
import { startViewerServer, type ViewerServer } from '../../src/serve/server.ts';
import { type FileEventStore, openFileStore } from '../../src/store/fileStore.ts';
import { StreamBuilder } from '../store/support/records.ts';

let dir: string;
let store: FileEventStore;
const servers: ViewerServer[] = [];
const TOKEN = 'test-token-0123456789abcdefghijklmnopqrstuv';

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'reloop-serve-access-'));
  store = await openFileStore(dir, { onWarning: () => undefined });
  const s = new StreamBuilder('s1');
  await store.append('s1', [s.created('one'), s.runStarted(), s.user('hi'), s.runEnded()], {
    expectedSeq: 0,
  });
});
afterAll(async () => {
  for (const s of servers) await s.close();
  await store?.close();
  await rm(dir, { recursive: true, force: true });
});

async function serve(options: { host?: string; token?: string | null } = {}): Promise<ViewerServer> {
  const served = await startViewerServer({ store, storeDir: dir, port: 0, token: TOKEN, ...options });
  servers.push(served);
  return served;
}

/** A raw request (fetch will not send another Host or let one read a redirect's headers). */
function raw(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => {
        body += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the token (item 13)', () => {
  it('every request needs it: none or a wrong one is 401, the API with Bearer is served', async () => {
    const served = await serve();
    for (const p of [
      '/',
      '/sessions/s1',
      '/api/sessions',
      '/api/sessions/s1/records',
      '/api/sessions/s1/events',
    ]) {
      const none = await raw(`${served.url}${p}`);
      expect([p, none.status]).toEqual([p, 401]);
      expect(JSON.parse(none.body)).toMatchObject({ error: { code: 'UNAUTHORIZED' } });
      const wrong = await raw(`${served.url}${p}`, { Authorization: `Bearer ${TOKEN}x` });
      expect([p, wrong.status]).toEqual([p, 401]);
    }
    const ok = await raw(`${served.url}/api/sessions/s1/records`, { Authorization: `Bearer ${TOKEN}` });
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body)).toHaveLength(4);
    expect((await raw(`${served.url}/api/sessions?token=${TOKEN}`)).status).toBe(200);
  });

  it('the printed URL sets an HttpOnly, SameSite=Strict cookie for this port and sends the browser on without the token', async () => {
    const served = await serve();
    expect(served.openUrl).toBe(`${served.url}/?token=${TOKEN}`);
    const first = await raw(`${served.url}/sessions/s1?token=${TOKEN}&x=1`);
    expect(first.status).toBe(303);
    expect(first.headers.location).toBe('/sessions/s1?x=1');
    const port = new URL(served.url).port;
    const [cookie] = first.headers['set-cookie'] as string[];
    expect(cookie).toBe(`reloop_token_${port}=${TOKEN}; Path=/; HttpOnly; SameSite=Strict`);
    const jar = cookie!.split(';')[0]!;
    const page = await raw(`${served.url}/sessions/s1`, { Cookie: `other=1; ${jar}` });
    expect(page.status).toBe(200);
    expect(page.body).toContain('"events":"/api/sessions/s1/events"');
    // The live page's own requests carry the cookie: the view and the event stream are served.
    expect((await raw(`${served.url}/api/sessions/s1/view?after=0`, { Cookie: jar })).status).toBe(200);
    expect(
      (await raw(`${served.url}/api/sessions/s1/events`, { Cookie: `reloop_token_1=${TOKEN}` })).status,
    ).toBe(401);
  });

  it('no token (`--no-auth`): served as before', async () => {
    const served = await serve({ token: null });
    expect(served.openUrl).toBe(served.url);
    expect((await raw(`${served.url}/api/sessions`)).status).toBe(200);
  });

  it('compares in constant time, whatever the lengths', () => {
    expect(sameToken(TOKEN, TOKEN)).toBe(true);
    expect(sameToken(`${TOKEN}x`, TOKEN)).toBe(false);
    expect(sameToken('', TOKEN)).toBe(false);
    expect(sameToken(undefined, TOKEN)).toBe(false);
  });
});

describe('the Host check on every loopback address (item 14)', () => {
  it('knows loopback in every spelling, and nothing else', () => {
    for (const h of [
      '127.0.0.1',
      '127.0.0.2',
      '127.255.255.254',
      'localhost',
      '::1',
      '[::1]',
      '::ffff:127.0.0.1',
      '[::ffff:127.0.0.1]',
      '0:0:0:0:0:0:0:1',
      'LOCALHOST',
    ])
      expect([h, isLoopback(h)]).toEqual([h, true]);
    for (const h of [
      '0.0.0.0',
      '10.0.0.1',
      '128.0.0.1',
      '::',
      '::2',
      '::ffff:10.0.0.1',
      'evil.example',
      '127.0.0.1.evil.example',
      '',
    ])
      expect([h, isLoopback(h)]).toEqual([h, false]);
  });

  it.each([
    '127.0.0.2',
    '::ffff:127.0.0.1',
  ])('served on %s: another Host is 403, a loopback one is served', async (host) => {
    const served = await serve({ host });
    const auth = { Authorization: `Bearer ${TOKEN}` };
    const evil = await raw(`${served.url}/api/sessions`, { ...auth, Host: 'evil.example' });
    expect(evil.status).toBe(403);
    expect(JSON.parse(evil.body)).toMatchObject({ error: { code: 'FORBIDDEN_HOST' } });
    const port = new URL(served.url).port;
    for (const name of [`127.0.0.2:${port}`, `localhost:${port}`, `[::1]:${port}`, `127.0.0.1`])
      expect([name, (await raw(`${served.url}/api/sessions`, { ...auth, Host: name })).status]).toEqual([
        name,
        200,
      ]);
  });
});

describe('a bad parameter is refused at once (item 17)', () => {
  it('/view?until=1e20, until past the log, until=abc, after=-1: 400 naming the parameter', async () => {
    const served = await serve({ token: null });
    const cases: [string, RegExp][] = [
      ['until=1e20', /until must be a whole number, got "1e20"/],
      ['until=5', /until 5 is past the session's last record \(seq 4\)/],
      ['until=abc', /until must be a whole number/],
      ['after=-1', /after must be a whole number/],
      ['after=1.5', /after must be a whole number/],
    ];
    for (const [query, message] of cases) {
      const res = await raw(`${served.url}/api/sessions/s1/view?${query}`);
      expect([query, res.status]).toEqual([query, 400]);
      expect(JSON.parse(res.body).error.message).toMatch(message);
    }
    expect((await raw(`${served.url}/api/sessions/s1/view?after=0&until=4`)).status).toBe(200);
  });
});
