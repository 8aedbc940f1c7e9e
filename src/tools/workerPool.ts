import { Worker } from 'node:worker_threads';

/**
 * Work that runs the model's patterns — regular expressions (Grep), glob patterns (Glob, and
 * Grep's file filter) — goes to worker threads: a JavaScript regex runs to its end once started
 * (`*?*?*?*?*?*?*?*?*?*?Z` compiles to one that backtracks for minutes over an ordinary file
 * name), and on the main thread it would starve every timer and signal handler (the tool
 * timeout, Ctrl-C). A job that overruns its deadline, or whose call is aborted, gets its worker
 * terminated (V8 interrupts even a regex mid-backtrack). Workers are kept for reuse and never
 * keep the process alive.
 */

const MAX_IDLE_WORKERS = 2;

export interface WorkerJobErrors {
  timeout: () => Error;
  aborted: () => Error;
  /** The worker died (out of its heap, a crash). */
  exited: () => Error;
}

export interface WorkerPool {
  run<T>(
    job: unknown,
    transfer: readonly ArrayBuffer[],
    timeoutMs: number,
    signal: AbortSignal,
    errors: WorkerJobErrors,
  ): Promise<T>;
}

/**
 * A pool for one worker program. `source` is plain CommonJS run with `eval: true` and no
 * execArgv: no TypeScript loader in the worker, so it starts in milliseconds whether reloop runs
 * from source (tsx), from dist, or under vitest. It must answer each message with
 * `{ ok: true, out }` or `{ ok: false, error }`.
 */
export function workerPool(source: string, heapMb: number): WorkerPool {
  const idle: Worker[] = [];
  const spawn = () => {
    const w = new Worker(source, {
      eval: true,
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: heapMb },
    });
    w.unref();
    return w;
  };
  const release = (w: Worker) => {
    if (idle.length < MAX_IDLE_WORKERS) idle.push(w);
    else void w.terminate();
  };
  return {
    run<T>(
      job: unknown,
      transfer: readonly ArrayBuffer[],
      timeoutMs: number,
      signal: AbortSignal,
      errors: WorkerJobErrors,
    ) {
      if (signal.aborted) return Promise.reject(errors.aborted());
      const worker = idle.pop() ?? spawn();
      return new Promise<T>((resolve, reject) => {
        let settled = false;
        const finish = (kill: boolean, then: () => void) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          worker.off('message', onMessage);
          worker.off('error', onError);
          worker.off('exit', onExit);
          if (kill) void worker.terminate();
          else release(worker);
          then();
        };
        const onMessage = (m: { ok: true; out: T } | { ok: false; error: string }) =>
          finish(false, () => (m.ok ? resolve(m.out) : reject(new Error(m.error))));
        const onError = (e: Error) => finish(true, () => reject(e));
        const onExit = () => finish(true, () => reject(errors.exited()));
        const onAbort = () => finish(true, () => reject(errors.aborted()));
        const timer = setTimeout(() => finish(true, () => reject(errors.timeout())), timeoutMs);
        worker.on('message', onMessage);
        worker.once('error', onError);
        worker.once('exit', onExit);
        signal.addEventListener('abort', onAbort, { once: true });
        worker.postMessage(job, transfer as ArrayBuffer[]);
      });
    },
  };
}
