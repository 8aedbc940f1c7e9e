import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Message, ToolResultBlock } from '../src/model/messages.ts';
import { ScriptedModelClient } from '../src/model/scripted.ts';
import { counterIds, seededRandom, VirtualClock } from '../src/runtime/determinism.ts';
import { Session } from '../src/runtime/session.ts';
import { type FdatasyncLatency, fdatasyncLatency, openFileStore } from '../src/store/fileStore.ts';
import { MemoryEventStore } from '../src/store/memoryStore.ts';
import type { EventStore } from '../src/store/types.ts';
import { chartAlone, medianOf, xstateFloor } from './chartFloor.ts';
import { noop, noopScript } from './noopRounds.ts';

/**
 * The foundation benchmark: N tool rounds against a zero-latency scripted model and a no-op
 * tool, through the statechart runtime, next to a plain hand-written while loop doing the
 * same model/tool work. Prints µs per turn, the ratio, per-turn cost early vs late (flatness)
 * and heap after the run.
 */

export interface LoopBench {
  rounds: number;
  usPerTurn: number;
  earlyUsPerTurn: number;
  lateUsPerTurn: number;
  heapMb: number;
  records: number;
}

export async function benchStatechart(rounds: number, store: EventStore): Promise<LoopBench> {
  const client = new ScriptedModelClient(noopScript(rounds));
  const session = await Session.create({
    store,
    model: client,
    tools: [noop],
    clock: new VirtualClock(),
    random: seededRandom(1),
    ids: counterIds('bench-'),
    settings: { maxTurns: rounds + 1, contextWindow: 10_000_000 },
  });
  const marks: number[] = [];
  let records = 0;
  const t0 = performance.now();
  const off = (
    session as unknown as { writer: { onRecord: (f: (r: { type: string }) => void) => () => void } }
  ).writer.onRecord((r) => {
    records++;
    if (r.type === 'tool.finished') marks.push(performance.now());
  });
  const result = await session.submit('go');
  const total = performance.now() - t0;
  off();
  if (result.status !== 'completed' || result.turns !== rounds + 1) {
    throw new Error(`bench run ended ${result.status}/${result.reason} after ${result.turns} turns`);
  }
  return summarise(rounds, total, marks, records);
}

/** The same work without a statechart or a log: call the model, run the tool, append, repeat. */
export async function benchPlainLoop(rounds: number): Promise<LoopBench> {
  const client = new ScriptedModelClient(noopScript(rounds));
  const messages: Message[] = [{ role: 'user', content: 'go' }];
  const marks: number[] = [];
  const signal = new AbortController().signal;
  const t0 = performance.now();
  while (true) {
    const res = await client.stream({ model: 'm', messages, tools: [], maxTokens: 8192 }, { signal });
    messages.push({ role: 'assistant', content: res.content });
    const uses = res.content.filter((b) => b.type === 'tool_use');
    if (uses.length === 0) break;
    const results: ToolResultBlock[] = [];
    for (const u of uses) {
      const input = noop.inputSchema.parse(u.type === 'tool_use' ? u.input : {});
      const out = await noop.call(input, {
        signal,
        cwd: '.',
        toolUseId: u.type === 'tool_use' ? u.id : '',
        session: { sessionId: 'plain', fileRead: () => undefined },
      });
      results.push({
        type: 'tool_result',
        tool_use_id: u.type === 'tool_use' ? u.id : '',
        content: out.content as string,
      });
    }
    messages.push({ role: 'user', content: results });
    marks.push(performance.now());
  }
  return summarise(rounds, performance.now() - t0, marks, 0);
}

function summarise(rounds: number, totalMs: number, marks: number[], records: number): LoopBench {
  const window = Math.max(1, Math.min(1000, Math.floor(rounds / 10)));
  const per = (from: number) => ((marks[from + window - 1]! - marks[from - 1]!) * 1000) / window;
  const early = Math.min(100, rounds - window - 1);
  global.gc?.();
  return {
    rounds,
    usPerTurn: (totalMs * 1000) / rounds,
    earlyUsPerTurn: per(Math.max(1, early)),
    lateUsPerTurn: per(rounds - window),
    heapMb: process.memoryUsage().heapUsed / 1024 / 1024,
    records,
  };
}

const f = (n: number) => n.toFixed(1);

/**
 * One measured configuration: a warm-up run first (the JIT, and a young generation that the
 * previous run's heap measurement — a full GC — shrank), then `reps` measured runs; the
 * median run (by µs/turn) is reported, with the spread.
 */
async function measure(
  reps: number,
  warm: () => Promise<LoopBench>,
  run: () => Promise<LoopBench>,
): Promise<{ median: LoopBench; min: number; max: number }> {
  const runs: LoopBench[] = [];
  for (let i = 0; i < reps; i++) {
    await warm();
    runs.push(await run());
  }
  runs.sort((a, b) => a.usPerTurn - b.usPerTurn);
  return {
    median: runs[Math.floor((runs.length - 1) / 2)]!,
    min: runs[0]!.usPerTurn,
    max: runs.at(-1)!.usPerTurn,
  };
}

