import { describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../src/store/memoryStore.ts';
import type { LogRecord } from '../../src/store/records.ts';
import type { AppendOptions } from '../../src/store/types.ts';
import type { Tool } from '../../src/tools/types.ts';
import { echoTool, scriptedSession, textTurn, toolTurn } from '../support/harness.ts';

/** A tool with an effect on the world (not read-only): its calls are written ahead. */
const poke: Tool<{ text: string }> = { ...echoTool, name: 'poke', isReadOnly: false };

/** A store that remembers every durable commit (one append call = one commit), and the others. */
class CountingStore extends MemoryEventStore {
  readonly commits: LogRecord[][] = [];
  readonly notDurable: LogRecord[][] = [];
  override async append(session: string, records: readonly LogRecord[], options: AppendOptions) {
    (options.durable === false ? this.notDurable : this.commits).push([...records]);
    return super.append(session, records, options);
  }
}

describe('write-ahead group commit', () => {
  it('commits twice per round with an effect: before the request and before the tools run', async () => {
    const rounds = 5;
    const store = new CountingStore();
    const turns = [
      ...Array.from({ length: rounds }, (_, i) =>
        toolTurn([{ name: 'poke', input: { text: `${i}` }, id: `t${i}` }]),
      ),
      textTurn('done'),
    ];
    const h = await scriptedSession(turns, { store, tools: [poke] });
    store.commits.length = 0;
    await h.session.submit('go');
    // rounds × (request + tool batch), the final request, and run.ended.
    expect(store.commits.length).toBe(rounds * 2 + 2);
    for (const batch of store.commits.slice(0, -1)) {
      const last = batch[batch.length - 1]!;
      // Every commit ends right at an effect: a request about to go out or a tool about to run.
      expect(['model.requested', 'tool.started']).toContain(last.type);
    }
  });

  it('commits durably once per round of read-only calls: they have no effect to write ahead of', async () => {
    const rounds = 5;
    const store = new CountingStore();
    const turns = [
      ...Array.from({ length: rounds }, (_, i) =>
        toolTurn([{ name: 'echo', input: { text: `${i}` }, id: `t${i}` }]),
      ),
      textTurn('done'),
    ];
    const h = await scriptedSession(turns, { store });
    store.commits.length = 0;
    await h.session.submit('go');
    // rounds × the request, the final request, and run.ended.
    expect(store.commits.length).toBe(rounds + 2);
    for (const batch of store.commits.slice(0, -1)) expect(batch.at(-1)!.type).toBe('model.requested');
    // Before the tools run, the round is appended for readers of the log, not waited for on disk.
    expect(store.notDurable).toHaveLength(rounds);
    for (const batch of store.notDurable) {
      expect(batch.map((r) => r.type)).toEqual(expect.arrayContaining(['model.responded', 'tool.started']));
      expect(batch.at(-1)!.type).toBe('tool.started');
    }
  });

  it('a batch mixing read-only and effectful calls is written ahead', async () => {
    const store = new CountingStore();
    const h = await scriptedSession(
      [
        toolTurn([
          { name: 'echo', input: { text: 'a' }, id: 'a' },
          { name: 'poke', input: { text: 'b' }, id: 'b' },
        ]),
        textTurn('ok'),
      ],
      { store, tools: [echoTool, poke] },
    );
    store.commits.length = 0;
    await h.session.submit('go');
    expect(store.commits.filter((c) => c.at(-1)!.type === 'tool.started')).toHaveLength(1);
    expect(store.notDurable).toEqual([]);
  });

  it('makes the model response durable before any tool runs, and tool results before the next request', async () => {
    const store = new CountingStore();
    const h = await scriptedSession(
      [toolTurn([{ name: 'poke', input: { text: 'x' }, id: 'a' }]), textTurn('ok')],
      { store, tools: [poke] },
    );
    store.commits.length = 0;
    await h.session.submit('go');
    const toolCommit = store.commits.find((c) => c.some((r) => r.type === 'tool.started'))!;
    expect(toolCommit.some((r) => r.type === 'model.responded')).toBe(true);
    const secondRequest = store.commits.filter((c) => c.some((r) => r.type === 'model.requested'))[1]!;
    expect(secondRequest.some((r) => r.type === 'tool.finished')).toBe(true);
  });

  it('makes the model response durable before a PreToolUse hook (a command, an effect) runs', async () => {
    const store = new CountingStore();
    let durableAtHook: string[] = [];
    const h = await scriptedSession(
      [toolTurn([{ name: 'echo', input: { text: 'x' }, id: 'a' }]), textTurn('ok')],
      {
        store,
        toolHooks: {
          async preToolUse() {
            durableAtHook = store.commits.flat().map((r) => r.type);
            return { decision: 'continue' };
          },
        },
      },
    );
    await h.session.submit('go');
    expect(durableAtHook).toContain('model.responded');
  });
});
