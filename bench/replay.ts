import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { verifyReplay } from '../src/replay/verify.ts';
import { evolve } from '../src/store/evolve.ts';
import { openFileStore } from '../src/store/fileStore.ts';
import type { LogRecord } from '../src/store/records.ts';
import { firstBrokenSeal } from '../src/store/seal.ts';
import { emptySessionState } from '../src/store/sessionState.ts';
import { noopLog } from './noopRounds.ts';

async function makeLog(records: number): Promise<LogRecord[]> {
  return (await noopLog(Math.ceil(records / 10))).slice(0, records);
}

function time<T>(f: () => T): { ms: number; value: T } {
  const t0 = performance.now();
  const value = f();
  return { ms: performance.now() - t0, value };
}

export async function benchReplay(sizes = [1_000, 10_000, 100_000]): Promise<void> {
  console.log('\n## Rebuild and verify replay (real runtime logs)');
  console.log(
    '| records | fold (evolve) rec/s | read+validate+fold from file rec/s | seals alone rec/s | verify replay rec/s | verify rec per CPU-second |',
  );
  console.log('|---|---|---|---|---|---|');
  const dir = await mkdtemp(path.join(tmpdir(), 'reloop-bench-replay-'));
  // Warm the JIT on a mid-sized log first, so the smallest size measures the code, not its compile.
  const warm = await makeLog(5_000);
  for (let i = 0; i < 5; i++) warm.reduce(evolve, emptySessionState());
  await verifyReplay(warm);
  try {
    for (const n of sizes) {
      const log = await makeLog(n);
      // Warm-up pass, then the measured one.
      log.reduce(evolve, emptySessionState());
      const fold = time(() => log.reduce(evolve, emptySessionState()));
      const store = await openFileStore(dir);
      const id = `bench-${n}`;
      await store.append(
        id,
        log.map((r) => ({ ...r, session: id }) as LogRecord),
        { expectedSeq: 0 },
      );
      const t0 = performance.now();
      let s = emptySessionState();
      for await (const r of store.read(id)) s = evolve(s, r);
      const fileMs = performance.now() - t0;
      await store.close();
      await verifyReplay(log.slice(0, Math.min(n, 2_000)));
      const v0 = performance.now();
      const c0 = process.cpuUsage();
      const report = await verifyReplay(log);
      const verifyMs = performance.now() - v0;
      // CPU time (every thread of the process, GC included): what the work costs whatever else
      // the host runs meanwhile; wall-clock rates on a shared host swing 2-5×.
      const cpu = process.cpuUsage(c0);
      const verifyCpuMs = (cpu.user + cpu.system) / 1000;
      if (report.divergence) throw new Error(`bench log diverged at ${report.divergence.seq}`);
      if (!report.sealed) throw new Error('bench log is not sealed');
      const seals = time(() => firstBrokenSeal(log));
      const rate = (ms: number) => Math.round((n / ms) * 1000).toLocaleString('en-US');
      console.log(
        `| ${n.toLocaleString('en-US')} | ${rate(fold.ms)} | ${rate(fileMs)} | ${rate(seals.ms)} | ${rate(verifyMs)} | ${rate(verifyCpuMs)} |`,
      );
      if (n === 100_000) {
        const verdict = (ms: number) => ((n / ms) * 1000 >= 100_000 ? 'met' : 'NOT met');
        console.log(
          `verify at 100 000 records ≥ 100 000 records/s: wall clock ${verdict(verifyMs)}, per CPU-second ${verdict(verifyCpuMs)}`,
        );
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchReplay();
}
