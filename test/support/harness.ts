import { z } from 'zod';
import type { StopHook, StopHookResult } from '../../src/hooks/types.ts';
import { historyProblems } from '../../src/model/history.ts';
import { parseScript } from '../../src/model/script.ts';
import { ScriptedModelClient } from '../../src/model/scripted.ts';
import { counterIds, seededRandom, VirtualClock } from '../../src/runtime/determinism.ts';
import { Session, type SessionOptions } from '../../src/runtime/session.ts';
import { MemoryEventStore } from '../../src/store/memoryStore.ts';
import type { LogRecord } from '../../src/store/records.ts';
import type { EventStore } from '../../src/store/types.ts';
import type { AnyTool, Tool } from '../../src/tools/types.ts';
import { readLog } from './logRecords.ts';

/** A session on a scripted model, a virtual clock and a memory store: no real time, no network. */
export async function scriptedSession(
  turns: unknown[],
  extra: Partial<SessionOptions> & { store?: EventStore } = {},
) {
  const store = extra.store ?? new MemoryEventStore();
  const clock = new VirtualClock();
  let session: Session | undefined;
  const client = new ScriptedModelClient(parseScript({ turns }), { requestAbort: () => session?.abort() });
  session = await Session.create({
    store,
    model: client,
    clock,
    random: seededRandom(42),
    ids: counterIds(),
    cwd: process.cwd(),
    tools: [echoTool],
    ...extra,
  });
  const s = session;
  return {
    session: s,
    client,
    clock,
    store,
    records: (): Promise<LogRecord[]> => readLog(store, s.id),
    async reasons(): Promise<string[]> {
      const out: string[] = [];
      for await (const r of store.read(s.id)) if (r.type === 'transition') out.push(r.data.reason);
      return out;
    },
    historyProblems: () => historyProblems(s.state.messages.view()),
  };
}

export const echoTool: Tool<{ text: string }> = {
  name: 'echo',
  description: 'Echoes its input.',
  inputSchema: z.object({ text: z.string() }),
  isReadOnly: true,
  isConcurrencySafe: () => true,
  async call(input) {
    return { content: `echo: ${input.text}` };
  },
};

export function toolTurn(calls: { name: string; input: unknown; id?: string }[], stopReason = 'tool_use') {
  return {
    content: calls.map((c, i) => ({
      type: 'tool_use',
      id: c.id ?? `tu_${i}_${c.name}`,
      name: c.name,
      input: c.input,
    })),
    stop_reason: stopReason,
    usage: { input_tokens: 100, output_tokens: 20 },
  };
}

export function textTurn(
  text: string,
  stopReason = 'end_turn',
  usage = { input_tokens: 100, output_tokens: 10 },
) {
  return { text, stop_reason: stopReason, usage };
}

export function fixedStopHook(answers: StopHookResult[]): StopHook & { inputs: unknown[] } {
  const inputs: unknown[] = [];
  let i = 0;
  return {
    name: 'test-hook',
    inputs,
    async run(input) {
      inputs.push(input);
      return answers[Math.min(i++, answers.length - 1)]!;
    },
  };
}

export type { AnyTool };
