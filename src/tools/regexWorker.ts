import { workerPool } from './workerPool.ts';

/**
 * Regular-expression matching where a timeout can stop it (see workerPool.ts): `(a+)+$` over
 * forty `a`s and a `!` takes longer than the universe, so a batch that overruns its deadline, or
 * whose call is aborted, gets its worker terminated and a fresh one takes its place.
 */

export interface FileToMatch {
  index: number;
  data: Buffer;
}

export interface FileMatches {
  index: number;
  /** Matching lines counted exactly … */
  count: number;
  /** … and the first `maxLines` of them (at most MAX_LINES_KEPT), each cut at MAX_LINE_CHARS. */
  lines: { n: number; text: string }[];
}

export const MAX_LINE_CHARS = 500;
export const MAX_LINES_KEPT = 5000;
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
        if (kept.length < job.maxLines) {
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

const pool = workerPool(WORKER_SOURCE, WORKER_HEAP_MB);

const ERRORS = (timeoutMs: number) => ({
  timeout: () => new RegexTimeoutError(timeoutMs),
  aborted: () => new RegexAbortedError(),
  exited: () => new Error('the matching worker exited'),
});

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
  /** Lines to keep per file: only what the caller can show (none when it only counts). */
  maxLines = MAX_LINES_KEPT,
): Promise<FileMatches[]> {
  const transfer: ArrayBuffer[] = [];
  const payload = files.map((f) => {
    // A copy we own: small Buffers share Node's pool, which must not be transferred away.
    const copy = new Uint8Array(f.data.length);
    copy.set(f.data);
    transfer.push(copy.buffer);
    return { index: f.index, data: copy };
  });
  const job = { source, flags, files: payload, maxLines: Math.max(0, Math.min(maxLines, MAX_LINES_KEPT)) };
  return pool.run<FileMatches[]>(job, transfer, timeoutMs, signal, ERRORS(timeoutMs));
}
