/**
 * One import, alone in its process, so its peak RSS is the import's (bench/import.ts runs it):
 *   node node_modules/.cache/reloop-bench/bench/importChild.js <what> <folder> <store>   (after npm run bench:build)
 * what: `import` (the whole import into a file store) or `parse` (read + JSON.parse every line:
 * the floor any importer stands on). Prints one JSON line.
 */
import { readFile } from 'node:fs/promises';
import { glob } from 'tinyglobby';
import { importTranscripts } from '../src/import/index.ts';
import { openFileStore } from '../src/store/fileStore.ts';

const [what, folder, storeDir] = process.argv.slice(2);
if (!folder || !storeDir || (what !== 'import' && what !== 'parse')) {
  process.stderr.write('usage: importChild.ts import|parse <folder> <store>\n');
  process.exit(2);
}
const startRss = process.memoryUsage().rss;
const cpu0 = process.cpuUsage();
const t0 = performance.now();
let records = 0;
let sessions = 0;
if (what === 'parse') {
  for (const file of await glob('**/*.jsonl', { cwd: folder, absolute: true })) {
    const text = await readFile(file, 'utf8');
    for (const line of text.split('\n')) if (line) JSON.parse(line);
    sessions++;
  }
} else {
  const store = await openFileStore(storeDir);
  const report = await importTranscripts(store, [folder]);
  await store.close();
  for (const s of report.sessions.flatMap((x) => [x, ...x.children])) {
    records += s.records;
    sessions++;
  }
  if (report.failures.length) throw new Error(JSON.stringify(report.failures));
}
const ms = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
// What the import still holds once it is done (run with --expose-gc): must not grow with the folder.
(globalThis as { gc?: () => void }).gc?.();
const heapAfter = process.memoryUsage().heapUsed;
// CPU time beside wall time: on a shared machine the wall clock also counts other processes' turns.
const cpuMs = (cpu.user + cpu.system) / 1000;
process.stdout.write(
  `${JSON.stringify({ ms, cpuMs, heapAfter, startRss, peakRss: process.resourceUsage().maxRSS * 1024, records, sessions })}\n`,
);
