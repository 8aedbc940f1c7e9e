import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const WORKER = join(ROOT, 'test/store/support/storeWorker.ts');

/** A running storeWorker.ts: its JSON reports one at a time, and how it ended. */
export interface Worker {
  child: ChildProcess;
  pid: number | undefined;
  next(): Promise<Record<string, unknown>>;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function startWorker(mode: string, dir: string, session: string, ...extra: string[]): Worker {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER, mode, dir, session, ...extra], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const messages: Record<string, unknown>[] = [];
  const waiting: ((m: Record<string, unknown>) => void)[] = [];
  createInterface({ input: child.stdout! }).on('line', (l) => {
    const msg = JSON.parse(l) as Record<string, unknown>;
    const w = waiting.shift();
    if (w) w(msg);
    else messages.push(msg);
  });
  const exit = once(child, 'exit').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }));
  return {
    child,
    pid: child.pid,
    exit,
    next: () => {
      const m = messages.shift();
      if (m) return Promise.resolve(m);
      return Promise.race([
        new Promise<Record<string, unknown>>((r) => waiting.push(r)),
        exit.then((e) => {
          throw new Error(`worker exited (${JSON.stringify(e)}) before reporting; stderr:\n${stderr}`);
        }),
      ]);
    },
  };
}
