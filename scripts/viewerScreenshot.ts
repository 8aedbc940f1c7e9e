/**
 * Regenerates docs/viewer.png: runs the offline demo (a real multi-turn session on a real file
 * store: tool rounds, max-tokens recovery, a 529 retry, a compaction, a stop-hook block), renders
 * its viewer page and screenshots it in headless Chromium at 1400×900 (the screen the layout is
 * made for). Run by hand when the viewer changes; the test suite never rewrites the PNG.
 *
 *   node --import tsx scripts/viewerScreenshot.ts [--out docs/viewer.png] [--reason stop_hook_continuation] [--tab record]
 *
 * `--reason` selects the record shown: the last transition with that reason (default: the
 * stop-hook block, where the chart is half-way; its record tab links the hook decision that
 * caused it); a reason the session never took (e.g. `--reason end`) shows the last record.
 * `--tab` opens a panel: record, messages or timing.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';
import { openFileStore } from '../src/store/fileStore.ts';
import type { LogRecord } from '../src/store/records.ts';
import { renderViewerHtml } from '../src/viz/html.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const CHROMIUM = '/usr/bin/chromium';
const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(name);
  return at > 0 && process.argv[at + 1] ? process.argv[at + 1]! : fallback;
};
const outFile = path.resolve(ROOT, arg('--out', 'docs/viewer.png'));
const reason = arg('--reason', 'stop_hook_continuation');
const tab = arg('--tab', 'record');

if (!existsSync(CHROMIUM)) {
  process.stderr.write(`viewerScreenshot: ${CHROMIUM} not found (apt-get install chromium)\n`);
  process.exit(1);
}

const work = await mkdtemp(path.join(tmpdir(), 'reloop-shot-'));
try {
  const store = path.join(work, 'store');
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [path.join(ROOT, 'bin/reloop.js'), 'run', '--demo', '--store', store, '--json'],
    { cwd: work },
  );
  const result = JSON.parse(stdout.trim().split('\n').at(-1)!) as { sessionId: string; project?: string };
  const fileStore = await openFileStore(store);
  const records: LogRecord[] = [];
  try {
    for await (const r of fileStore.read(result.sessionId)) records.push(r);
  } finally {
    await fileStore.close();
  }
  const pagePath = path.join(work, 'session.html');
  await writeFile(pagePath, renderViewerHtml(records));

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 }, deviceScaleFactor: 1 });
    await page.goto(`file://${pagePath}`);
    await page.waitForSelector('html[data-ready]');
    const at = records.findLastIndex((r) => r.type === 'transition' && r.data.reason === reason);
    if (at >= 0) await page.fill('#slider', String(at));
    await page.click(`#tabs button[data-tab=${tab}]`);
    await page.screenshot({ path: outFile });
  } finally {
    await browser.close();
  }
  if (result.project) await rm(result.project, { recursive: true, force: true });
  process.stdout.write(
    `wrote ${path.relative(ROOT, outFile)} (session ${result.sessionId}, ${records.length} records)\n`,
  );
} finally {
  await rm(work, { recursive: true, force: true });
}