export async function benchLoop(rounds = 10_000, reps = Number(process.env.BENCH_REPS ?? 3)): Promise<void> {
  console.log(`\n## Loop: ${rounds} tool rounds, zero-latency scripted model, no-op tool`);
  console.log(`(median of ${reps} runs, each after a ${Math.min(rounds, 3000)}-round warm-up run)`);
  const warmRounds = Math.min(rounds, 3000);
  const plain = await measure(
    reps,
    () => benchPlainLoop(warmRounds),
    () => benchPlainLoop(rounds),
  );
  const mem = await measure(
    reps,
    () => benchStatechart(warmRounds, new MemoryEventStore()),
    () => benchStatechart(rounds, new MemoryEventStore()),
  );
  const bare = await measure(
    reps,
    () => benchStatechart(warmRounds, new MemoryEventStore({ validate: false })),
    () => benchStatechart(rounds, new MemoryEventStore({ validate: false })),
  );
  console.log(
    '| loop | µs/turn (median run) | min–max of runs | early µs/turn (turns 100–1100) | late µs/turn (last 1000) | late/early | heap MB | records |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  const row = (name: string, m: { median: LoopBench; min: number; max: number }) => {
    const b = m.median;
    console.log(
      `| ${name} | ${f(b.usPerTurn)} | ${f(m.min)}–${f(m.max)} | ${f(b.earlyUsPerTurn)} | ${f(b.lateUsPerTurn)} | ${(b.lateUsPerTurn / b.earlyUsPerTurn).toFixed(2)} | ${f(b.heapMb)} | ${b.records} |`,
    );
  };
  row('plain while loop', plain);
  // Below the runtime: what xstate alone costs for a round of this shape, and the chart alone.
  const floor = await medianOf(reps, () => xstateFloor(rounds));
  const chart = await medianOf(reps, () => chartAlone(rounds));
  console.log(
    `| xstate floor: minimal 3-state machine, same command/reply round | ${f(floor)} | | | | | | 0 |`,
  );
  console.log(`| the query-loop chart alone: instant effects, nothing logged | ${f(chart)} | | | | | | 0 |`);
  row('statechart + memory store (zod on write)', mem);
  row('statechart + memory store, no validation', bare);
  const dir = await mkdtemp(path.join(tmpdir(), 'reloop-bench-loop-'));
  try {
    const fsync = await fdatasyncLatency(dir, 200);
    const file = await measure(
      1,
      () => onFileStore(dir, Math.min(rounds, 1000)),
      () => onFileStore(dir, rounds),
    );
    row('statechart + file store (durable)', file);
    console.log(
      `\nratio statechart(memory, zod on write)/plain: ${(mem.median.usPerTurn / plain.median.usPerTurn).toFixed(1)}×`,
    );
    console.log(
      `ratio chart alone / xstate floor: ${(chart / floor).toFixed(2)}×; runtime on top of the chart (memory, zod on write): ${f(mem.median.usPerTurn - chart)} µs/turn`,
    );
    console.log(
      `fdatasync on this machine: median ${f(fsync.medianMs * 1000)} µs, mean ${f(fsync.meanMs * 1000)} µs, p99 ${f(fsync.p99Ms * 1000)} µs`,
    );
    console.log(
      `durable turn cost: ${f(file.median.usPerTurn)} µs; two fdatasyncs + 100 µs budget ≈ ${f(2 * fsyncUs(fsync) + 100)} µs`,
    );
    const perCommit = (commits.ms * 1000) / commits.count;
    console.log(
      `commits in the durable run: ${(commits.count / rounds).toFixed(2)} per turn, ${(commits.durable / rounds).toFixed(2)} of them durable (fdatasync), ${f(perCommit)} µs each (mean; ${Math.round(commits.bytes / commits.count)} bytes each); turn minus its commits: ${f(file.median.usPerTurn - (commits.ms * 1000) / rounds)} µs`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Commits of the last file-store run: how many (durable ones apart), their total time, the bytes. */
const commits = { count: 0, durable: 0, ms: 0, bytes: 0 };

/** A run on a fresh file store (its own directory: the benchmark's ids repeat). */
async function onFileStore(parent: string, rounds: number): Promise<LoopBench> {
  const dir = await mkdtemp(path.join(parent, 'store-'));
  const store = await openFileStore(dir);
  // Time every commit (one append = one write + one fdatasync) to set the turn against its disk cost.
  const append = store.append.bind(store);
  commits.count = 0;
  commits.durable = 0;
  commits.ms = 0;
  store.append = async (session, records, options) => {
    const t0 = performance.now();
    await append(session, records, options);
    commits.ms += performance.now() - t0;
    commits.count++;
    if (options.durable !== false) commits.durable++;
  };
  try {
    return await benchStatechart(rounds, store);
  } finally {
    await store.close();
    // What the commits wrote is what the streams hold: measured after the run, not inside it.
    const sessions = path.join(dir, 'sessions');
    const files = (await readdir(sessions)).filter((f) => f.endsWith('.jsonl'));
    commits.bytes = 0;
    for (const f of files) commits.bytes += (await stat(path.join(sessions, f))).size;
  }
}

function fsyncUs(l: FdatasyncLatency): number {
  return l.medianMs * 1000;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchLoop(Number(process.argv[2] ?? 10_000));
}
