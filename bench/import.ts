/**
 * Importing Claude Code transcripts: throughput of `reloop import` on a synthetic projects
 * folder written at bench time, beside the floor of reading and JSON-parsing the same bytes,
 * and peak RSS for two folder sizes with the same largest session (memory must follow the
 * largest session, not the folder). Each measurement runs in its own process.
 *   npm run bench:build && node node_modules/.cache/reloop-bench/bench/import.js
 *   (BENCH_IMPORT_MB=50 sets the smaller folder's size)
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { writeProjectsFolder } from './support/claudeCodeFolder.ts';

const run = promisify(execFile);
const MB = 1024 * 1024;
/** The child is this file's sibling: compiled (.js, run as is) or the source (.ts, through tsx). */
const COMPILED = import.meta.url.endsWith('.js');
const CHILD = new URL(COMPILED ? './importChild.js' : './importChild.ts', import.meta.url).pathname;

interface ChildResult {
  ms: number;
  cpuMs: number;
  heapAfter: number;
  startRss: number;
  peakRss: number;
  records: number;
  sessions: number;
}

async function child(what: 'import' | 'parse', folder: string, store: string): Promise<ChildResult> {
  const { stdout } = await run(
    process.execPath,
    ['--expose-gc', ...(COMPILED ? [] : ['--import', 'tsx']), CHILD, what, folder, store],
    {
      maxBuffer: 16 * MB,
    },
  );
  return JSON.parse(stdout.trim()) as ChildResult;
}

export async function benchImport(): Promise<void> {
  const small = Number(process.env.BENCH_IMPORT_MB ?? 50) * MB;
  const largest = 4 * MB;
  const root = await mkdtemp(path.join(tmpdir(), 'reloop-bench-import-'));
  try {
    console.log('\n## Importing Claude Code transcripts (synthetic projects folder)');
    console.log(
      '| folder | files | largest session | read + JSON.parse (floor), wall / CPU | reloop import, wall / CPU | import / floor (CPU) | records | peak RSS (import) | RSS at start | heap held after |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|---|');
    // The folder doubles with the same largest session; then the first size with a 4× larger one.
    const runs = [
      { total: small, biggest: largest },
      { total: 2 * small, biggest: largest },
      { total: small, biggest: largest * 4 },
    ];
    for (const [i, { total, biggest }] of runs.entries()) {
      const folder = path.join(root, `projects-${i}`);
      const stats = await writeProjectsFolder(folder, {
        totalBytes: total,
        largestBytes: biggest,
        seed: i + 1,
      });
      const floor = await child('parse', folder, path.join(root, `unused-${i}`));
      const imp = await child('import', folder, path.join(root, `store-${i}`));
      const rate = (ms: number) => `${((stats.bytes / MB / ms) * 1000).toFixed(1)}`;
      console.log(
        `| ${(stats.bytes / MB).toFixed(1)} MB | ${stats.files} | ${(stats.largest / MB).toFixed(1)} MB | ${rate(floor.ms)} / ${rate(floor.cpuMs)} MB/s | ${rate(imp.ms)} / ${rate(imp.cpuMs)} MB/s | ${(imp.cpuMs / floor.cpuMs).toFixed(1)}× | ${imp.records.toLocaleString('en-US')} | ${(imp.peakRss / MB).toFixed(0)} MB | ${(imp.startRss / MB).toFixed(0)} MB | ${(imp.heapAfter / MB).toFixed(0)} MB |`,
      );
      await rm(folder, { recursive: true, force: true });
      await rm(path.join(root, `store-${i}`), { recursive: true, force: true });
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchImport();
}
