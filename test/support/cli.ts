/**
 * Runs the `reloop` CLI the way a user does: `node bin/reloop.js …` in a child process.
 *
 *   const r = await runCli(['sessions', '--json', '--store', store], { cwd: tmp });
 *   expect(r.code).toBe(0);
 *   const rows = JSON.parse(r.stdout);
 *
 * The child gets a clean environment by default (no ANTHROPIC_* or RELOOP_STORE from the
 * developer's shell leaking in); pass `env` to add variables. A child still running after
 * `timeoutMs` is killed (its whole process group) and the promise rejects, so a hung CLI
 * fails the test with what it printed instead of hanging the suite.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CLI_BIN = fileURLToPath(new URL('../../bin/reloop.js', import.meta.url));

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Wall time of the child, in ms. */
  ms: number;
}

export interface CliOptions {
  cwd: string;
  /** Added to a minimal environment (PATH, HOME, TMPDIR, LANG; no NODE_OPTIONS, no ANTHROPIC_*). */
  env?: Record<string, string | undefined>;
  /** Default 60 s (a busy machine takes seconds just to start the CLI). */
  timeoutMs?: number;
  /** Written to the child's stdin, which is then closed (default: closed at once). */
  input?: string;
}

// RELOOP_HOME / RELOOP_MANAGED_SETTINGS: the scratch home of the test run (scratchHome.ts).
const BASE_ENV_KEYS = [
  'PATH',
  'HOME',
  'TMPDIR',
  'TMP',
  'TEMP',
  'LANG',
  'SystemRoot',
  'RELOOP_HOME',
  'RELOOP_MANAGED_SETTINGS',
];

function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of BASE_ENV_KEYS) {
    const v = process.env[k];
    if (v !== undefined) env[k] = v;
  }
  return env;
}

/** The scratch home of the test run (scratchHome.ts), for a test that spawns the CLI by itself. */
export function scratchHomeEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of ['RELOOP_HOME', 'RELOOP_MANAGED_SETTINGS']) {
    const v = process.env[k];
    if (v !== undefined) env[k] = v;
  }
  return env;
}

export class CliTimeoutError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly timeoutMs: number,
    readonly partial: { stdout: string; stderr: string },
  ) {
    super(
      `reloop ${args.join(' ')} still running after ${timeoutMs} ms\nstdout: ${partial.stdout}\nstderr: ${partial.stderr}`,
    );
    this.name = 'CliTimeoutError';
  }
}

export function runCli(args: readonly string[], options: CliOptions): Promise<CliResult> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const env: Record<string, string> = baseEnv();
  for (const [k, v] of Object.entries(options.env ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  const t0 = performance.now();
  return new Promise<CliResult>((resolve, reject) => {
    const child = spawn(process.execPath, [CLI_BIN, ...args], {
      cwd: options.cwd,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
      // Own process group: a timeout kills the CLI and anything it started (tools, hooks).
      detached: process.platform !== 'win32',
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        if (child.pid !== undefined && process.platform !== 'win32') process.kill(-child.pid, 'SIGKILL');
        else child.kill('SIGKILL');
      } catch {
        // already gone
      }
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (timedOut) reject(new CliTimeoutError(args, timeoutMs, { stdout, stderr }));
      else resolve({ code, signal, stdout, stderr, ms: performance.now() - t0 });
    });
    child.stdin.on('error', () => {
      // The CLI may exit before reading its stdin.
    });
    child.stdin.end(options.input ?? '');
  });
}

/** The one JSON value a `--json` command printed; fails if stdout holds anything else. */
export function onlyJson<T = unknown>(r: Pick<CliResult, 'stdout' | 'stderr'>): T {
  const lines = r.stdout.split('\n').filter((l) => l.trim() !== '');
  if (lines.length !== 1) {
    throw new Error(
      `expected exactly one line of JSON on stdout, got ${lines.length}:\n${r.stdout}\nstderr: ${r.stderr}`,
    );
  }
  return JSON.parse(lines[0]!) as T;
}

/** Each stdout line parsed as JSON (for `reloop log --json`). */
export function jsonLines<T = unknown>(stdout: string): T[] {
  return stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as T);
}
