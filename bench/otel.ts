import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BasicTracerProvider, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ScriptedModelClient } from '../src/model/scripted.ts';
import { logIdGenerator } from '../src/otel/ids.ts';
import { JsonLinesFileExporter } from '../src/otel/offline.ts';
import { createOtlpTracing } from '../src/otel/provider.ts';
import type { SpanData, SpanSink } from '../src/otel/spanData.ts';
import { TracerSink } from '../src/otel/tracerSink.ts';
import { TraceTree } from '../src/otel/traceTree.ts';
import { counterIds, seededRandom, VirtualClock } from '../src/runtime/determinism.ts';
import { Session } from '../src/runtime/session.ts';
import { openFileStore } from '../src/store/fileStore.ts';
import { MemoryEventStore } from '../src/store/memoryStore.ts';
import type { LogRecord } from '../src/store/records.ts';
import type { EventStore } from '../src/store/types.ts';
import { noop, noopLog, noopScript } from './noopRounds.ts';

/**
 * OpenTelemetry (docs/otel.md, BENCHMARKS §12): what live export adds to a tool round (the same
 * rounds with the exporter on and off, alternating, in one run; the collector is another
 * process that takes every request), and how fast `export otel` turns a 100 000-record log into
 * spans (the translator alone, with the SDK's spans, with OTLP/JSON serialisation, and the whole
 * command as a user runs it).
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
): Promise<{ us: number; flushMs: number }> {
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
  const t0 = performance.now();
  const result = await session.submit('go');
  const us = ((performance.now() - t0) * 1000) / n;
  if (result.status !== 'completed') throw new Error(`bench run ended ${result.status}`);
  const f0 = performance.now();
  const stats = tracing ? await tracing.shutdown(30_000) : null;
  if (stats && stats.exported !== stats.ended)
    throw new Error(`bench export dropped spans: ${JSON.stringify(stats)}`);
  return { us, flushMs: performance.now() - f0 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

async function liveOverhead(collector: string, reps: number): Promise<void> {
  console.log('\n### Live export: a tool round with the exporter off and on (same run, alternating)');
  console.log('| store | rounds | off µs/round (median) | on µs/round (median) | added | final flush ms |');
  console.log('|---|---|---|---|---|---|');
  const dir = await mkdtemp(path.join(tmpdir(), 'reloop-bench-otel-live-'));
  try {
    for (const [name, n, make] of [
      ['memory (zod on write)', 5_000, async () => new MemoryEventStore()],
      ['file (durable)', 1_000, () => openFileStore(dir)],
    ] as const) {
      const off: number[] = [];
      const on: number[] = [];
      const flush: number[] = [];
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
          if (traced) flush.push(r.flushMs);
        }
      }
      const a = median(off);
      const b = median(on);
      console.log(
        `| ${name} | ${n} | ${a.toFixed(1)} | ${b.toFixed(1)} | ${(((b - a) / a) * 100).toFixed(1)} % | ${median(flush).toFixed(0)} |`,
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

/** Ends spans on the provider and throws them away (the SDK's span cost without an exporter). */
class Drop implements SpanProcessor {
  spans: ReadableSpan[] = [];
  onStart(): void {}
  onEnd(span: ReadableSpan): void {
    this.spans.push(span);
    if (this.spans.length >= 512) this.spans = [];
  }
  async forceFlush(): Promise<void> {}
  async shutdown(): Promise<void> {}
}

function translate(log: readonly LogRecord[], sink: SpanSink): number {
  const tree = new TraceTree(sink);
  const t = tree.attach(log[0]!.session);
  const t0 = performance.now();
  for (const r of log) t.push(r);
  return performance.now() - t0;
}

async function cli(args: string[]): Promise<number> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
  const [code] = (await once(child, 'exit')) as [number];
  if (code !== 0) throw new Error(`reloop ${args.join(' ')} exited ${code}`);
  return performance.now() - t0;
}

