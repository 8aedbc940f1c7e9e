/**
 * The session viewer at scale: a 10 000-round session (~100 000 records) written by the real
 * runtime, its viewer page rendered and opened in headless Chromium, beside the demo session's
 * page opened in the same browser in the same run (the baseline). Prints the log and page
 * sizes, the time to render the page, the time until the page is ready in Chromium, and the
 * time a step takes there (one record, a jump of the slider, a filter).
 *   npm run bench:build && node node_modules/.cache/reloop-bench/bench/viewer.js [rounds]
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type Browser, chromium } from 'playwright-core';
import { z } from 'zod';
import type { Script } from '../src/model/script.ts';
import { ScriptedModelClient } from '../src/model/scripted.ts';
import { counterIds, seededRandom, VirtualClock } from '../src/runtime/determinism.ts';
import { Session } from '../src/runtime/session.ts';
import { MemoryEventStore } from '../src/store/memoryStore.ts';
import type { LogRecord } from '../src/store/records.ts';
import type { Tool } from '../src/tools/types.ts';
import { renderViewerHtml } from '../src/viz/html.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const CHROMIUM = '/usr/bin/chromium';

/** A tool with a realistic amount of output (a file listing's worth), so the log is ~230 B a record. */
const ls: Tool<{ dir: string }> = {
  name: 'ls',
  description: 'lists a directory',
  inputSchema: z.object({ dir: z.string() }),
  isReadOnly: true,
  isConcurrencySafe: () => true,
  async call({ dir }) {
    return {
      content: `${dir}:\n  index.ts  session.ts  store.ts  records.ts  evolve.ts  viewer.ts\n  (6 files)`,
    };
  },
};

function script(rounds: number): Script {
  const turns: Script['turns'] = [];
  for (let i = 0; i < rounds; i++) {
    turns.push({
      content: [
        { type: 'text', text: `Round ${i}: looking at the next directory.` },
        { type: 'tool_use', id: `tu_${i}`, name: 'ls', input: { dir: `src/module${i % 97}` } },
      ],
      stop_reason: 'tool_use',
      usage: {
        input_tokens: 1200 + i,
        output_tokens: 40,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
      },
    });
  }
  turns.push({ text: 'Done: every directory listed.', stop_reason: 'end_turn', usage: undefined });
  return { turns };
}

/** A long session written by the real runtime (memory store: the bench measures the viewer, not the disk). */
export async function longSessionRecords(rounds: number): Promise<LogRecord[]> {
  const store = new MemoryEventStore({ validate: false });
  const session = await Session.create({
    store,
    model: new ScriptedModelClient(script(rounds)),
    tools: [ls],
    clock: new VirtualClock(),
    random: seededRandom(1),
    ids: counterIds('bench-'),
    settings: { maxTurns: rounds + 1, contextWindow: 100_000_000 },
    title: `${rounds} rounds`,
  });
  const result = await session.submit('List every module directory, one at a time.');
  if (result.status !== 'completed') throw new Error(`bench session ended ${result.status}/${result.reason}`);
  const out: LogRecord[] = [];
  for await (const r of store.read(session.id)) out.push(r);
  return out;
}

/** The offline demo (real tools, a real stop hook), run as a user runs it. */
async function demoRecords(work: string): Promise<LogRecord[]> {
  const store = path.join(work, 'demo-store');
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [path.join(ROOT, 'bin/reloop.js'), 'run', '--demo', '--store', store, '--json'],
    { cwd: work },
  );
  const { sessionId, project } = JSON.parse(stdout.trim().split('\n').at(-1)!) as {
    sessionId: string;
    project?: string;
  };
  if (project) await rm(project, { recursive: true, force: true });
  const text = await readFile(path.join(store, 'sessions', `${sessionId}.jsonl`), 'utf8');
  return text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as LogRecord);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export interface ViewerBenchRow {
  page: string;
  records: number;
  logBytes: number;
  htmlBytes: number;
  renderMs: number;
  /** Navigation start to the page drawn and interactive (median of 3 loads). */
  openMs: number;
  stepMs: number;
  jumpMs: number;
  filterMs: number;
  searchMs: number;
}

/**
 * Step costs measured in the page, each up to the next frame: a record (←), a jump of the
 * slider to a random place, a record-type filter. Browser-side code as a string: this
 * project type-checks without the DOM lib.
 */
