import { rerun } from '../src/replay/rerun.ts';
import { verifyReplay } from '../src/replay/verify.ts';
import { noop, noopLog } from './noopRounds.ts';

/**
 * Rerun (the current code driven live, the model answered from the log, tools answered from the
 * log: `toolMode: 'recorded'`) against verify replay of the same session, in the same process and
 * run, for 250 / 500 / 1 000 rounds: the ratio, and the cost per round (flat if rerun is linear).
 * In-process (the library calls `reloop replay --rerun` / `--verify` make), not the whole commands.
 */
export async function benchRerun(sizes = [250, 500, 1_000]): Promise<void> {
  console.log('\n## Rerun vs verify replay (same session, in-process, tools recorded)');
  console.log('| rounds | records | verify ms | rerun ms | rerun / verify | rerun µs per round |');
  console.log('|---|---|---|---|---|---|');
  const settings = (n: number) => ({ maxTurns: n + 1, contextWindow: 100_000_000 });
  // Warm the JIT on a small session first.
  const warm = await noopLog(200);
  await verifyReplay(warm);
  await rerun(warm, { tools: [noop], toolMode: 'recorded', settings: settings(200) });
  for (const n of sizes) {
    const log = await noopLog(n);
    const v0 = performance.now();
    const verified = await verifyReplay(log);
    const verifyMs = performance.now() - v0;
    const r0 = performance.now();
    const report = await rerun(log, { tools: [noop], toolMode: 'recorded', settings: settings(n) });
    const rerunMs = performance.now() - r0;
    if (!verified.ok || !report.identical)
      throw new Error(
        `bench session does not replay / rerun identically: ${JSON.stringify(report.divergence)}`,
      );
    console.log(
      `| ${n} | ${log.length} | ${verifyMs.toFixed(0)} | ${rerunMs.toFixed(0)} | ${(rerunMs / verifyMs).toFixed(2)} | ${((rerunMs * 1000) / n).toFixed(0)} |`,
    );
  }
}
