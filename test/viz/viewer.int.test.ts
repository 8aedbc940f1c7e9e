import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderViewerHtml } from '../../src/viz/html.ts';
import { interestingSession, XSS_BREAKOUT, XSS_SCRIPT } from './vizSessions.ts';

const CHROMIUM = '/usr/bin/chromium';
const missing = !existsSync(CHROMIUM);
if (missing) console.warn(`viewer.int.test: skipped, ${CHROMIUM} not found (apt-get install chromium)`);

describe.skipIf(missing)(
  missing
    ? `the viewer in headless Chromium (SKIPPED: ${CHROMIUM} not found)`
    : 'the viewer in headless Chromium',
  () => {
    let browser: Browser;
    let page: Page;
    let dir: string;
    const errors: string[] = [];

    beforeAll(async () => {
      const { records } = await interestingSession();
      dir = await mkdtemp(path.join(tmpdir(), 'reloop-viewer-'));
      const file = path.join(dir, 'session.html');
      await writeFile(file, renderViewerHtml(records));
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
      });
      page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
      page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(`console: ${m.text()}`);
      });
      page.on('request', (r) => {
        if (!r.url().startsWith('file://')) errors.push(`request: ${r.url()}`);
      });
      // Any blocked script or handler would show here: the CSP must never have to step in.
      // (Browser-side code is given as strings: this project type-checks without the DOM lib.)
      await page.addInitScript({
        content: `window.__violations = [];
          document.addEventListener('securitypolicyviolation', (e) =>
            window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));`,
      });
      await page.goto(`file://${file}`);
    }, 60_000);

    afterAll(async () => {
      await browser?.close();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    /** Label lines of taken edges as shown (without their <title> tooltip). */
    const takenLabels = () =>
      page.$$eval('svg.chart text.edge-label.taken', (ts) =>
        ts.map((t) =>
          [...t.childNodes]
            .filter((n) => n.nodeName !== 'title')
            .map((n) => n.textContent)
            .join(''),
        ),
      );

    it('draws the chart as SVG: every state, the taken edges highlighted with counts', async () => {
      const states = await page.$$eval('svg.chart g.state', (gs) =>
        gs.map((g) => g.getAttribute('data-state')),
      );
      expect(states.sort()).toEqual([
        'aborted',
        'awaitingApproval',
        'awaitingStopHook',
        'building',
        'compacting',
        'completed',
        'dispatchingTools',
        'failed',
        'recovering',
        'requesting',
      ]);
      const box = await page.locator('svg.chart').boundingBox();
      expect(box?.width).toBeGreaterThan(800);
      expect(box?.height).toBeGreaterThan(300);
      const taken = await page.$$eval('svg.chart g.edge.taken', (gs) =>
        gs.map((g) => `${g.getAttribute('data-from')}>${g.getAttribute('data-to')}`),
      );
      expect(taken).toContain('requesting>recovering');
      expect(taken).toContain('dispatchingTools>compacting');
      expect(taken).not.toContain('requesting>failed');
      const strokeOf = (sel: string) =>
        page.evaluate(`getComputedStyle(document.querySelector('${sel}')).stroke`);
      const stroke = await strokeOf('svg.chart g.edge.taken .line');
      const idle = await strokeOf('svg.chart g.edge:not(.taken) .line');
      expect(stroke).not.toBe(idle);
      const labels = await takenLabels();
      expect(labels).toContain('query_built ×7');
      expect(labels).toContain('transport_retry ×1');
      expect(await page.getAttribute('svg.chart g.state.current', 'data-state')).toBe('completed');
    });

    it('steps to a transition when its timeline row is clicked: that step’s messages and chart', async () => {
      // seq 15 (tool_result_continuation): the results are appended at seq 16, so 2 messages.
      await page.locator('#timeline-body tr', { hasText: 'dispatchingTools → building' }).first().click();
      await expect.poll(() => page.textContent('#step-label')).toContain('seq 15');
      const cards = page.locator('#messages .msg');
      expect(await cards.count()).toBe(2);
      expect(await cards.nth(1).textContent()).toContain('tool_use ▸ echo · tu_xss');
      expect(await page.getAttribute('svg.chart g.state.current', 'data-state')).toBe('building');
      const labels = await takenLabels();
      expect(labels.sort()).toEqual([
        'query_built ×1',
        'tool_result_continuation ×1',
        'tool_use_requested ×1',
      ]);

      // seq 35 (compacted): the history is the summary plus the kept tail.
      await page.locator('#timeline-body tr', { hasText: 'compacting → building' }).click();
      await expect.poll(() => page.textContent('#step-label')).toContain('seq 35');
      expect(await cards.first().textContent()).toContain(
        'This session continues from an earlier conversation',
      );
      expect(await page.textContent('#side-panel')).toContain('compacted');
    });

    it('moves with the slider and the keyboard', async () => {
      await page.locator('#slider').fill('2');
      await expect.poll(() => page.textContent('#step-label')).toContain('seq 3 ');
      expect(await page.locator('#messages .msg').count()).toBe(1);
      await page.locator('body').click({ position: { x: 5, y: 5 } });
      await page.keyboard.press('Shift+ArrowRight');
      await expect.poll(() => page.textContent('#step-label')).toContain('seq 4 ');
      await page.keyboard.press('End');
      await expect.poll(() => page.textContent('#step-label')).toContain('seq 75');
    });

    it('shows hostile log content as text: nothing from the log runs or becomes markup', async () => {
      await page.keyboard.press('End');
      const text = (await page.textContent('#messages')) ?? '';
      expect(text).toContain(XSS_SCRIPT);
      expect(text).toContain(XSS_BREAKOUT);
      expect(await page.evaluate('typeof window.__pwned')).toBe('undefined');
      expect(await page.locator('img').count()).toBe(0);
      expect(await page.locator('script').count()).toBe(2);
      expect(await page.evaluate('document.title')).toBe('reloop · fix the failing sum test');
      expect(await page.evaluate('window.__violations')).toEqual([]);
      expect(errors).toEqual([]);
    });
  },
);
