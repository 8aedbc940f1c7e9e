import { z } from 'zod';
import type { Script } from '../src/model/script.ts';
import { ScriptedModelClient } from '../src/model/scripted.ts';
import { counterIds, seededRandom, VirtualClock } from '../src/runtime/determinism.ts';
import { Session } from '../src/runtime/session.ts';
import { MemoryEventStore } from '../src/store/memoryStore.ts';
import type { LogRecord } from '../src/store/records.ts';
import type { Tool } from '../src/tools/types.ts';

/** The benchmarks' workload: a tool that does nothing, asked for once per turn. */
export const noop: Tool<{ n: number }> = {
  name: 'noop',
  description: 'does nothing',
  inputSchema: z.object({ n: z.number() }),
  isReadOnly: true,
  isConcurrencySafe: () => true,
  async call() {
    return { content: 'ok' };
  },
};

/** `rounds` turns that each ask for `noop`, then a final answer. */
export function noopScript(rounds: number): Script {
  const turns: Script['turns'] = [];
  for (let i = 0; i < rounds; i++) {
    turns.push({
      content: [{ type: 'tool_use', id: `t${i}`, name: 'noop', input: { n: i } }],
      stop_reason: 'tool_use',
      usage: {
        input_tokens: 10,
        output_tokens: 5,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
      },
    });
  }
  turns.push({ text: 'done', stop_reason: 'end_turn', usage: undefined });
  return { turns };
}

/** A real runtime log of `rounds` noop rounds (~10 records each), written by the memory store. */
export async function noopLog(rounds: number): Promise<LogRecord[]> {
  const store = new MemoryEventStore({ validate: false });
  const session = await Session.create({
    store,
    model: new ScriptedModelClient(noopScript(rounds)),
    tools: [noop],
    clock: new VirtualClock(),
    random: seededRandom(1),
    ids: counterIds('bench-'),
    settings: { maxTurns: rounds + 1, contextWindow: 100_000_000 },
  });
  await session.submit('go');
  const out: LogRecord[] = [];
  for await (const r of store.read(session.id)) out.push(r);
  return out;
}
