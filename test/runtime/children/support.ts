import { z } from 'zod';
import { AgentCatalog } from '../../../src/agents/index.ts';
import { parseScript } from '../../../src/model/script.ts';
import { ScriptedModelClient } from '../../../src/model/scripted.ts';
import { loadRecords } from '../../../src/replay/loadSession.ts';
import { counterIds, seededRandom, VirtualClock } from '../../../src/runtime/determinism.ts';
import { Session, type SessionOptions } from '../../../src/runtime/session.ts';
import { MemoryEventStore } from '../../../src/store/memoryStore.ts';
import type { LogRecord } from '../../../src/store/records.ts';
import type { EventStore } from '../../../src/store/types.ts';
import type { Tool } from '../../../src/tools/types.ts';
import { echoTool } from '../../support/harness.ts';
import { recordsOf } from '../../support/logRecords.ts';

/** A parent session on a scripted model whose `children` answer its sub-agents, by Task call id. */
export async function parentSession(
  script: { turns: unknown[]; children?: Record<string, { turns: unknown[] }> },
  extra: Partial<SessionOptions> & { store?: EventStore } = {},
) {
  const store = extra.store ?? new MemoryEventStore();
  let session: Session | undefined;
  const client = new ScriptedModelClient(parseScript(script), { requestAbort: () => session?.abort() });
  session = await Session.create({
    store,
    model: client,
    clock: new VirtualClock(),
    random: seededRandom(42),
    ids: counterIds(),
    cwd: process.cwd(),
    tools: [echoTool],
    subAgents: { agents: new AgentCatalog() },
    ...extra,
  });
  const s = session;
  return {
    session: s,
    client,
    store,
    records: (id: string = s.id) => loadRecords(store, id),
    /** The child sessions the parent's log announces, in order. */
    async children(): Promise<string[]> {
      return recordsOf(await loadRecords(store, s.id), 'child.started').map((r) => r.data.child);
    },
  };
}

export { recordsOf };

export const reasonsOf = (records: readonly LogRecord[]) =>
  recordsOf(records, 'transition').map((r) => r.data.reason);

/** A model turn that calls Task once per entry. */
export function taskTurn(calls: { id: string; prompt: string; agent?: string; description?: string }[]) {
  return {
    content: calls.map((c) => ({
      type: 'tool_use',
      id: c.id,
      name: 'Task',
      input: {
        description: c.description ?? `task ${c.id}`,
        prompt: c.prompt,
        subagent_type: c.agent ?? 'general-purpose',
      },
    })),
    stop_reason: 'tool_use',
    usage: { input_tokens: 100, output_tokens: 20 },
  };
}

/**
 * A tool every caller must enter before any may leave: two calls that both return "met"
 * were running at the same time. Its `events` are the tool-side evidence of the overlap. If
 * the calls were serialised, the first would wait for a partner that never comes, and its
 * timeout (a guard, not a measurement) turns that into a failed result.
 */
export function meetingTool(parties: number) {
  const events: string[] = [];
  let arrived = 0;
  let everyone!: () => void;
  const all = new Promise<void>((r) => {
    everyone = r;
  });
  const tool: Tool<{ who: string }> = {
    name: 'meet',
    description: 'Waits until every party has arrived.',
    inputSchema: z.object({ who: z.string() }),
    isReadOnly: true,
    isConcurrencySafe: () => true,
    timeoutMs: 20_000,
    async call({ who }) {
      events.push(`enter ${who}`);
      if (++arrived === parties) everyone();
      await all;
      events.push(`leave ${who}`);
      return { content: `${who} met everyone` };
    },
  };
  return { tool, events };
}

/** A tool that runs until its call is aborted, and says when it has started. */
export function untilAbortedTool() {
  let started!: () => void;
  const running = new Promise<void>((r) => {
    started = r;
  });
  const tool: Tool<{ what: string }> = {
    name: 'wait',
    description: 'Runs until aborted.',
    inputSchema: z.object({ what: z.string() }),
    isReadOnly: false,
    isConcurrencySafe: () => false,
    call: (_input, ctx) =>
      new Promise((_, reject) => {
        started();
        ctx.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
      }),
  };
  return { tool, running };
}