const STEPS = `(async () => {
  const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  const time = async (act, n) => {
    const ts = [];
    for (let k = 0; k < n; k++) { const t0 = performance.now(); act(k); await frame(); ts.push(performance.now() - t0); }
    ts.sort((a, b) => a - b);
    return ts[Math.floor(ts.length / 2)];
  };
  const key = (k) => document.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowLeft', bubbles: true }));
  const slider = document.getElementById('slider');
  let seed = 7;
  const jump = () => { seed = (seed * 48271) % 2147483647; slider.value = String(seed % (Number(slider.max) + 1)); slider.dispatchEvent(new Event('input')); };
  const type = document.getElementById('f-type');
  const filter = (k) => { type.selectedIndex = k % 2 === 0 ? Math.min(2, type.options.length - 1) : 0; type.dispatchEvent(new Event('change')); };
  // Text search runs 120 ms after the last keystroke: that wait is taken off.
  const count = document.getElementById('tl-count');
  const box = document.getElementById('f-text');
  const search = async (q) => {
    count.textContent = '';
    box.value = q;
    const t0 = performance.now();
    box.dispatchEvent(new Event('input'));
    while (count.textContent === '') await new Promise((r) => setTimeout(r, 2));
    await frame();
    return performance.now() - t0 - 120;
  };
  const s1 = await search('module42');
  const s2 = await search('src/module7"');
  return { step: await time(key, 40), jump: await time(jump, 20), filter: await time(filter, 10), search: Math.max(s1, s2) };
})()`;

async function measure(
  browser: Browser,
  file: string,
): Promise<{ open: number; step: number; jump: number; filter: number; search: number }> {
  const opens: number[] = [];
  let steps = { step: 0, jump: 0, filter: 0, search: 0 };
  for (let rep = 0; rep < 3; rep++) {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`file://${file}`, { timeout: 120_000 });
    await page.waitForSelector('html[data-ready]', { timeout: 120_000 });
    if (errors.length) throw new Error(`viewer page error: ${errors.join('; ')}`);
    opens.push(Number(await page.getAttribute('html', 'data-ready')));
    if (rep === 2) steps = (await page.evaluate(STEPS)) as typeof steps;
    await page.close();
  }
  return { open: median(opens), ...steps };
}

export async function benchViewer(rounds = 10_000): Promise<ViewerBenchRow[]> {
  console.log(
    '\n## The session viewer (bench/viewer.ts): a long session beside the demo, in headless Chromium',
  );
  if (!existsSync(CHROMIUM)) {
    console.log(`skipped: ${CHROMIUM} not found (apt-get install chromium)`);
    return [];
  }
  const work = await mkdtemp(path.join(tmpdir(), 'reloop-bench-viewer-'));
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  const rows: ViewerBenchRow[] = [];
  try {
    const pages: [string, LogRecord[]][] = [
      ['demo session', await demoRecords(work)],
      [`${rounds.toLocaleString('en-US')} rounds`, await longSessionRecords(rounds)],
    ];
    for (const [name, records] of pages) {
      const log = `${records.map((r) => JSON.stringify(r)).join('\n')}\n`;
      const t0 = performance.now();
      const html = renderViewerHtml(records);
      const renderMs = performance.now() - t0;
      const file = path.join(work, `${name.replace(/\W+/g, '-')}.html`);
      await writeFile(file, html);
      const m = await measure(browser, file);
      rows.push({
        page: name,
        records: records.length,
        logBytes: Buffer.byteLength(log),
        htmlBytes: Buffer.byteLength(html),
        renderMs,
        openMs: m.open,
        stepMs: m.step,
        jumpMs: m.jump,
        filterMs: m.filter,
        searchMs: m.search,
      });
    }
  } finally {
    await browser.close();
    await rm(work, { recursive: true, force: true });
  }
  const mb = (n: number) => (n / 1e6).toFixed(2);
  const ms = (n: number) => n.toFixed(n < 10 ? 1 : 0);
  console.log(
    '| page | records | log MB | page MB (÷ log) | render page ms | open in Chromium ms | step ms | slider jump ms | type filter ms | text search ms |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(
      `| ${r.page} | ${r.records.toLocaleString('en-US')} | ${mb(r.logBytes)} | ${mb(r.htmlBytes)} (${(r.htmlBytes / r.logBytes).toFixed(2)}) | ${ms(r.renderMs)} | ${ms(r.openMs)} | ${ms(r.stepMs)} | ${ms(r.jumpMs)} | ${ms(r.filterMs)} | ${ms(r.searchMs)} |`,
    );
  }
  const [demo, big] = rows;
  if (demo && big)
    console.log(
      `\nopening ${big.records.toLocaleString('en-US')} records takes ${(big.openMs / demo.openMs).toFixed(1)}× the demo page (${ms(big.openMs)} ms vs ${ms(demo.openMs)} ms; target ≤ 2 000 ms)`,
    );
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchViewer(Number(process.argv[2] ?? 10_000));
}
