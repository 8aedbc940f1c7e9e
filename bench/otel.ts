import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { ScriptedModelClient } from '../src/model/scripted.ts';
import { createOtlpTracing, reloopResource } from '../src/otel/provider.ts';
import { ReadableSpanSink } from '../src/otel/readableSpans.ts';
import type { SpanData, SpanSink } from '../src/otel/spanData.ts';
import { TraceTree } from '../src/otel/traceTree.ts';
import { counterIds, seededRandom, VirtualClock } from '../src/runtime/determinism.ts';
import { Session } from '../src/runtime/session.ts';
import { openFileStore } from '../src/store/fileStore.ts';
import { MemoryEventStore } from '../src/store/memoryStore.ts';
import type { LogRecord } from '../src/store/records.ts';
import type { EventStore } from '../src/store/types.ts';
import { noop, noopLog, noopScript } from './noopRounds.ts';

/**
 * OpenTelemetry (docs/otel.md, BENCHMARKS §14): what live export adds to a tool round (the same
 * rounds with the exporter on and off, alternating, in one run; the collector is another
 * process that takes every request), and how fast `export otel` turns a 100 000-record log into
 * spans: the translator alone, then ReadableSpans, then serialised as OTLP/JSON and protobuf,
 * and the whole command as a user runs it (wall and CPU time: the host is shared).
 */

/** The repository root: this file runs compiled, under node_modules/.cache/reloop-bench/bench. */
function repoRoot(): string {
  const here = fileURLToPath(import.meta.url);
  const cache = here.lastIndexOf(`${path.sep}node_modules${path.sep}`);
  return cache >= 0 ? here.slice(0, cache) : path.resolve(path.dirname(here), '..');
}
const CLI = path.join(repoRoot(), 'bin', 'reloop.js');

/** A collector stand-in in its own process: reads every request, answers 200. */
async function startCollector(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `const s=require('http').createServer((q,r)=>{q.resume();q.on('end',()=>{r.writeHead(200,{'content-type':'application/x-protobuf'});r.end()})});s.listen(0,'127.0.0.1',()=>console.log(s.address().port))`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const [line] = (await once(child.stdout!, 'data')) as [Buffer];
  return { url: `http://127.0.0.1:${line.toString().trim()}`, child };
}

