/**
 * Writes the golden logs under test/fixtures/logs/ from real runs of the runtime. Run once
 * when a new golden log is wanted — never from the test suite: the point of a golden log is
 * that it was written by an older version and must keep replaying.
 *   node --import tsx scripts/freezeGoldenLogs.ts
 */
import { writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { parseScript } from '../src/model/script.ts';
import { ScriptedModelClient } from '../src/model/scripted.ts';
import { counterIds, seededRandom, VirtualClock } from '../src/runtime/determinism.ts';
import { Session, type SessionOptions } from '../src/runtime/session.ts';
import { MemoryEventStore } from '../src/store/memoryStore.ts';
import type { Tool } from '../src/tools/types.ts';

const echo: Tool<{ text: string }> = {
  name: 'echo',
  description: 'Echoes its input.',
  inputSchema: z.object({ text: z.string() }),
  isReadOnly: true,
  isConcurrencySafe: () => true,
  async call(input) {
    return { content: `echo: ${input.text}` };
  },
};
const usage = (i: number, o: number) => ({ input_tokens: i, output_tokens: o });
const tool = (id: string, text: string) => ({
  content: [{ type: 'tool_use', id, name: 'echo', input: { text } }],
  stop_reason: 'tool_use',
  usage: usage(100, 10),
});

async function freeze(
  name: string,
  turns: unknown[],
  prompts: string[],
  extra: Partial<SessionOptions> = {},
) {
  const store = new MemoryEventStore();
  let session: Session | undefined;
  const client = new ScriptedModelClient(parseScript({ turns }), { requestAbort: () => session?.abort() });
  session = await Session.create({
    store,
    model: client,
    tools: [echo],
    clock: new VirtualClock(),
    random: seededRandom(7),
    ids: counterIds('golden-'),
    cwd: '/golden',
    ...extra,
  });
  for (const p of prompts) await session.submit(p);
  const lines: string[] = [];
  for await (const r of store.read(session.id)) lines.push(JSON.stringify(r));
  await writeFile(new URL(`../test/fixtures/logs/${name}.jsonl`, import.meta.url), `${lines.join('\n')}\n`);
  console.log(`${name}: ${lines.length} records`);
}

await freeze(
  'v1-tools-retry-recovery',
  [
    tool('t1', 'a'),
    { error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } },
    { error: { status: 429, type: 'rate_limit_error', message: 'slow down', retry_after_ms: 1500 } },
    { text: 'cut', stop_reason: 'max_tokens', usage: usage(100, 8192) },
    { text: 'cut again', stop_reason: 'max_tokens', usage: usage(100, 64000) },
    { text: 'done', stop_reason: 'end_turn', usage: usage(100, 5) },
    { text: 'second run', stop_reason: 'end_turn', usage: usage(100, 5) },
  ],
  ['first', 'second'],
);
await freeze(
  'v1-compaction-stophook',
  [
    { ...tool('t1', 'big'), usage: usage(5000, 10) },
    { for: 'compaction', text: 'summary of the work', usage: usage(5000, 50) },
    {
      error: {
        status: 400,
        type: 'invalid_request_error',
        message: 'prompt is too long: 210000 tokens > 200000 maximum',
      },
    },
    { for: 'compaction', text: 'shorter summary', usage: usage(3000, 40) },
    { text: 'finished?', stop_reason: 'end_turn', usage: usage(100, 5) },
    { text: 'finished.', stop_reason: 'end_turn', usage: usage(100, 5) },
  ],
  ['compact me'],
  {
    settings: { autoCompactThreshold: 4000 },
    stopHooks: [
      {
        name: 'golden-hook',
        run: (() => {
          let n = 0;
          return async () =>
            n++ === 0 ? { decision: 'block', reason: 'tests fail' } : { decision: 'allow' };
        })(),
      },
    ],
  },
);
await freeze(
  'v1-abort-refusal-maxturns',
  [
    tool('t1', 'x'),
    { abort: true },
    { text: 'no', stop_reason: 'refusal', usage: usage(10, 1) },
    tool('t2', 'y'),
    tool('t3', 'z'),
  ],
  ['abort me', 'refuse me', 'loop'],
  { settings: { maxTurns: 2 } },
);
