import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { CLI_BIN, scratchHomeEnv } from './cli.ts';

export interface WorkerEventLine {
  worker: string;
  type: string;
  session?: string;
  status?: string;
  reason?: string;
  [k: string]: unknown;
}

/** A `reloop worker --json` child process: its event lines as they come, awaitable by predicate. */
export interface WorkerProcess {
  child: ChildProcess;
  events: WorkerEventLine[];
  /** Resolves with the first event (already seen or still to come) matching `test`. */
  until(test: (e: WorkerEventLine) => boolean): Promise<WorkerEventLine>;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
}

/**
 * `prefix`: a command the worker runs under (its first word is the program), e.g. the network
 * namespace of netnsLink.mjs.
 */
export function startWorkerProcess(
  args: readonly string[],
  env: Record<string, string> = {},
  prefix: readonly string[] = [],
): WorkerProcess {
  const argv = [...prefix, process.execPath, CLI_BIN, 'worker', '--json', ...args];
  const child = spawn(argv[0]!, argv.slice(1), {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      TMPDIR: process.env.TMPDIR ?? '/tmp',
      ...scratchHomeEnv(),
      ...env,
    },
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const events: WorkerEventLine[] = [];
  const waiters: { test: (e: WorkerEventLine) => boolean; resolve: (e: WorkerEventLine) => void }[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const e = JSON.parse(line) as WorkerEventLine;
    events.push(e);
    for (const w of [...waiters]) {
      if (!w.test(e)) continue;
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(e);
    }
  });
  const exit = once(child, 'exit').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }));
  return {
    child,
    events,
    exit,
    stderr: () => stderr,
    until(test) {
      const seen = events.find(test);
      if (seen) return Promise.resolve(seen);
      return Promise.race([
        new Promise<WorkerEventLine>((resolve) => waiters.push({ test, resolve })),
        exit.then((e) => {
          throw new Error(`worker exited (${JSON.stringify(e)}) first; stderr:\n${stderr}`);
        }),
      ]);
    },
  };
}
