/**
 * vitest globalSetup: no test reads the real `~/.claude` or `/etc/claude-code`. `RELOOP_HOME`
 * points the settings, memory and agent loaders (src/settings/sources.ts) at an empty scratch
 * home, and `RELOOP_MANAGED_SETTINGS` at a managed file that does not exist; both are inherited
 * by the test workers and passed on to every CLI a test spawns (test/support/cli.ts). A test that
 * wants a user file makes its own home and sets `RELOOP_HOME` for that run.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export default function scratchHome(): () => void {
  const home = fileURLToPath(new URL('../../node_modules/.cache/reloop-test-home', import.meta.url));
  rmSync(home, { recursive: true, force: true });
  mkdirSync(home, { recursive: true });
  process.env.RELOOP_HOME = home;
  process.env.RELOOP_MANAGED_SETTINGS = `${home}/no-managed-settings.json`;
  delete process.env.CLAUDE_CONFIG_DIR;
  return () => rmSync(home, { recursive: true, force: true });
}
