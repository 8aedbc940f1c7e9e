/**
 * The log's size and its long lines:
 * - log bytes / content bytes for a session whose tool results are 10 KB each, written by the
 *   real runtime on the file store (schema v2), beside the same log written the v1 way (every
 *   derived record holding its content) as the baseline;
 * - reading a stream whose one record is a 12 / 25 / 50 / 100 MB line (`store.read`, i.e. what
 *   `reloop log` does), beside `readFile` + `JSON.parse` of the same file in the same run.
 *   node --import tsx bench/log.ts
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { z } from 'zod';
import type { Script } from '../src/model/script.ts';
import { ScriptedModelClient } from '../src/model/scripted.ts';
import { nanoidIds, seededRandom, VirtualClock } from '../src/runtime/determinism.ts';
import { Session } from '../src/runtime/session.ts';
import { openFileStore } from '../src/store/fileStore.ts';
import { CURRENT_SCHEMA_VERSION, type LogRecord } from '../src/store/records.ts';
import type { Tool } from '../src/tools/types.ts';
import { asV1 } from '../test/store/support/asV1.ts';

/** The repository's TypeScript sources, found from here whether this runs from bench/ or compiled. */
function sourcesDir(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'src', 'store', 'records.ts'))) return join(dir, 'src');
    if (dirname(dir) === dir) throw new Error('bench/log.ts: the repository sources were not found');
  }
}
const SRC_DIR = sourcesDir();
const ROUNDS = 200;
const RESULT_BYTES = 10 * 1024;
const TARGET_RATIO = 1.25;

/**
 * What a Read of one of this repository's source files returns (`cat -n` style lines, as the Read
 * tool formats them), cut to 10 KB: realistic text for escaping (tabs, newlines, quotes).
 */