async function exportRate(collector: string, reps: number): Promise<void> {
  const log = await noopLog(10_000);
  const n = log.length;
  const rate = (ms: number) => Math.round((n / ms) * 1000).toLocaleString('en-US');
  console.log(`\n### export otel of a ${n.toLocaleString('en-US')}-record log (${reps} runs each, median)`);
  console.log('| stage | ms | records/s | spans |');
  console.log('|---|---|---|---|');
  const counting = new CountingSink();
  translate(log, new CountingSink());
  const alone = median(Array.from({ length: reps }, () => translate(log, counting)));
  const spans = counting.spans / reps;
  console.log(
    `| translator alone (records in memory → span data) | ${alone.toFixed(0)} | ${rate(alone)} | ${spans} |`,
  );
  const sdk = () => {
    const provider = new BasicTracerProvider({
      idGenerator: logIdGenerator,
      spanLimits: { eventCountLimit: 1_000_000 },
      spanProcessors: [new Drop()],
    });
    return translate(log, new TracerSink(provider));
  };
  sdk();
  const withSdk = median(Array.from({ length: reps }, sdk));
  console.log(
    `| + the SDK's spans (TracerSink → BasicTracerProvider) | ${withSdk.toFixed(0)} | ${rate(withSdk)} | ${spans} |`,
  );
  const dir = await mkdtemp(path.join(tmpdir(), 'reloop-bench-otel-export-'));
  try {
    const serialise = () => {
      const exporter = new JsonLinesFileExporter(path.join(dir, 'spans.json'));
      const batch: ReadableSpan[] = [];
      const provider = new BasicTracerProvider({
        idGenerator: logIdGenerator,
        spanLimits: { eventCountLimit: 1_000_000 },
        spanProcessors: [
          {
            onStart() {},
            onEnd(s: ReadableSpan) {
              batch.push(s);
              if (batch.length >= 512) exporter.export(batch.splice(0), () => undefined);
            },
            async forceFlush() {},
            async shutdown() {},
          },
        ],
      });
      const ms = translate(log, new TracerSink(provider));
      const t0 = performance.now();
      exporter.export(batch.splice(0), () => undefined);
      void exporter.shutdown();
      return ms + performance.now() - t0;
    };
    serialise();
    const withJson = median(Array.from({ length: reps }, serialise));
    console.log(
      `| + OTLP/JSON serialisation to a file | ${withJson.toFixed(0)} | ${rate(withJson)} | ${spans} |`,
    );

    const store = await openFileStore(dir);
    const id = 'bench-otel-100k';
    await store.append(
      id,
      log.map((r) => ({ ...r, session: id }) as LogRecord),
      { expectedSeq: 0 },
    );
    await store.close();
    const out = path.join(dir, 'out.json');
    const baseline = median(await series(reps, () => cli(['--version'])));
    const toFile = median(
      await series(reps, () => cli(['export', 'otel', id, '--out', out, '--store', dir])),
    );
    const bytes = (await stat(out)).size;
    const toCollector = median(
      await series(reps, () => cli(['export', 'otel', id, '--endpoint', collector, '--store', dir])),
    );
    console.log(
      `| whole command: \`reloop export otel --out\` (${(bytes / 1e6).toFixed(1)} MB of OTLP/JSON) | ${toFile.toFixed(0)} | ${rate(toFile)} | ${spans} |`,
    );
    console.log(
      `| whole command: \`reloop export otel --endpoint\` (OTLP/protobuf to a collector process) | ${toCollector.toFixed(0)} | ${rate(toCollector)} | ${spans} |`,
    );
    console.log(`| for scale: \`reloop --version\` (start-up alone) | ${baseline.toFixed(0)} | | |`);
    const verdict = (ms: number) => (n / ms) * 1000 >= 100_000;
    console.log(
      `export otel of ${n} records ≥ 100 000 records/s: translator ${verdict(alone) ? 'met' : 'NOT met'}, with the SDK ${verdict(withSdk) ? 'met' : 'NOT met'}, whole command --out ${verdict(toFile) ? 'met' : 'NOT met'}, --endpoint ${verdict(toCollector) ? 'met' : 'NOT met'} (without start-up: ${rate(toFile - baseline)} / ${rate(toCollector - baseline)} records/s)`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function series(reps: number, f: () => Promise<number>): Promise<number[]> {
  await f();
  const out: number[] = [];
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
