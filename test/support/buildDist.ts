/**
 * vitest globalSetup: builds dist/ once before any test runs, so every test that spawns
 * `bin/reloop.js` exercises the compiled CLI of the code under test (the build is incremental:
 * a second run with nothing changed only checks). A build error fails the run with tsc's output.
 */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export default function buildDist(): void {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  try {
    execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'pipe' });
  } catch (e) {
    const out = e as { stdout?: Buffer; stderr?: Buffer };
    throw new Error(`building dist/ failed:\n${out.stdout ?? ''}${out.stderr ?? ''}`);
  }
}
