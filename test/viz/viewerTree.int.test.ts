/**
 * The viewer of a tree of sessions, in headless Chromium: a parent and the sub-agent its Task
 * call started, in one page. The session picker shows the tree; a Task call's records open
 * the child's view, the child's first record opens its parent's.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LogRecord } from '../../src/store/records.ts';
import { renderViewerHtml } from '../../src/viz/html.ts';
import { parentSession, taskTurn } from '../runtime/children/support.ts';
import { chromiumMissing, launchChromium } from '../support/chromium.ts';
import { textTurn, toolTurn } from '../support/harness.ts';

let browser: Browser;
let dir: string;
const errors: string[] = [];

beforeAll(async () => {
  if (chromiumMissing) return;
  dir = await mkdtemp(path.join(tmpdir(), 'reloop-viewer-tree-'));
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  expect(errors).toEqual([]);
});

async function open(html: string): Promise<Page> {
  const file = path.join(dir, 'tree.html');
  await writeFile(file, html);
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()}`);
  });
  await page.goto(`file://${file}`);
  await page.waitForSelector('html[data-ready]');
  return page;
}

const selectedSeq = async (page: Page) =>
  Number(/seq (\d+)/.exec((await page.textContent('#step-label')) ?? '')?.[1]);
const goToSeq = async (page: Page, seq: number) => {
  await page.fill('#slider', String(seq - 1));
  await expect.poll(() => selectedSeq(page)).toBe(seq);
};

describe.skipIf(chromiumMissing)('the viewer of a parent and its sub-agents', () => {
  let page: Page;
  let parent: LogRecord[];
  let children: LogRecord[][];
  beforeAll(async () => {
    const h = await parentSession({
      turns: [
        taskTurn([
          { id: 'toolu_a', prompt: 'look at a', description: 'look at a' },
          { id: 'toolu_b', prompt: 'look at b', description: 'look at b' },
        ]),
        textTurn('both looked'),
      ],
      children: {
        toolu_a: { turns: [toolTurn([{ name: 'echo', input: { text: 'a' } }]), textTurn('a is fine')] },
        toolu_b: { turns: [textTurn('b is fine')] },
      },
    });
    await h.session.submit('look at everything');
    parent = await h.records();
    children = await Promise.all((await h.children()).map((id) => h.records(id)));
    page = await open(
      renderViewerHtml(parent, { related: children.map((records) => ({ records, role: 'child' as const })) }),
    );
  }, 60_000);

  it('the session picker shows the tree', async () => {
    expect(await page.isVisible('#session-pick')).toBe(true);
    const options = await page.$$eval('#session-pick option', (os) => os.map((o) => o.textContent));
    expect(options).toEqual([
      'look at everything',
      '\u00a0\u00a0└ [general-purpose] look at a',
      '\u00a0\u00a0└ [general-purpose] look at b',
    ]);
  });

  it("a Task call's record opens its sub-agent's view; the sub-agent's first record opens the parent's", async () => {
    const started = parent.find((r) => r.type === 'child.started' && r.data.toolUseId === 'toolu_b')!;
    await goToSeq(page, started.seq);
    const link = page.locator('#pane-record button.session-link');
    expect(await link.textContent()).toBe('↳ open general-purpose: look at b');
    await link.click();
    const child = children[1]![0]!.session;
    await expect.poll(async () => (await page.textContent('#session-meta'))?.startsWith(child)).toBe(true);
    expect(await page.textContent('#title')).toBe('look at b');
    expect(await page.textContent('#tl-count')).toBe(`${children[1]!.length} records`);

    await goToSeq(page, 1);
    const back = page.locator('#pane-record button.session-link');
    expect(await back.textContent()).toBe('↰ open the parent: look at everything');
    await back.click();
    await expect
      .poll(async () => (await page.textContent('#session-meta'))?.startsWith(parent[0]!.session))
      .toBe(true);
  });

  it('the Task rows of the timeline carry the child they started', async () => {
    const badges = await page.$$eval('#tl-rows .row .badge.child', (bs) => bs.map((b) => b.textContent));
    expect(badges.length).toBeGreaterThan(0);
    expect(badges.every((b) => b?.startsWith('↳ child session '))).toBe(true);
  });
});