const SOURCES = readdirSync(SRC_DIR, { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.ts'))
  .sort()
  .map((f) => readFileSync(join(SRC_DIR, f), 'utf8'))
  .filter((text) => Buffer.byteLength(text) > RESULT_BYTES * 1.2);

function readResult(i: number): string {
  const lines = SOURCES[i % SOURCES.length]!.split('\n').map((l, n) => `${String(n + 1).padStart(6)}\t${l}`);
  return Buffer.from(lines.join('\n')).subarray(0, RESULT_BYTES).toString('utf8');
}

const readTool: Tool<{ path: string }> = {
  name: 'Read',
  description: 'reads a file',
  inputSchema: z.object({ path: z.string() }),
  isReadOnly: true,
  isConcurrencySafe: () => true,
  async call(input) {
    return { content: readResult(Number(input.path.replace(/\D/g, ''))) };
  },
};

function script(): Script {
  const turns: Script['turns'] = [];
  for (let i = 0; i < ROUNDS; i++) {
    turns.push({
      content: [
        { type: 'text', text: `Reading src/file${i}.ts next.` },
        { type: 'tool_use', id: `toolu_${i}`, name: 'Read', input: { path: `src/file${i}.ts` } },
      ],
      stop_reason: 'tool_use',
      usage: {
        input_tokens: 1000,
        output_tokens: 40,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
      },
    });
  }
  turns.push({ text: 'All files read.', stop_reason: 'end_turn' });
  return { turns };
}

/**
 * The content a log must hold: the prompt, every response's blocks, every tool result — as raw
 * UTF-8 bytes, and as the JSON string bytes that storing it once in a JSON log costs at least
 * (tabs, newlines and quotes escaped).
 */
function contentBytes(records: readonly LogRecord[]): { raw: number; json: number } {
  let raw = 0;
  let json = 0;
  const add = (text: string) => {
    raw += Buffer.byteLength(text);
    json += Buffer.byteLength(JSON.stringify(text)) - 2;
  };
  for (const r of records) {
    if (r.type === 'user.message') add(JSON.stringify(r.data.message.content));
    if (r.type === 'model.responded') add(JSON.stringify(r.data.response.content));
    if (r.type === 'tool.finished') {
      const c = r.data.result.content;
      add(typeof c === 'string' ? c : JSON.stringify(c));
    }
  }
  return { raw, json };
}

export async function benchLogSize(): Promise<{ ratio: number; v1Ratio: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'reloop-bench-log-'));
  try {
    const store = await openFileStore(dir, { onWarning: () => undefined });
    const session = await Session.create({
      store,
      model: new ScriptedModelClient(script()),
      tools: [readTool],
      clock: new VirtualClock(),
      random: seededRandom(1),
      ids: nanoidIds, // ids as long as real ones: they are in every record
      settings: { maxTurns: ROUNDS + 1, contextWindow: 100_000_000, autoCompactThreshold: 100_000_000 },
    });
    await session.submit('Read every file under src/.');
    const records: LogRecord[] = [];
    for await (const r of store.read(session.id)) records.push(r);
    await store.close();
    const logBytes = (await stat(join(dir, 'sessions', `${session.id}.jsonl`))).size;
    const v1Bytes = asV1(records).reduce((n, r) => n + Buffer.byteLength(JSON.stringify(r)) + 1, 0);
    const content = contentBytes(records);
    const ratio = logBytes / content.json;
    const v1Ratio = v1Bytes / content.json;
    const n = (x: number) => x.toLocaleString('en-US');
    console.log(`\n## Log size: ${ROUNDS} tool rounds, 10 KB tool results (file store)`);
    console.log('| log | bytes | records | / content as JSON | / content as raw bytes |');
    console.log('|---|---|---|---|---|');
    console.log(
      `| content, as JSON strings (raw: ${n(content.raw)}) | ${n(content.json)} | | 1.000 | ${(content.json / content.raw).toFixed(3)} |`,
    );
    console.log(
      `| schema v1 (baseline: the same log, derived records holding their content) | ${n(v1Bytes)} | ${records.length} | ${v1Ratio.toFixed(3)} | ${(v1Bytes / content.raw).toFixed(3)} |`,
    );
    console.log(
      `| **schema v2 (this version)** | ${n(logBytes)} | ${records.length} | **${ratio.toFixed(3)}** | ${(logBytes / content.raw).toFixed(3)} |`,
    );
    console.log(
      `target log / content ≤ ${TARGET_RATIO}: ${ratio <= TARGET_RATIO ? 'met' : 'NOT met'} (content counted as the JSON it is stored as)`,
    );
    return { ratio, v1Ratio };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function benchLongLines(sizesMb = [12, 25, 50, 100]): Promise<void> {
  console.log('\n## Reading a stream with one long line (store.read, what `reloop log` does)');
  console.log('| line | store.read ms | ms per MB | baseline readFile + JSON.parse ms | store / baseline |');
  console.log('|---|---|---|---|---|');
  for (const mb of sizesMb) {
    const dir = await mkdtemp(join(tmpdir(), 'reloop-bench-line-'));
    try {
      const store = await openFileStore(dir, { onWarning: () => undefined });
      const base = { v: CURRENT_SCHEMA_VERSION, at: 1, session: 'long', run: null } as const;
      await store.append(
        'long',
        [
          { ...base, seq: 1, type: 'session.created', data: {} },
          {
            ...base,
            seq: 2,
            type: 'user.message',
            data: { message: { role: 'user', content: 'x'.repeat(mb * 1024 * 1024) } },
          },
        ] as LogRecord[],
        { expectedSeq: 0 },
      );
      await store.close();
      const file = join(dir, 'sessions', 'long.jsonl');
      const b0 = performance.now();
      for (const line of (await readFile(file, 'utf8')).split('\n')) if (line) JSON.parse(line);
      const baseline = performance.now() - b0;
      const reader = await openFileStore(dir, { onWarning: () => undefined });
      const r0 = performance.now();
      let n = 0;
      for await (const _ of reader.read('long')) n++;
      const ms = performance.now() - r0;
      await reader.close();
      if (n !== 2) throw new Error(`read ${n} records`);
      console.log(
        `| ${mb} MB | ${ms.toFixed(0)} | ${(ms / mb).toFixed(1)} | ${baseline.toFixed(0)} | ${(ms / baseline).toFixed(2)} |`,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await benchLogSize();
  await benchLongLines();
}
