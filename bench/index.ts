import { benchLoop } from './loop.ts';

/**
 * `npm run bench`: every benchmark, printed as markdown tables (docs/BENCHMARKS.md records
 * the numbers and how to reproduce them). Run on an otherwise idle machine.
 */
const rounds = Number(process.env.BENCH_ROUNDS ?? 10_000);
await benchLoop(rounds);
try {
  const { benchStore } = await import('./store.ts');
  await benchStore();
} catch (e) {
  if ((e as { code?: string }).code !== 'ERR_MODULE_NOT_FOUND') throw e;
}