async function rounds(
  n: number,
  store: EventStore,
  traced: string | null,
): Promise<{ us: number; cpuUs: number; flushMs: number; exported: string }> {
  const tracing = traced ? createOtlpTracing({ endpoint: traced }) : null;
  const session = await Session.create({
    store,
    model: new ScriptedModelClient(noopScript(n)),
    tools: [noop],
    clock: new VirtualClock(),
    random: seededRandom(1),
    ids: counterIds(`otel-${Math.random().toString(36).slice(2)}-`),
    settings: { maxTurns: n + 1, contextWindow: 100_000_000 },
    ...(tracing ? { tracerProvider: tracing.provider } : {}),
  });
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await session.submit('go');
  const us = ((performance.now() - t0) * 1000) / n;
  const cpu = process.cpuUsage(c0);
  if (result.status !== 'completed') throw new Error(`bench run ended ${result.status}`);
  const f0 = performance.now();
  const stats = tracing ? await tracing.shutdown(30_000) : null;
  return {
    us,
    cpuUs: (cpu.user + cpu.system) / n,
    flushMs: performance.now() - f0,
    exported: stats ? `${stats.exported}/${stats.ended}` : '',
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

async function liveOverhead(collector: string, reps: number): Promise<void> {
  console.log('\n### Live export: a tool round with the exporter off and on (same run, alternating)');
  console.log(
    '| store | rounds | off µs/round | on µs/round | added (wall) | off CPU µs/round | on CPU µs/round | added (CPU) | spans exported | final flush ms |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  const dir = await mkdtemp(path.join(tmpdir(), 'reloop-bench-otel-live-'));
  try {
    for (const [name, n, make] of [
      // A zero-latency loop on the memory store never waits for I/O: the exporter's requests
      // cannot go out during the run, its queue fills and drops (counted); the worst case for CPU.
      ['memory (zod on write)', 2_000, async () => new MemoryEventStore()],
      ['file (durable)', 1_000, () => openFileStore(dir)],
    ] as const) {
      const off: number[] = [];
      const on: number[] = [];
      const offCpu: number[] = [];
      const onCpu: number[] = [];
      const flush: number[] = [];
      let exported = '';
      // Warm-up of both configurations.
      for (const traced of [null, collector]) {
        const s = await make();
        await rounds(Math.min(n, 1_000), s, traced);
        await s.close();
      }
      for (let i = 0; i < reps; i++) {
        for (const traced of i % 2 === 0 ? [null, collector] : [collector, null]) {
          const s = await make();
          const r = await rounds(n, s, traced);
          await s.close();
          (traced ? on : off).push(r.us);
          (traced ? onCpu : offCpu).push(r.cpuUs);
          if (traced) {
            flush.push(r.flushMs);
            exported = r.exported;
          }
        }
      }
      const pct = (a: number, b: number) => `${(((b - a) / a) * 100).toFixed(1)} %`;
      const [a, b, ca, cb] = [median(off), median(on), median(offCpu), median(onCpu)];
      console.log(
        `| ${name} | ${n} | ${a.toFixed(1)} | ${b.toFixed(1)} | ${pct(a, b)} | ${ca.toFixed(1)} | ${cb.toFixed(1)} | ${pct(ca, cb)} | ${exported} | ${median(flush).toFixed(0)} |`,
      );
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

class CountingSink implements SpanSink {
  spans = 0;
  end(_span: SpanData): void {
    this.spans++;
  }
}

/** Wall and CPU ms of one pass of the translator over `log` into `sink` (plus `after`). */
function translate(log: readonly LogRecord[], sink: SpanSink, after?: () => void): Timing {
  const tree = new TraceTree(sink);
  const t = tree.attach(log[0]!.session);
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (const r of log) t.push(r);
  after?.();
  const cpu = process.cpuUsage(c0);
  return { ms: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000 };
}

interface Timing {
  ms: number;
  cpuMs: number | null;
}

const medianTiming = (runs: Timing[]): Timing => {
  const cpu = runs.map((r) => r.cpuMs).filter((c): c is number => c !== null);
  return { ms: median(runs.map((r) => r.ms)), cpuMs: cpu.length > 0 ? median(cpu) : null };
};

/** The whole command as a user runs it: wall ms, and its CPU seconds when /usr/bin/time is there. */
async function cli(args: string[]): Promise<Timing> {
  const timed = existsSync('/usr/bin/time');
  const argv = timed ? ['-f', '%U %S', process.execPath, CLI, ...args] : [CLI, ...args];
  const t0 = performance.now();
  const child = spawn(timed ? '/usr/bin/time' : process.execPath, argv, {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const [code] = (await once(child, 'exit')) as [number];
  const ms = performance.now() - t0;
  if (code !== 0) throw new Error(`reloop ${args.join(' ')} exited ${code}: ${stderr}`);
  const cpu = /([\d.]+) ([\d.]+)\s*$/.exec(stderr);
  return { ms, cpuMs: cpu ? (Number(cpu[1]) + Number(cpu[2])) * 1000 : null };
}

async function exportRate(collector: string, reps: number): Promise<void> {
  const log = await noopLog(10_000);
  const n = log.length;
  const rate = (ms: number) => Math.round((n / ms) * 1000).toLocaleString('en-US');
  console.log(`\n### export otel of a ${n.toLocaleString('en-US')}-record log (${reps} runs each, median)`);
  console.log('| stage | ms | records/s | CPU ms | records per CPU-second | spans |');
  console.log('|---|---|---|---|---|---|');
  const counting = new CountingSink();
  translate(log, new CountingSink());
  const alone = medianTiming(Array.from({ length: reps }, () => translate(log, counting)));
  const spans = counting.spans / reps;
  const row = (name: string, t: Timing) =>
    console.log(
      `| ${name} | ${t.ms.toFixed(0)} | ${rate(t.ms)} | ${t.cpuMs === null ? '' : t.cpuMs.toFixed(0)} | ${t.cpuMs === null ? '' : rate(t.cpuMs)} | ${spans} |`,
    );
  row('translator alone (records in memory → span data)', alone);
  const resource = reloopResource({ version: '0' });
  const scope = { name: 'reloop', version: '0' };
  const readable = () => {
    let batch: ReadableSpan[] = [];
    return translate(
      log,
      new ReadableSpanSink(
        (s) => {
          batch.push(s);
          if (batch.length >= 512) batch = [];
        },
        resource,
        scope,
      ),
    );
  };
  readable();
  row('+ ReadableSpans (what the OTLP exporters take)', medianTiming(Array.from({ length: reps }, readable)));
  const serialised = (serializer: { serializeRequest(s: ReadableSpan[]): Uint8Array | undefined }) => () => {
    const batch: ReadableSpan[] = [];
    let bytes = 0;
    const timing = translate(
      log,
      new ReadableSpanSink(
        (s) => {
          batch.push(s);
          if (batch.length >= 512) bytes += serializer.serializeRequest(batch.splice(0))?.length ?? 0;
        },
        resource,
        scope,
      ),
      () => {
        bytes += serializer.serializeRequest(batch.splice(0))?.length ?? 0;
      },
    );
    return { ...timing, bytes };
  };
  for (const [name, serializer] of [
    ['OTLP/JSON', JsonTraceSerializer],
    ['OTLP/protobuf', ProtobufTraceSerializer],
  ] as const) {
    const once = serialised(serializer);
    once();
    const runs = Array.from({ length: reps }, once);
    row(`+ ${name} serialisation (${(runs[0]!.bytes / 1e6).toFixed(1)} MB)`, medianTiming(runs));
  }

  const dir = await mkdtemp(path.join(tmpdir(), 'reloop-bench-otel-export-'));
  try {
    const store = await openFileStore(dir);
    const id = 'bench-otel-100k';
    await store.append(
      id,
      log.map((r) => ({ ...r, session: id }) as LogRecord),
      { expectedSeq: 0 },
    );
    await store.close();
    const out = path.join(dir, 'out.json');
    const whole = async (args: string[]) => medianTiming(await series(reps, () => cli(args)));
    const version = await whole(['--version']);
    const toFile = await whole(['export', 'otel', id, '--out', out, '--store', dir]);
    const toCollector = await whole(['export', 'otel', id, '--endpoint', collector, '--store', dir]);
    row('whole command: `reloop export otel --out` (OTLP/JSON file)', toFile);
    row('whole command: `reloop export otel --endpoint` (OTLP/protobuf, collector process)', toCollector);
    console.log(
      `| for scale: \`reloop --version\` (start-up alone) | ${version.ms.toFixed(0)} | | ${version.cpuMs?.toFixed(0) ?? ''} | | |`,
    );
    const verdict = (ms: number | null) =>
      ms === null ? 'n/a' : (n / ms) * 1000 >= 100_000 ? 'met' : 'NOT met';
    console.log(
      `export otel of ${n} records ≥ 100 000 records/s, whole command: --out ${verdict(toFile.ms)} wall, ${verdict(toFile.cpuMs)} per CPU-second; --endpoint ${verdict(toCollector.ms)} wall, ${verdict(toCollector.cpuMs)} per CPU-second`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function series<T>(reps: number, f: () => Promise<T>): Promise<T[]> {
  await f();
  const out: T[] = [];
  for (let i = 0; i < reps; i++) out.push(await f());
  return out;
}

export async function benchOtel(reps = Number(process.env.BENCH_REPS ?? 5)): Promise<void> {
  console.log('\n## OpenTelemetry: live export and export otel');
  const collector = await startCollector();
  try {
    await liveOverhead(collector.url, reps);
    await exportRate(collector.url, reps);
  } finally {
    collector.child.kill();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchOtel();
