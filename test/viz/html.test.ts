import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { escapeXml, jsonForScript } from '../../src/viz/escape.ts';
import { renderViewerHtml, VIEWER_SCRIPT } from '../../src/viz/html.ts';
import type { ChunkHeader } from '../../src/viz/viewerBundle.ts';
import { interestingSession, longSession, XSS_BREAKOUT, XSS_SCRIPT } from './vizSessions.ts';

describe('escaping', () => {
  it('jsonForScript leaves no way out of a script element and parses back to the same value', () => {
    const nasty = {
      a: '</script><script>alert(1)</script>',
      b: '<!-- <script>',
      c: 'a & b > c',
      d: 'line\u2028separator\u2029paragraph',
      e: ['</SCRIPT >', '\'"`'],
    };
    const out = jsonForScript(nasty);
    expect(out).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(out)).toEqual(nasty);
  });

  it('the page script has no HTML sink: log strings can only reach the DOM as text', () => {
    expect(VIEWER_SCRIPT).not.toMatch(
      /innerHTML|outerHTML|insertAdjacentHTML|document\.write|createContextualFragment|eval\(|new Function|setAttribute\('on/,
    );
  });

  it('escapeXml escapes markup and quotes', () => {
    expect(escapeXml(`<a href="x" title='y'>&</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    );
  });
});

const DATA = /<script type="application\/(?:json|octet-stream)" id="(reloop-[\w-]+)">([\s\S]*?)<\/script>/g;

/** The page without the content of its data elements: the markup and the script. */
const markupOf = (html: string) => html.replace(DATA, '<script id="$1"></script>');

/** What a data chunk holds, decoded as the page decodes it. */
function chunkOf(html: string, id = 'reloop-chunk-0'): { header: ChunkHeader; lines: string[] } {
  const b64 = [...html.matchAll(DATA)].find((m) => m[1] === id)?.[2] ?? '';
  expect(b64).toMatch(/^[A-Za-z0-9+/]+=*$/);
  const buf = gunzipSync(Buffer.from(b64, 'base64'));
  const headLen = buf.readUInt32LE(0);
  const header = JSON.parse(buf.subarray(4, 4 + headLen).toString('utf8')) as ChunkHeader;
  const base = (4 + headLen + 7) & ~7;
  const t = header.texts.lines;
  const lines = buf
    .subarray(base + t.offset, base + t.offset + t.bytes)
    .toString('utf8')
    .split('\n');
  return { header, lines };
}

describe('the viewer page', () => {
  it('is self-contained: no external resource, a CSP that allows only its own script', async () => {
    const { records } = await interestingSession();
    const html = markupOf(renderViewerHtml(records));
    expect(html).not.toMatch(/\s(src|href)\s*=/i);
    expect(html).not.toMatch(/url\((?!#)/i);
    expect(html).not.toMatch(/@import/i);
    const urls = html.match(/https?:\/\/[^\s"'<>)]+/g) ?? [];
    expect(new Set(urls)).toEqual(new Set(['http://www.w3.org/2000/svg']));
    const csp = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)?.[1] ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain('connect-src');
    const script = /<script>([\s\S]*?)<\/script>/.exec(html)?.[1] ?? '';
    expect(script).toBe(VIEWER_SCRIPT);
    const hash = createHash('sha256').update(script).digest('base64');
    expect(csp).toContain(`script-src 'sha256-${hash}'`);
  });

  it('embeds the log only as base64 data: the payloads are in it, byte for byte, but not in the markup', async () => {
    const { records } = await interestingSession();
    const html = renderViewerHtml(records);
    // The manifest, one chunk, the script.
    expect(html.match(/<script/gi)).toHaveLength(3);
    expect(html.match(/<\/script/gi)).toHaveLength(3);
    expect(html).not.toContain(XSS_SCRIPT);
    expect(html).not.toContain(XSS_BREAKOUT);
    expect(markupOf(html)).not.toContain('onerror=');
    const { header, lines } = chunkOf(html);
    expect(header.count).toBe(records.length);
    expect(lines).toEqual(records.map((r) => JSON.stringify(r)));
    expect(lines.join('\n')).toContain(JSON.stringify(XSS_BREAKOUT).slice(1, -1));
  });

  it('allows the serving origin, and nothing else, when served live', async () => {
    const { records } = await interestingSession();
    const html = renderViewerHtml(records, {
      live: { events: '/api/sessions/s/events', view: '/api/sessions/s/view' },
    });
    const csp = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)?.[1] ?? '';
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("default-src 'none'");
  });

  it('is smaller than the log past a few hundred records (the page itself is ~100 kB)', async () => {
    const records = await longSession(110);
    expect(records.length).toBeGreaterThan(1000);
    const html = renderViewerHtml(records);
    const log = records.map((r) => JSON.stringify(r)).join('\n');
    // A v2 log holds each message once (v1 twice), so the page, which holds the history once
    // beside the records, is a larger share of it than of a v1 log.
    expect(html.length).toBeLessThan(log.length * 0.6);
  });

  it('holds a fork’s source too, and what differs after the fork point', async () => {
    const { records } = await interestingSession();
    const fork = records
      .slice(0, 40)
      .map((r) =>
        r.type === 'session.created'
          ? { ...r, session: 's_fork', data: { ...r.data, forkedFrom: { session: r.session, seq: 40 } } }
          : { ...r, session: 's_fork' },
      );
    const html = renderViewerHtml(fork, { related: [{ records, role: 'source' }] });
    const manifest = JSON.parse(/id="reloop-data">([\s\S]*?)<\/script>/.exec(html)?.[1] ?? '') as {
      sessions: { id: string; role: string }[];
      fork: {
        source: string;
        seq: number;
        sides: { source: { records: number }; fork: { records: number } };
      };
    };
    expect(manifest.sessions.map((s) => s.role)).toEqual(['main', 'source']);
    expect(manifest.fork).toMatchObject({ source: records[0]!.session, seq: 40 });
    expect(manifest.fork.sides.source.records).toBe(records.length - 40);
    expect(manifest.fork.sides.fork.records).toBe(0);
    expect(chunkOf(html, 'reloop-chunk-1').header.count).toBe(records.length);
  });
});
