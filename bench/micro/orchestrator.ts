/**
 * runToolBatch per call on the common path: one allowed, concurrency-safe tool that returns at
 * once (bench/noopRounds.ts's noop), one call per batch as in the loop benchmark; then five
 * calls per batch; then the pieces execute() pays per call, alone.
 *   npm run bench:build && node node_modules/.cache/reloop-bench/bench/micro/orchestrator.js
 */
import type { ToolUseBlock } from '../../src/model/messages.ts';
import { type BatchObserver, type BatchOptions, runToolBatch } from '../../src/tools/orchestrator.ts';
import { ToolRegistry } from '../../src/tools/registry.ts';
import { noop } from '../noopRounds.ts';
import { fmt } from './_round.ts';

const BATCHES = 5000;
const run = new AbortController();
const registry = new ToolRegistry([noop]);
const observer: BatchObserver = { beforeRun: async () => {}, onFinished: () => {}, onPermission: () => {} };
// Made once: the per-batch objects of the caller are not ours to count.
const session = { sessionId: 's', fileRead: () => undefined };
const canUseTool = () => ({ behavior: 'allow' }) as const;
const uses = (batch: number, calls: number): ToolUseBlock[] =>
  Array.from({ length: calls }, (_, i) => ({
    type: 'tool_use',
    id: `t${batch}_${i}`,
    name: 'noop',
    input: { n: i },
  }));

async function batches(calls: number): Promise<number> {
  const all = Array.from({ length: BATCHES }, (_, b) => uses(b, calls));
  const t0 = process.hrtime.bigint();
  for (const toolUses of all) {
    const opts: BatchOptions = { registry, toolUses, signal: run.signal, cwd: '/tmp', session, canUseTool };
    const out = await runToolBatch(opts, observer);
    if (out.results.length !== calls) throw new Error('batch');
  }
  return Number(process.hrtime.bigint() - t0) / (BATCHES * calls);
}

const N = 20_000;
function pieces(): [string, () => void][] {
  let sink: unknown;
  return [
    [
      'new AbortController + listener on it',
      () => {
        for (let i = 0; i < N; i++) {
          const c = new AbortController();
          c.signal.addEventListener('abort', () => {}, { once: true });
          sink = c;
        }
      },
    ],
    [
      'add + remove listener on the run signal',
      () => {
        for (let i = 0; i < N; i++) {
          const f = () => {};
          run.signal.addEventListener('abort', f, { once: true });
          run.signal.removeEventListener('abort', f);
        }
      },
    ],
    [
      'setTimeout + clearTimeout',
      () => {
        for (let i = 0; i < N; i++) clearTimeout(setTimeout(() => {}, 600_000));
      },
    ],
    [
      'Promise.race of two',
      () => {
        for (let i = 0; i < N; i++) sink = Promise.race([Promise.resolve(i), new Promise(() => {})]);
      },
    ],
    [
      'performance.now()',
      () => {
        for (let i = 0; i < N; i++) sink = performance.now();
      },
    ],
  ].map(([name, f]) => [name as string, () => (f as () => void)() ?? sink]);
}

async function median(f: () => number | Promise<number>, repeats = 11): Promise<string> {
  const samples: number[] = [];
  for (let i = 0; i < 2; i++) await f();
  for (let i = 0; i < repeats; i++) samples.push(await f());
  samples.sort((a, b) => a - b);
  return `${fmt(samples[repeats >> 1]!).padStart(10)}  (min ${fmt(samples[0]!)})`;
}

console.log(`${'runToolBatch, 1 call/batch, per call'.padEnd(42)} ${await median(() => batches(1))}`);
console.log(`${'runToolBatch, 5 calls/batch, per call'.padEnd(42)} ${await median(() => batches(5))}`);
for (const [name, f] of pieces()) {
  console.log(
    `${name.padEnd(42)} ${await median(() => {
      const t0 = process.hrtime.bigint();
      f();
      return Number(process.hrtime.bigint() - t0) / N;
    })}`,
  );
}
