import { Worker } from 'node:worker_threads';

/**
 * Regular-expression matching where a timeout can stop it. A JavaScript regex runs to the end
 * once started — `(a+)+$` over forty `a`s and a `!` takes longer than the universe — and on the
 * main thread it would also starve every timer and signal handler (the tool timeout, Ctrl-C).
 * So matching runs in worker threads; a batch that overruns its deadline, or whose call is
 * aborted, gets its worker terminated (V8 interrupts even a regex mid-backtrack) and a fresh one
 * takes its place for the next job. Workers are kept for reuse and never keep the process alive.
 */

export interface FileToMatch {
  index: number;
  data: Buffer;
}

export interface FileMatches {
  index: number;
  /** Matching lines counted exactly … */
  count: number;
  /** … and the first MAX_LINES_KEPT of them, each cut at MAX_LINE_CHARS. */
  lines: { n: number; text: string }[];
}

export const MAX_LINE_CHARS = 500;
const MAX_LINES_KEPT = 5000;
const MAX_IDLE_WORKERS = 2;
/** The heap a matching worker may use: a runaway pattern cannot take the process's memory with it. */
const WORKER_HEAP_MB = 256;

export class RegexTimeoutError extends Error {
  readonly code = 'REGEX_TIMEOUT';
  constructor(readonly timeoutMs: number) {
    super(`matching took longer than ${timeoutMs} ms`);
    this.name = 'RegexTimeoutError';
  }
}

export class RegexAbortedError extends Error {
  readonly code = 'REGEX_ABORTED';
  constructor() {
    super('matching was aborted');
    this.name = 'RegexAbortedError';
  }
}

// Plain JavaScript run with `eval: true` and no execArgv: no TypeScript loader in the worker, so
// it starts in milliseconds whether reloop runs from source (tsx), from dist, or under vitest.
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const decoder = new TextDecoder();
parentPort.on('message', (job) => {
  try {
    const re = new RegExp(job.source, job.flags);
    const out = [];
    for (const f of job.files) {
      const text = decoder.decode(f.data);
      const lines = text === '' ? [] : text.split(/\\r?\\n/);
      if (lines.length && lines[lines.length - 1] === '') lines.pop();
      let count = 0;
      const kept = [];
      for (let i = 0; i < lines.length; i++) {
        const line = lines[i];
        if (!re.test(line)) continue;
        count++;
        if (kept.length < ${MAX_LINES_KEPT}) {
          kept.push({ n: i + 1, text: line.length > ${MAX_LINE_CHARS} ? line.slice(0, ${MAX_LINE_CHARS}) + '…' : line });
        }
      }
      if (count) out.push({ index: f.index, count, lines: kept });
    }
    parentPort.postMessage({ ok: true, out });
  } catch (e) {
    parentPort.postMessage({ ok: false, error: String((e && e.message) || e) });
  }
});
`;

const idle: Worker[] = [];

function spawnWorker(): Worker {
  const w = new Worker(WORKER_SOURCE, {
    eval: true,
    execArgv: [],
    resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
  });
  w.unref();
  return w;
}

function release(w: Worker): void {
  if (idle.length < MAX_IDLE_WORKERS) idle.push(w);
  else void w.terminate();
}

/**
 * Matches `source`/`flags` against every line of the files. Rejects with RegexTimeoutError past
 * `timeoutMs`, RegexAbortedError when `signal` fires, or an Error the worker reported.
 */
export function matchInWorker(
  source: string,
  flags: string,
  files: readonly FileToMatch[],
  timeoutMs: number,
  signal: AbortSignal,
): Promise<FileMatches[]> {
  if (signal.aborted) return Promise.reject(new RegexAbortedError());
  const worker = idle.pop() ?? spawnWorker();
  const transfer: ArrayBuffer[] = [];
  const payload = files.map((f) => {
    // A copy we own: small Buffers share Node's pool, which must not be transferred away.
    const copy = new Uint8Array(f.data.length);
    copy.set(f.data);
    transfer.push(copy.buffer);
    return { index: f.index, data: copy };
  });
  return new Promise<FileMatches[]>((resolve, reject) => {
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
    const onMessage = (m: { ok: true; out: FileMatches[] } | { ok: false; error: string }) =>
      finish(false, () => (m.ok ? resolve(m.out) : reject(new Error(m.error))));
    const onError = (e: Error) => finish(true, () => reject(e));
    const onExit = () => finish(true, () => reject(new Error('the matching worker exited')));
    const onAbort = () => finish(true, () => reject(new RegexAbortedError()));
    const timer = setTimeout(() => finish(true, () => reject(new RegexTimeoutError(timeoutMs))), timeoutMs);
    worker.on('message', onMessage);
    worker.once('error', onError);
    worker.once('exit', onExit);
    signal.addEventListener('abort', onAbort, { once: true });
    worker.postMessage({ source, flags, files: payload }, transfer);
  });
}
