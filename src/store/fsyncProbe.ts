import { randomUUID } from 'node:crypto';
import { mkdir, open, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

export interface FdatasyncLatency {
  samples: number;
  meanMs: number;
  medianMs: number;
  p99Ms: number;
  maxMs: number;
}

/**
 * This machine's fdatasync latency after a small append in `dir` — the floor under every durable
 * commit, printed beside benchmark results so they can be read against the disk they ran on.
 */
export async function fdatasyncLatency(dir: string, samples = 200): Promise<FdatasyncLatency> {
  await mkdir(dir, { recursive: true });
  const file = join(dir, `.fdatasync-probe-${process.pid}-${randomUUID()}`);
  const fh = await open(file, 'a');
  const line = Buffer.from(`${'x'.repeat(255)}\n`);
  const times: number[] = [];
  try {
    for (let i = 0; i < samples; i++) {
      await fh.write(line);
      const t0 = performance.now();
      await fh.datasync();
      times.push(performance.now() - t0);
    }
  } finally {
    await fh.close();
    await unlink(file).catch(() => undefined);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))] ?? 0;
  return {
    samples: times.length,
    meanMs: times.reduce((a, b) => a + b, 0) / Math.max(1, times.length),
    medianMs: at(0.5),
    p99Ms: at(0.99),
    maxMs: times.at(-1) ?? 0,
  };
}
