/**
 * `reloop serve` as a user runs it, while `reloop run` writes a session in another process:
 * the sessions list links the session, its viewer opens at what is there and then follows the
 * run record by record (Server-Sent Events) until it ends; `serve` stops on SIGTERM with 0.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumMissing, launchChromium } from '../support/chromium.ts';
import { CLI_BIN } from '../support/cli.ts';
import { startHeldRun } from '../support/heldRun.ts';

const SLOW = 120_000;

let dir: string;
let browser: Browser;
let serve: ChildProcess | undefined;

beforeAll(async () => {
  if (chromiumMissing) return;
  dir = await mkdtemp(path.join(tmpdir(), 'reloop-live-'));
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  serve?.kill('SIGKILL');
  await browser?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Starts `reloop serve --port 0 --json` and resolves with the URL it prints. */
function startServe(
  store: string,
): Promise<{ url: string; child: ChildProcess; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, [CLI_BIN, 'serve', '--port', '0', '--store', store, '--json'], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let out = '';
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    err += d;
  });
  return new Promise((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve({ url: (JSON.parse(line) as { url: string }).url, child, exited });
    });
    void exited.then((code) => reject(new Error(`reloop serve exited ${code}: ${err}`)));
  });
}

describe.skipIf(chromiumMissing)('reloop serve: a session watched live while it runs', () => {
  it(
    'lists the session, opens its viewer, and follows the run to its end',
    async () => {
      const store = path.join(dir, 'store');
      const run = await startHeldRun(dir, store);
      const served = await startServe(store);
      serve = served.child;
      const errors: string[] = [];
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(`console: ${m.text()}`);
      });
      await page.addInitScript({
        content: `window.__violations = [];
          document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(e.violatedDirective));`,
      });

      // The printed URL carries the token once; the page and its own requests (view, event
      // stream) go on with the cookie it set, and the address bar keeps no token.
      expect(served.url).toMatch(/\/\?token=[\w-]{43}$/);
      await page.goto(served.url);
      expect(page.url()).not.toContain('token');
      await page.click(`a[href="/sessions/${run.session}"]`);
      await page.waitForSelector('html[data-ready]');
      await expect.poll(() => page.textContent('#live')).toBe('● live');
      const before = Number(((await page.textContent('#tl-count')) ?? '').replace(/\D/g, ''));
      expect(await page.textContent('#runs')).toContain('running');
      expect(await page.locator('#tl-rows .row:not([hidden])', { hasText: 'run.ended' }).count()).toBe(0);

      await run.release();
      expect(await run.exited, run.output()).toBe(0);
      const log = (await readFile(path.join(store, 'sessions', `${run.session}.jsonl`), 'utf8'))
        .trim()
        .split('\n');
      expect(log.length).toBeGreaterThan(before);
      // The page catches up by itself: same count as the log, the run shown completed, the
      // last record selected (it was following the tail).
      await expect
        .poll(() => page.textContent('#tl-count'), { timeout: 30_000 })
        .toBe(`${log.length} records`);
      await expect.poll(() => page.textContent('#runs')).toContain('completed');
      expect(await page.textContent('#step-label')).toContain(
        `seq ${log.length} / ${log.length} · run.ended`,
      );
      expect(await page.locator('#tl-rows .row.sel:not([hidden])').textContent()).toContain('run.ended');

      // The model's answer carries markup: it shows as text.
      await page.click('#tabs button[data-tab=messages]');
      expect(await page.textContent('#pane-messages')).toContain('Done <b onmouseover=alert(1)>here</b>.');
      expect(await page.locator('#pane-messages b').count()).toBe(0);
      expect(await page.evaluate('window.__violations')).toEqual([]);
      expect(errors).toEqual([]);
      await page.close();

      served.child.kill('SIGTERM');
      expect(await served.exited).toBe(0);
      serve = undefined;
    },
    SLOW,
  );
});
