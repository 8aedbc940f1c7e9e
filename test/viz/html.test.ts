import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { escapeXml, jsonForScript } from '../../src/viz/escape.ts';
import { renderViewerHtml } from '../../src/viz/html.ts';
import { VIEWER_SCRIPT_PANELS } from '../../src/viz/viewerPanels.ts';
import { VIEWER_SCRIPT_CORE } from '../../src/viz/viewerScript.ts';
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
    expect(VIEWER_SCRIPT_CORE + VIEWER_SCRIPT_PANELS).not.toMatch(
      /innerHTML|outerHTML|insertAdjacentHTML|document\.write|createContextualFragment|eval\(|new Function/,
    );
  });

  it('escapeXml escapes markup and quotes', () => {
    expect(escapeXml(`<a href="x" title='y'>&</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    );
  });
});

/** The page without the content of its data element: the markup and the script. */
const markupOf = (html: string) =>
  html.replace(/(<script type="application\/json" id="reloop-data">)[\s\S]*?(<\/script>)/, '$1$2');

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
    const script = /<script>([\s\S]*?)<\/script>/.exec(html)?.[1] ?? '';
    const hash = createHash('sha256').update(script).digest('base64');
    expect(csp).toContain(`script-src 'sha256-${hash}'`);
  });

  it('embeds log content only as escaped JSON: exactly two script elements, no payload in the markup', async () => {
    const { records } = await interestingSession();
    const html = renderViewerHtml(records);
    expect(html.match(/<script/gi)).toHaveLength(2);
    expect(html.match(/<\/script/gi)).toHaveLength(2);
    expect(html).not.toContain(XSS_SCRIPT);
    expect(html).not.toContain(XSS_BREAKOUT);
    expect(markupOf(html)).not.toContain('onerror=');
    const json =
      /<script type="application\/json" id="reloop-data">([\s\S]*?)<\/script>/.exec(html)?.[1] ?? '';
    const data = JSON.parse(json) as { steps: { messages: { content: unknown }[] } };
    expect(JSON.stringify(data.steps.messages)).toContain(XSS_BREAKOUT.replace(/"/g, '\\"'));
  });

  it('stays small for a 1 000-record session (each message once, numbers per step)', async () => {
    const records = await longSession(110);
    const html = renderViewerHtml(records);
    const log = records.map((r) => JSON.stringify(r)).join('\n');
    // The page fixed cost (CSS, script, SVG) is ~60 kB; the session part is below the log's size.
    expect(html.length).toBeLessThan(log.length + 80_000);
  });
});
