/**
 * File store benchmark: durable append throughput, append cost as the stream grows, read+validate
 * throughput, and this machine's fdatasync latency (the floor every durable commit stands on).
 *   npm run bench:build && node node_modules/.cache/reloop-bench/bench/store.js [dir]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { ZERO_USAGE } from '../src/model/messages.ts';
import {
  type FdatasyncLatency,
  type FileEventStore,
  fdatasyncLatency,
  openFileStore,
} from '../src/store/fileStore.ts';
import {
  CURRENT_SCHEMA_VERSION,
  type LogRecord,
  type RecordData,
  type RecordType,
} from '../src/store/records.ts';

export interface StoreBenchResult {
  dir: string;
  fdatasync: FdatasyncLatency;
  appendsPerSec: { oneRecord: number; tenRecords: number };
  recordsPerSec: { oneRecord: number; tenRecords: number };
  /** Median µs per durable one-record append with the stream at each size. */
  appendMicros: Record<number, number>;
  ratio100kTo1k: number;
  readRecordsPerSec: Record<number, number>;
}

const SIZES = [1_000, 10_000, 100_000] as const;
const MAX_RATIO = 1.5;

/** Records shaped like a real tool round (model response, tool start/finish, transitions), ~300 B each. */
class Stream {
  seq = 0;
  constructor(readonly session: string) {}

  private rec<T extends RecordType>(type: T, data: RecordData<T>): LogRecord {
    this.seq++;
    const at = 1_700_000_000_000 + this.seq;
    return {
      v: CURRENT_SCHEMA_VERSION,
      seq: this.seq,
      at,
      session: this.session,
      run: 'run-1',
      type,
      data,
    } as LogRecord;
  }

  next(): LogRecord {
    const n = this.seq + 1;
    switch (n % 5) {
      case 0:
        return this.rec('model.responded', {
          purpose: 'turn',
          response: {
            id: `msg_${n}`,
            model: 'claude-bench',
            content: [
              { type: 'text', text: 'Let me look at the failing test and the function it exercises.' },
              { type: 'tool_use', id: `tu_${n}`, name: 'Read', input: { path: 'src/math.ts' } },
            ],
            stopReason: 'tool_use',
            usage: { ...ZERO_USAGE, inputTokens: 1200, outputTokens: 80 },
          },
        });
      case 1:
        return this.rec('tool.started', {
          toolUseId: `tu_${n}`,
          name: 'Read',
          input: { path: 'src/math.ts' },
          index: 0,
          readOnly: true,
        });
      case 2:
        return this.rec('tool.finished', {
          toolUseId: `tu_${n}`,
          name: 'Read',
          index: 0,
          outcome: 'ok',
          result: {
            content: 'export function add(a: number, b: number) {\n  return a - b;\n}\n',
            isError: false,
          },
          durationMs: 3,
        });
      default:
        return this.rec('transition', {
          from: 'dispatchingTools',
          to: 'building',
          trigger: 'xstate.done.actor.tools',
          reason: 'tool_result_continuation',
        });
    }
  }

  batch(n: number): LogRecord[] {
    return Array.from({ length: n }, () => this.next());
  }
}

/** Milliseconds one durable append of `perCommit` records takes. */
async function appendOnce(store: FileEventStore, s: Stream, perCommit: number): Promise<number> {
  const expectedSeq = s.seq;
  const batch = s.batch(perCommit);
  const t0 = performance.now();
  await store.append(s.session, batch, { expectedSeq });
  return performance.now() - t0;
}

async function fillTo(store: FileEventStore, s: Stream, target: number): Promise<void> {
  while (s.seq < target) {
    const expectedSeq = s.seq;
    await store.append(s.session, s.batch(Math.min(5_000, target - s.seq)), { expectedSeq });
  }
}

