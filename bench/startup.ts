/**
 * How long a `reloop` command takes from the shell: each command spawned ≥ 10 times (the
 * compiled CLI, `bin/reloop.js`, as an installed user runs it) beside `node -e 0` in the same
 * run, medians and ratios. Targets (docs/BENCHMARKS.md §4): `--help` / `--version` ≤ 2× node;
 * `sessions` on 1 000 sessions ≤ 4×; `replay <id> --verify` on 100 000 records ≥ 100 000
 * records/s, whole command included.
 *   npm run build && npm run bench:build && node node_modules/.cache/reloop-bench/bench/startup.js
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadRecords } from '../src/replay/loadSession.ts';
import { verifyReplay } from '../src/replay/verify.ts';
import { openFileStore } from '../src/store/fileStore.ts';
import type { LogRecord } from '../src/store/records.ts';
import { noopLog } from './noopRounds.ts';

/** The repository root: this file runs compiled, under node_modules/.cache/reloop-bench/bench. */
function repoRoot(): string {
  const here = fileURLToPath(import.meta.url);
  const cache = here.lastIndexOf(`${path.sep}node_modules${path.sep}`);
  return cache >= 0 ? here.slice(0, cache) : path.resolve(path.dirname(here), '..');
}

const ROOT = repoRoot();
const BIN = path.join(ROOT, 'bin', 'reloop.js');

const as = (log: readonly LogRecord[], id: string) => log.map((r) => ({ ...r, session: id }) as LogRecord);

/** Wall time of one command, ms; throws if it fails (a benchmark of an error is no benchmark). */
function timeOnce(args: readonly string[]): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)]!;
}

export interface StartupRow {
  name: string;
  medianMs: number;
  ratio: number;
}

export async function benchStartup(
  runs = Number(process.env.BENCH_STARTUP_RUNS ?? 10),
): Promise<StartupRow[]> {
  console.log(`\n## Start-up: each command ${runs}× (compiled CLI, bin/reloop.js), beside node -e 0`);
  const dir = await mkdtemp(path.join(tmpdir(), 'reloop-bench-startup-'));
  try {
    const store = path.join(dir, 'store');
    const fs = await openFileStore(store);
    // 1 000 sessions shaped like real ones (a 3-round run each), plus one 100 000-record log.
    const small = await noopLog(3);
    for (let i = 0; i < 1000; i++) await fs.append(`s_${i}`, as(small, `s_${i}`), { expectedSeq: 0 });
    const big = (await noopLog(10_000)).slice(0, 100_000);
    await fs.append('s_big', as(big, 's_big'), { expectedSeq: 0 });
    await fs.close();
    const bigStore = path.join(dir, 'big');
    const bs = await openFileStore(bigStore);
    await bs.append('s_big', as(big, 's_big'), { expectedSeq: 0 });
    await bs.close();

    const cases: { name: string; args: string[] }[] = [
      { name: 'node -e 0', args: ['-e', '0'] },
      { name: 'reloop --version', args: [BIN, '--version'] },
      { name: 'reloop --help', args: [BIN, '--help'] },
      { name: 'reloop sessions (1 000 sessions)', args: [BIN, 'sessions', '--store', store] },
      {
        name: 'reloop sessions --json (1 000 sessions)',
        args: [BIN, 'sessions', '--json', '--store', store],
      },
      { name: `reloop log <id> (${small.length} records)`, args: [BIN, 'log', 's_1', '--store', store] },
      {
        name: `reloop replay <id> --verify (${small.length} records)`,
        args: [BIN, 'replay', 's_1', '--verify', '--store', store],
      },
      { name: 'reloop viz (the chart, Mermaid)', args: [BIN, 'viz'] },
    ];
    // Interleaved: one run of every command per pass, so a slow spell of the host hits them all.
    const times = cases.map(() => [] as number[]);
    for (let i = 0; i < runs; i++) {
      for (const [k, c] of cases.entries()) times[k]!.push(timeOnce(c.args));
    }
    const base = median(times[0]!);
    const rows = cases.map((c, k) => ({
      name: c.name,
      medianMs: median(times[k]!),
      ratio: median(times[k]!) / base,
    }));

    const verifyArgs = [BIN, 'replay', 's_big', '--verify', '--store', bigStore];
    const verifyTimes: number[] = [];
    for (let i = 0; i < runs; i++) verifyTimes.push(timeOnce(verifyArgs));
    const verifyMs = median(verifyTimes);
    console.log('| command | median ms | × node -e 0 | target |');
    console.log('|---|---|---|---|');
    const targets: Record<string, string> = {
      'reloop --version': '≤ 2×',
      'reloop --help': '≤ 2×',
      'reloop sessions (1 000 sessions)': '≤ 4×',
    };
    for (const r of rows)
      console.log(
        `| ${r.name} | ${r.medianMs.toFixed(1)} | ${r.ratio.toFixed(2)}× | ${targets[r.name] ?? ''} |`,
      );
    const rate = (big.length / verifyMs) * 1000;
    console.log(
      `| reloop replay <id> --verify (${big.length.toLocaleString('en-US')} records) | ${verifyMs.toFixed(0)} | ${(verifyMs / base).toFixed(1)}× | ≥ 100 000 records/s: ${Math.round(rate).toLocaleString('en-US')} records/s |`,
    );
    // Where the verify command's time goes: the same work in this process, without start-up.
    const split = { read: [] as number[], verify: [] as number[] };
    for (let i = 0; i < Math.min(runs, 5); i++) {
      const t0 = performance.now();
      const st = await openFileStore(bigStore);
      const records = await loadRecords(st, 's_big');
      await st.close();
      const t1 = performance.now();
      const report = await verifyReplay(records);
      if (!report.ok) throw new Error('the benchmark log does not verify');
      split.read.push(t1 - t0);
      split.verify.push(performance.now() - t1);
    }
    const read = median(split.read);
    const verify = median(split.verify);
    console.log(
      `\nverify of ${big.length.toLocaleString('en-US')} records, split (in this process, medians): read + validate ${read.toFixed(0)} ms, ` +
        `verify ${verify.toFixed(0)} ms (${Math.round((big.length / verify) * 1000).toLocaleString('en-US')} records/s alone); ` +
        `the command's start-up, imports and the rest: ${(verifyMs - read - verify).toFixed(0)} ms`,
    );
    return [...rows, { name: 'verify 100k', medianMs: verifyMs, ratio: verifyMs / base }];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchStartup();
}
