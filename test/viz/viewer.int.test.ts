import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { LogRecord } from '../../src/store/records.ts';
import { chartOf } from '../../src/viz/edgeCatalog.ts';
import { renderViewerHtml } from '../../src/viz/html.ts';
import { CHROMIUM, chromiumMissing, launchChromium } from '../support/chromium.ts';
import { forkedSession, interestingSession, longSession, XSS_BREAKOUT, XSS_SCRIPT } from './vizSessions.ts';

if (chromiumMissing)
  console.warn(`viewer.int.test: skipped, ${CHROMIUM} not found (apt-get install chromium)`);

/** Every way a string could turn into markup or script, if the page ever let one. */
const HOSTILE = `"><img src=x onerror="window.__pwned=1"><svg onload="window.__pwned=2">${XSS_SCRIPT}`;

let browser: Browser;
let dir: string;
const errors: string[] = [];

/**
 * A page in headless Chromium at 1400×900 (the layout's target), with every page error,
 * console error, network request and CSP violation recorded: none may happen.
 * Browser-side code is given as strings: this project type-checks without the DOM lib.
 */
async function open(name: string, html: string): Promise<Page> {
  const file = path.join(dir, `${name}.html`);
  await writeFile(file, html);
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on('pageerror', (e) => errors.push(`${name} pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`${name} console: ${m.text()}`);
  });
  page.on('request', (r) => {
    if (!r.url().startsWith('file://')) errors.push(`${name} request: ${r.url()}`);
  });
  await page.addInitScript({
    content: `window.__violations = [];
      document.addEventListener('securitypolicyviolation', (e) =>
        window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));`,
  });
  await page.goto(`file://${file}`);
  await page.waitForSelector('html[data-ready]');
  return page;
}

// The seqs below are those of interestingSession (vizSessions.ts): each run logs run.started, then
// run.setup (what the model was offered), then the prompt; a change of what a run logs moves them.
/** Rows of the timeline as shown: "seq kind text". */
const rows = (page: Page) =>
  page.$$eval('#tl-rows .row:not([hidden])', (rs) =>
    rs.map((r) => [r.children[0], r.children[3], r.children[4]].map((c) => c?.textContent ?? '').join(' ')),
  );
const selectedSeq = async (page: Page) =>
  Number(/seq (\d+)/.exec((await page.textContent('#step-label')) ?? '')?.[1]);
/** Picks the option of a filter whose label starts with `prefix` (labels carry counts). */
const choose = (page: Page, id: string, prefix: string) =>
  page.evaluate(`(() => {
    const s = document.getElementById(${JSON.stringify(id)});
    const o = [...s.options].find((o) => o.textContent.startsWith(${JSON.stringify(prefix)}));
    s.value = o ? o.value : '-1';
    s.dispatchEvent(new Event('change'));
    return !!o;
  })()`);
const clear = (page: Page) => page.click('#f-clear');
const goToSeq = async (page: Page, seq: number) => {
  await page.fill('#slider', String(seq - 1));
  await expect.poll(() => selectedSeq(page)).toBe(seq);
};

beforeAll(async () => {
  if (chromiumMissing) return;
  dir = await mkdtemp(path.join(tmpdir(), 'reloop-viewer-'));
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe.skipIf(chromiumMissing)('the viewer in headless Chromium', () => {
  let page: Page;
  let records: LogRecord[];
  beforeAll(async () => {
    ({ records } = await interestingSession());
    page = await open('session', renderViewerHtml(records));
  }, 60_000);
  // Each test starts from the same screen, whatever the one before left.
  beforeEach(async () => {
    if (!page) return;
    await clear(page);
    await page.click('#chart-views button[data-view=overview]');
    await page.click('#tabs button[data-tab=record]');
  });

  it('puts the chart and the timeline side by side on a 1400×900 screen', async () => {
    const chart = (await page.locator('#chart-panel').boundingBox())!;
    const timeline = (await page.locator('#timeline-panel').boundingBox())!;
    expect(chart.x + chart.width).toBeLessThanOrEqual(timeline.x);
    expect(chart.y).toBeLessThan(timeline.y + timeline.height);
    expect(timeline.y).toBeLessThan(chart.y + chart.height);
    for (const b of [chart, timeline]) {
      expect(b.x + b.width).toBeLessThanOrEqual(1400);
      expect(b.y + b.height).toBeLessThanOrEqual(900);
    }
    const svg = (await page.locator('svg.chart[data-view=overview]').boundingBox())!;
    expect(svg.width).toBeGreaterThan(600);
    expect(svg.height).toBeGreaterThan(300);
  });

  it('draws the overview chart: every state, the edges taken so far with counts, the current state', async () => {
    const states = await page.$$eval('svg.chart[data-view=overview] g.state', (gs) =>
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
    const taken = await page.$$eval('svg.chart[data-view=overview] text.edge-label.taken', (ts) =>
      ts.map((t) =>
        [...t.childNodes]
          .filter((n) => n.nodeName !== 'title')
          .map((n) => n.textContent)
          .join(''),
      ),
    );
    expect(taken).toContain('query_built ×7');
    expect(taken).toContain('transport_retry ×1');
    expect(await page.getAttribute('svg.chart[data-view=overview] g.state.current', 'data-state')).toBe(
      'completed',
    );
    // The full chart is one click away.
    await page.click('#chart-views button[data-view=full]');
    expect(await page.isVisible('svg.chart[data-view=full]')).toBe(true);
    // One label per edge of the chart's catalog.
    expect(await page.locator('svg.chart[data-view=full] text.edge-label').count()).toBe(
      chartOf().edges.length,
    );
    await page.click('#chart-views button[data-view=overview]');
  });

  it('steps to a record when its timeline row is clicked: the chart, the history and the raw JSON of it', async () => {
    await choose(page, 'f-type', 'transition');
    await page
      .locator('#tl-rows .row:not([hidden])', { hasText: 'tool_result_continuation' })
      .first()
      .click();
    expect(await selectedSeq(page)).toBe(16);
    expect(await page.getAttribute('svg.chart[data-view=overview] g.state.current', 'data-state')).toBe(
      'building',
    );
    const raw = JSON.parse((await page.textContent('#pane-record pre.raw')) ?? '');
    expect(raw).toEqual(records[15]);
    await page.click('#tabs button[data-tab=messages]');
    const cards = page.locator('#pane-messages .msg');
    expect(await cards.count()).toBe(2);
    expect(await cards.nth(1).textContent()).toContain('tool_use ▸ echo · tu_xss');
    await page.click('#tabs button[data-tab=record]');
    await clear(page);
  });

  it('filters the timeline to a state or an edge clicked in the chart; a second click clears it', async () => {
    await page.click('svg.chart[data-view=overview] g.state[data-state=recovering]');
    expect(await page.textContent('#f-chart')).toContain('state: recovering');
    expect(await rows(page)).toEqual([
      '21 transport_retry requesting → recovering',
      expect.stringMatching(/^22 backoff\.scheduled attempt 1: wait \d+ ms$/),
      '23 backoff_elapsed recovering → requesting',
    ]);
    await page.click('svg.chart[data-view=overview] g.state[data-state=recovering]');
    expect(await page.isHidden('#f-chart')).toBe(true);
    expect(await page.textContent('#tl-count')).toBe(`${records.length} records`);

    await page.locator('svg.chart[data-view=overview] text.edge-label', { hasText: 'query_built' }).click();
    const edgeRows = await rows(page);
    expect(edgeRows).toHaveLength(7);
    expect(edgeRows.every((r) => r.includes('query_built building → requesting'))).toBe(true);
    expect(await page.textContent('#tl-count')).toBe(`7 of ${records.length} records`);
    await clear(page);
  });

  it('filters by record type, reason and tool, and searches the raw JSON', async () => {
    expect(await choose(page, 'f-type', 'model.failed')).toBe(true);
    expect(await rows(page)).toEqual(['20 model.failed retryable 529 overloaded_error: Overloaded']);
    await clear(page);
    expect(await choose(page, 'f-reason', 'auto_compact')).toBe(true);
    expect(await rows(page)).toEqual(['31 auto_compact dispatchingTools → compacting']);
    await clear(page);
    expect(await choose(page, 'f-tool', 'echo')).toBe(true);
    const toolRows = await rows(page);
    expect(toolRows.length).toBeGreaterThan(6);
    expect(toolRows.every((r) => /permission\.decided|tool\.started|tool\.finished/.test(r))).toBe(true);
    await clear(page);
    await page.fill('#f-text', 'OFF-BY-ONE');
    await expect.poll(() => page.textContent('#tl-count')).toMatch(/^\d+ of /);
    const found = await rows(page);
    expect(found.length).toBeGreaterThan(0);
    for (const r of found) {
      const rec = records[Number(r.split(' ')[0]) - 1]!;
      // A v2 message.appended refers to the response its text is in; its note shows that text.
      const referred =
        rec.type === 'message.appended' && rec.data.response !== undefined
          ? records[rec.data.response - 1]
          : null;
      expect(`${JSON.stringify(rec)}${JSON.stringify(referred)}`.toLowerCase()).toContain('off-by-one');
    }
    await page.fill('#f-text', 'no such text anywhere');
    await expect.poll(() => page.isVisible('#tl-empty')).toBe(true);
    await clear(page);
  });

  it('links a transition to the record that triggered it, and that record back to it', async () => {
    await goToSeq(page, 21);
    const cause = page.locator('#pane-record dd.cause-link button');
    expect(await cause.textContent()).toContain('seq 20 model.failed');
    expect(await page.locator('#tl-rows .row.cause:not([hidden])').textContent()).toContain('20');
    await cause.click();
    expect(await selectedSeq(page)).toBe(20);
    const effect = page.locator('#pane-record dd.effect-link button');
    expect(await effect.textContent()).toContain('seq 21 transport_retry');
    await effect.click();
    expect(await selectedSeq(page)).toBe(21);
  });

  it('draws the turn’s timing as a waterfall: the failed call, the backoff, the retry, the tool', async () => {
    await goToSeq(page, 25);
    await page.click('#tabs button[data-tab=timing]');
    const names = await page.$$eval('#pane-timing .wf .name', (ns) => ns.map((n) => n.textContent));
    expect(names).toEqual(['model call #1', 'backoff #1', 'model call #2', 'tool echo']);
    expect(await page.getAttribute('#pane-timing .wf .bar >> nth=0', 'class')).toContain('fail');
    expect(await page.textContent('#pane-timing .wf-head')).toContain('r1 turn 2');
    await page.locator('#pane-timing .wf .name', { hasText: 'tool echo' }).click();
    expect(await selectedSeq(page)).toBe(29);
    await page.click('#tabs button[data-tab=record]');
  });

  it('marks where runs start and end', async () => {
    const badges = () =>
      page.$$eval('#tl-rows .row:not([hidden]) .badge', (bs) => bs.map((b) => b.textContent));
    await choose(page, 'f-type', 'run.started');
    expect(await badges()).toEqual(['▶ r1 starts', '▶ r2 starts']);
    expect(await page.locator('#tl-rows .row.b-run:not([hidden])').count()).toBe(2);
    await choose(page, 'f-type', 'run.ended');
    expect(await badges()).toEqual(['■ r1 ends', '■ r2 ends']);
  });

  it('moves with the slider and the keyboard; ↑↓ walk the filtered timeline', async () => {
    await goToSeq(page, 4);
    await page.locator('body').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('Shift+ArrowRight');
    expect(await selectedSeq(page)).toBe(5);
    await page.keyboard.press('ArrowRight');
    expect(await selectedSeq(page)).toBe(6);
    await choose(page, 'f-type', 'transition');
    await page.locator('body').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('ArrowDown');
    expect(await selectedSeq(page)).toBe(8);
    await page.keyboard.press('End');
    expect(await selectedSeq(page)).toBe(records.length);
    await clear(page);
    expect(errors).toEqual([]);
    expect(await page.evaluate('window.__violations')).toEqual([]);
  });
});

describe.skipIf(chromiumMissing)('the viewer on a long session', () => {
  it('keeps only the rows in view in the DOM, and scrolls to the selected record', async () => {
    const records = await longSession(300);
    expect(records.length).toBeGreaterThan(3000);
    const page = await open('long', renderViewerHtml(records));
    expect(await page.locator('#tl-rows .row').count()).toBeLessThan(80);
    expect(await page.textContent('#tl-count')).toBe(`${records.length.toLocaleString('en-US')} records`);
    await goToSeq(page, 1500);
    expect(await page.locator('#tl-rows .row.sel:not([hidden])').textContent()).toContain('1500');
    expect(await page.locator('#tl-rows .row').count()).toBeLessThan(80);
    await page.close();
  });
});

describe.skipIf(chromiumMissing)('the viewer of a fork', () => {
  it('shows where the fork left its source and what differs after; opens the source', async () => {
    const { source, fork } = await forkedSession();
    const page = await open(
      'fork',
      renderViewerHtml(fork, { related: [{ records: source, role: 'source' }] }),
    );
    expect(await page.textContent('#session-meta')).toContain(`forked from ${source[0]!.session}@56`);
    await choose(page, 'f-type', 'run.ended');
    expect(await page.locator('#tl-rows .row.b-fork:not([hidden])').textContent()).toContain('⑂ fork point');
    await clear(page);
    await page.click('#tab-fork');
    const pane = (await page.textContent('#pane-fork')) ?? '';
    expect(pane).toContain('forked from');
    expect(pane).toContain('first difference: seq 57');
    expect(pane).toContain('try another way');
    expect(pane).toContain('now run the tests again');
    expect(await page.locator('#pane-fork td.fork-only', { hasText: 'Took another road' }).count()).toBe(1);
    // What the fork's prompt and answer carry shows as text here too.
    expect(pane).toContain(XSS_SCRIPT);
    expect(pane).toContain(XSS_BREAKOUT);
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.evaluate('typeof window.__pwned')).toBe('undefined');
    await page.locator('#pane-fork button', { hasText: 'open the source' }).click();
    await expect
      .poll(async () => (await page.textContent('#session-meta'))?.startsWith(source[0]!.session))
      .toBe(true);
    expect(await page.textContent('#tl-count')).toBe(`${source.length} records`);
    expect(errors).toEqual([]);
    await page.close();
  });
});

describe.skipIf(chromiumMissing)('the viewer and hostile log content', () => {
  it('shows every field from the log as text: nothing runs, no element is made from it', async () => {
    const { records } = await interestingSession();
    const parent = { session: HOSTILE, run: HOSTILE, toolUseId: HOSTILE, agent: HOSTILE };
    const hostile = records.map((r): LogRecord => {
      const h = { ...r, session: HOSTILE, run: r.run === null ? null : `${r.run}${HOSTILE}` } as LogRecord;
      switch (h.type) {
        case 'session.created':
          return { ...h, data: { ...h.data, title: HOSTILE, cwd: HOSTILE, parent } } as LogRecord;
        case 'tool.started':
        case 'tool.finished':
        case 'permission.decided':
          return { ...h, data: { ...h.data, name: HOSTILE } } as LogRecord;
        case 'model.failed':
          return { ...h, data: { ...h.data, failure: { ...h.data.failure, message: HOSTILE } } };
        case 'hook.decided':
          return { ...h, data: { ...h.data, reason: HOSTILE } };
        case 'transition':
          // A transition no chart has: its names reach the timeline as they are.
          return h.seq === 5
            ? { ...h, data: { from: HOSTILE, to: HOSTILE, trigger: HOSTILE, reason: HOSTILE } }
            : h;
        case 'run.ended':
          return { ...h, data: { ...h.data, error: HOSTILE } };
        default:
          return h;
      }
    });
    const page = await open('hostile', renderViewerHtml(hostile));
    expect(await page.evaluate('document.title')).toBe(`reloop · ${HOSTILE}`);
    expect(await page.textContent('#title')).toBe(HOSTILE);
    expect(await page.textContent('#session-meta')).toContain(`child of ${HOSTILE} (${HOSTILE})`);
    expect(await page.textContent('#unknown')).toContain('1 logged transition');
    // Every place log text goes: filters, every row, every tab of several records.
    for (const id of ['f-type', 'f-reason', 'f-tool']) {
      expect(await page.$$eval(`#${id} option`, (os) => os.map((o) => o.textContent).join('\n'))).toMatch(
        id === 'f-type' ? /transition/ : /img src=x/,
      );
    }
    await choose(page, 'f-tool', '"><img');
    await choose(page, 'f-reason', '"><img');
    await clear(page);
    await page.fill('#f-text', 'onerror');
    await expect.poll(() => page.textContent('#tl-count')).toMatch(/ of /);
    await clear(page);
    for (const seq of [1, 5, 20, 25, 46, 56, hostile.length]) {
      await goToSeq(page, seq);
      for (const tab of ['record', 'messages', 'timing']) await page.click(`#tabs button[data-tab=${tab}]`);
      await page.click('#tabs button[data-tab=record]');
    }
    const text = (await page.textContent('body')) ?? '';
    expect(text).toContain(HOSTILE);
    expect(text).toContain(XSS_BREAKOUT.slice(0, 20));
    expect(await page.evaluate('typeof window.__pwned')).toBe('undefined');
    expect(await page.locator('img').count()).toBe(0);
    expect(await page.locator('script').count()).toBe(3);
    expect(await page.locator('svg').count()).toBe(2);
    // No element anywhere has an event-handler attribute.
    expect(
      await page.evaluate(
        '[...document.querySelectorAll("*")].flatMap((e) => [...e.attributes].filter((a) => /^on/i.test(a.name)).map((a) => e.tagName + " " + a.name))',
      ),
    ).toEqual([]);
    expect(await page.evaluate('window.__violations')).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });
});
