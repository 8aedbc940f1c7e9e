import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** The system Chromium the browser tests drive (playwright-core downloads none). */
export const CHROMIUM = '/usr/bin/chromium';
/** Without it the browser tests skip (`describe.skipIf(chromiumMissing)`). */
export const chromiumMissing = !existsSync(CHROMIUM);

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}
