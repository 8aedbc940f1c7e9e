import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webFetchTool } from '../../src/tools/builtin/webFetch.ts';
import { fetchRedirectPolicy } from '../../src/tools/permissions/webFetchRedirects.ts';
import { callTool, contextFor, textOf } from './toolHarness.ts';

let server: Server;
let port: number;
/** The same server under two host names: 127.0.0.1 and localhost are different hosts to WebFetch. */
let base: string;
let other: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    switch (url.pathname) {
      case '/page':
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(
          '<!doctype html><html><head><title>T</title><style>p{}</style><script>alert(1)</script></head>' +
            '<body><h1>Release notes</h1><p>Version <b>1.5.0</b> is out.</p><ul><li>fast</li></ul></body></html>',
        );
        return;
      case '/plain':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"version":"1.5.0"}');
        return;
      case '/same-host':
        res.writeHead(301, { location: '/plain' });
        res.end();
        return;
      case '/elsewhere':
        res.writeHead(302, { location: `http://localhost:${port}/plain` });
        res.end();
        return;
      case '/to-file':
        res.writeHead(302, { location: 'file:///etc/passwd' });
        res.end();
        return;
      case '/missing':
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('no such page');
        return;
      case '/binary':
        res.writeHead(200, { 'content-type': 'image/png' });
        res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
        return;
      case '/big':
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2048' });
        res.end('x'.repeat(2048));
        return;
      case '/big-chunked':
        // No content-length: the cap is found while reading.
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('x'.repeat(1000));
        res.end('x'.repeat(1048));
        return;
      case '/slow':
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('start');
        setTimeout(() => res.end('end'), 5_000).unref();
        return;
      case '/long':
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('y'.repeat(500));
        return;
      default:
        res.writeHead(500);
        res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
  other = `http://localhost:${port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const { ctx } = contextFor(process.cwd());
const fetchTool = webFetchTool();

describe('WebFetch (a loopback server)', () => {
  it('returns HTML converted to markdown with the prompt, scripts and styles dropped', async () => {
    const out = await callTool(fetchTool, { url: `${base}/page`, prompt: 'Which version?' }, ctx);
    expect(out.isError).toBeFalsy();
    const text = textOf(out);
    expect(text).toMatch(
      new RegExp(`^Fetched ${base}/page \\(200, text/html; charset=utf-8, \\d+ bytes\\)\\.`),
    );
    expect(text).toContain('Answer this from the content below: Which version?');
    expect(text).toContain('# Release notes');
    expect(text).toContain('Version **1.5.0** is out.');
    expect(text).not.toContain('alert(1)');
    expect(text).not.toContain('p{}');
  });

  it('returns text types as they are and follows a redirect on the same host', async () => {
    const out = await callTool(fetchTool, { url: `${base}/same-host`, prompt: 'p' }, ctx);
    expect(textOf(out)).toContain(`Fetched ${base}/plain (200, application/json`);
    expect(textOf(out)).toContain('{"version":"1.5.0"}');
  });

  it('does not follow a redirect to another host: it tells the model, as Claude Code does', async () => {
    const out = await callTool(fetchTool, { url: `${base}/elsewhere`, prompt: 'Which version?' }, ctx);
    expect(out.isError).toBeFalsy();
    expect(textOf(out)).toBe(
      [
        'REDIRECT DETECTED: The URL redirects to a different host.',
        '',
        `Original URL: ${base}/elsewhere`,
        `Redirect URL: ${other}/plain`,
        'Status: 302 Found',
        '',
        'To complete your request, fetch the content from the redirected URL: use WebFetch again with these parameters:',
        `- url: "${other}/plain"`,
        '- prompt: "Which version?"',
      ].join('\n'),
    );
  });

  it('follows it when an allow rule names the new host, and not when a deny rule does', async () => {
    const allowed = webFetchTool({
      redirectAllowed: fetchRedirectPolicy(['WebFetch(domain:localhost)'], [], process.cwd()),
    });
    expect(textOf(await callTool(allowed, { url: `${base}/elsewhere`, prompt: 'p' }, ctx))).toContain(
      `Fetched ${other}/plain`,
    );
    const denied = webFetchTool({
      redirectAllowed: fetchRedirectPolicy(['WebFetch'], ['WebFetch(domain:localhost)'], process.cwd()),
    });
    expect(textOf(await callTool(denied, { url: `${base}/elsewhere`, prompt: 'p' }, ctx))).toMatch(
      /^REDIRECT DETECTED/,
    );
  });

  it('refuses a redirect to a scheme other than http(s), an HTTP error, a binary type', async () => {
    const file = await callTool(fetchTool, { url: `${base}/to-file`, prompt: 'p' }, ctx);
    expect(file.isError).toBe(true);
    expect(textOf(file)).toBe(`WebFetch of ${base}/to-file redirects to file: URL, which is refused.`);
    const missing = await callTool(fetchTool, { url: `${base}/missing`, prompt: 'p' }, ctx);
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toBe(`WebFetch of ${base}/missing failed: HTTP 404 Not Found\nno such page`);
    const binary = await callTool(fetchTool, { url: `${base}/binary`, prompt: 'p' }, ctx);
    expect(textOf(binary)).toBe(
      `WebFetch of ${base}/binary: the content type image/png is not text; it was not read.`,
    );
  });

  it('caps the bytes read, the characters returned and the time taken', async () => {
    const small = webFetchTool({ maxBytes: 1024, maxChars: 100, timeoutMs: 300 });
    const big = await callTool(small, { url: `${base}/big`, prompt: 'p' }, ctx);
    expect(big.isError).toBe(true);
    expect(textOf(big)).toBe(
      `WebFetch of ${base}/big: the response is 2048 bytes, over the 1024-byte limit.`,
    );
    const chunked = await callTool(small, { url: `${base}/big-chunked`, prompt: 'p' }, ctx);
    expect(textOf(chunked)).toBe(
      `WebFetch of ${base}/big-chunked: the response is over the 1024-byte limit.`,
    );
    const long = await callTool(small, { url: `${base}/long`, prompt: 'p' }, ctx);
    expect(textOf(long)).toMatch(/\n\ny{100}\n\n\[… 400 more characters not shown\]$/);
    const slow = await callTool(small, { url: `${base}/slow`, prompt: 'p' }, ctx);
    expect(slow.isError).toBe(true);
    expect(textOf(slow)).toBe(`WebFetch of ${base}/slow timed out after 0.3 s.`);
  });

  it('refuses other schemes and credentials before any request', async () => {
    expect(fetchTool.inputSchema.safeParse({ url: 'file:///etc/passwd', prompt: 'p' }).success).toBe(false);
    expect(fetchTool.inputSchema.safeParse({ url: 'ftp://x/y', prompt: 'p' }).success).toBe(false);
    const creds = await callTool(fetchTool, { url: `http://u:p@127.0.0.1:${port}/plain`, prompt: 'p' }, ctx);
    expect(textOf(creds)).toBe('URLs with a user name or password are refused.');
  });

  it('a process function replaces the default result (a library user plugs a small model)', async () => {
    const custom = webFetchTool({
      process: async (page, prompt) => ({ content: `${prompt}: ${page.text.length} chars from ${page.url}` }),
    });
    expect(textOf(await callTool(custom, { url: `${base}/plain`, prompt: 'size' }, ctx))).toBe(
      `size: 19 chars from ${base}/plain`,
    );
  });
});
