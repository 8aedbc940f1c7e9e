import { createRequire } from 'node:module';
import type { RootSpec } from './confinedFs.ts';
import { workerPool } from './workerPool.ts';

/**
 * Glob listing (Glob, and the files Grep searches) in a worker thread. The glob library compiles
 * the model's pattern to a regular expression and runs it on every path it meets; some patterns
 * backtrack for minutes over ordinary names (`*?*?*?*?*?*?*?*?*?*?Z` against a 40-character
 * file name: 14 s; `**` and wildcard segments in turn, over a deep tree: exponential). On the
 * main thread that pinned the process, past the tool timeout and Ctrl-C. Here a listing that
 * overruns its deadline, or whose call is aborted, has its worker terminated (workerPool.ts).
 *
 * The worker lists each directory through a descriptor whose real path it verifies against the
 * root first (on Linux: open, then /proc/self/fd/N), so whatever the glob library makes of a
 * pattern (`..{,}/x`), and whatever happens to the tree meanwhile (a symlinked directory swapped
 * in), nothing outside is listed; refused directories are counted.
 */

export class GlobTimeoutError extends Error {
  readonly code = 'GLOB_TIMEOUT';
  constructor(readonly timeoutMs: number) {
    super(`listing took longer than ${timeoutMs} ms`);
    this.name = 'GlobTimeoutError';
  }
}

export class GlobAbortedError extends Error {
  readonly code = 'GLOB_ABORTED';
  constructor() {
    super('listing was aborted');
    this.name = 'GlobAbortedError';
  }
}

const WORKER_HEAP_MB = 256;

const require = createRequire(import.meta.url);
const LIBS = { tinyglobby: require.resolve('tinyglobby'), picomatch: require.resolve('picomatch') };

const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
const path = require('node:path');
const { glob } = require(${JSON.stringify(LIBS.tinyglobby)});
const picomatch = require(${JSON.stringify(LIBS.picomatch)});
const PROC_FD = process.platform === 'linux' && fs.existsSync('/proc/self/fd');
const { O_RDONLY, O_DIRECTORY } = fs.constants;
const O_CLOEXEC = fs.constants.O_CLOEXEC || 0;

function within(root, p) {
  if (p === root) return true;
  return p.startsWith(root.endsWith(path.sep) ? root : root + path.sep);
}

function containsFor(spec) {
  if (spec.anywhere) return () => true;
  const rules = (spec.rules || []).map((r) => {
    const m = picomatch(r.pattern, { dot: true });
    return r.absolute ? m : (p) => m(path.relative(spec.real, p).split(path.sep).join('/'));
  });
  return (p) => within(spec.real, p) || rules.some((m) => m(p));
}

async function list(contains, dir, refused) {
  if (!PROC_FD) {
    const real = await fs.promises.realpath(dir);
    if (!contains(real)) {
      refused.push(dir);
      return [];
    }
    return fs.promises.readdir(real, { withFileTypes: true });
  }
  let fd;
  try {
    fd = fs.openSync(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  } catch {
    return [];
  }
  try {
    if (!contains(fs.readlinkSync('/proc/self/fd/' + fd))) {
      refused.push(dir);
      return [];
    }
    return await fs.promises.readdir('/proc/self/fd/' + fd, { withFileTypes: true });
  } finally {
    fs.closeSync(fd);
  }
}

parentPort.on('message', async (job) => {
  try {
    const contains = containsFor(job.root);
    const refused = [];
    const readdir = (dir, _options, cb) => {
      list(contains, dir, refused).then((entries) => cb(null, entries), (e) => cb(e, []));
    };
    const files = await glob(job.pattern, {
      cwd: job.base,
      dot: true,
      onlyFiles: true,
      followSymbolicLinks: false,
      ignore: job.ignore,
      fs: { readdir },
    });
    parentPort.postMessage({ ok: true, out: { files, refusedDirs: refused.length } });
  } catch (e) {
    parentPort.postMessage({ ok: false, error: String((e && e.message) || e) });
  }
});
`;

const pool = workerPool(WORKER_SOURCE, WORKER_HEAP_MB);

/**
 * Files under `base` matching `pattern` (relative to `base`), listed inside `root` only.
 * Rejects with GlobTimeoutError past `timeoutMs`, GlobAbortedError when `signal` fires.
 */
export function globInWorker(
  root: RootSpec,
  base: string,
  pattern: string,
  ignore: readonly string[],
  timeoutMs: number,
  signal: AbortSignal,
): Promise<{ files: string[]; refusedDirs: number }> {
  return pool.run({ root, base, pattern, ignore }, [], timeoutMs, signal, {
    timeout: () => new GlobTimeoutError(timeoutMs),
    aborted: () => new GlobAbortedError(),
    exited: () => new Error('the listing worker exited'),
  });
}