/** Records/s of a full read+validate, repeated up to ~100k records so small streams are not all warm-up. */
async function readRate(store: FileEventStore, session: string, size: number): Promise<number> {
  for await (const _ of store.read(session, { toSeq: 1_000 })); // warm the JIT once per size
  const reps = Math.max(1, Math.round(100_000 / size));
  let n = 0;
  const t0 = performance.now();
  for (let i = 0; i < reps; i++) for await (const _ of store.read(session)) n++;
  return n / ((performance.now() - t0) / 1000);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

export async function benchStore(
  options: { dir?: string; log?: (line: string) => void } = {},
): Promise<StoreBenchResult> {
  const log = options.log ?? console.log;
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'reloop-bench-store-')));
  const store = await openFileStore(dir, { onWarning: (w) => log(`warning: ${w.message}`) });
  try {
    log(`store bench — file store in ${dir}`);
    const fdatasync = await fdatasyncLatency(dir, 300);
    log(
      `fdatasync latency: median ${fmt(fdatasync.medianMs, 3)} ms, p99 ${fmt(fdatasync.p99Ms, 3)} ms, mean ${fmt(fdatasync.meanMs, 3)} ms (${fdatasync.samples} samples)`,
    );

    // Everything compared is measured interleaved, so disk and CPU noise (a shared machine) hits every
    // variant alike instead of whichever happened to run during a busy second.
    const tput = [new Stream('tput-1'), new Stream('tput-10')] as const;
    const one: number[] = [];
    const ten: number[] = [];
    for (let i = 0; i < 1_000; i++) {
      one.push(await appendOnce(store, tput[0], 1));
      ten.push(await appendOnce(store, tput[1], 10));
    }
    const appendsPerSec = {
      oneRecord: one.length / (sum(one) / 1000),
      tenRecords: ten.length / (sum(ten) / 1000),
    };
    const recordsPerSec = { oneRecord: appendsPerSec.oneRecord, tenRecords: appendsPerSec.tenRecords * 10 };
    log('durable appends (one write + one fdatasync per append call, 1 000 of each):');
    log(
      `  1 record/commit  : ${fmt(appendsPerSec.oneRecord)} appends/s = ${fmt(recordsPerSec.oneRecord)} records/s`,
    );
    log(
      `  10 records/commit: ${fmt(appendsPerSec.tenRecords)} appends/s = ${fmt(recordsPerSec.tenRecords)} records/s`,
    );

    const streams = SIZES.map((size) => new Stream(`at-${size}`));
    for (const [i, s] of streams.entries()) await fillTo(store, s, SIZES[i] ?? 0);
    const times = streams.map(() => [] as number[]);
    for (let round = 0; round < 500; round++) {
      for (const [i, s] of streams.entries()) times[i]?.push(await appendOnce(store, s, 1));
    }
    const appendMicros: Record<number, number> = {};
    const readRecordsPerSec: Record<number, number> = {};
    log('stream size   append µs/record (1/commit, median of 500)   read+validate records/s');
    for (const [i, size] of SIZES.entries()) {
      appendMicros[size] = median(times[i] ?? []) * 1000;
      readRecordsPerSec[size] = await readRate(store, streams[i]?.session ?? '', size);
      log(
        `  ${fmt(size).padStart(7)}   ${fmt(appendMicros[size] ?? 0, 1).padStart(10)}${' '.repeat(35)}${fmt(readRecordsPerSec[size] ?? 0).padStart(10)}`,
      );
    }
    const ratio100kTo1k = (appendMicros[100_000] ?? 0) / (appendMicros[1_000] ?? 1);
    log(
      `append cost ratio 100k/1k: ${fmt(ratio100kTo1k, 2)} (${ratio100kTo1k <= MAX_RATIO ? 'ok' : 'FAIL'}, must be ≤ ${MAX_RATIO})`,
    );
    log(`catalog.json rewrites during the whole run: ${store.catalogWrites}`);
    return { dir, fdatasync, appendsPerSec, recordsPerSec, appendMicros, ratio100kTo1k, readRecordsPerSec };
  } finally {
    await store.close();
    if (!options.dir) await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await benchStore({ dir: process.argv[2] });
  if (result.ratio100kTo1k > MAX_RATIO) process.exitCode = 1;
}
