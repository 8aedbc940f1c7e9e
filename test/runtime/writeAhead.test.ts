import { describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../src/store/memoryStore.ts';
import type { LogRecord } from '../../src/store/records.ts';
import type { AppendOptions } from '../../src/store/types.ts';
import { scriptedSession, textTurn, toolTurn } from '../support/harness.ts';

/** A store that remembers every commit (one append call = one durable commit). */
class CountingStore extends MemoryEventStore {
  readonly commits: LogRecord[][] = [];
  override async append(session: string, records: readonly LogRecord[], options: AppendOptions) {
    this.commits.push([...records]);
    return super.append(session, records, options);
  }
}

describe('write-ahead group commit', () => {
  it('commits exactly twice per tool round: before the request and before the tools run', async () => {
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
    // rounds × (request + tool batch), the final request, and run.ended.
    expect(store.commits.length).toBe(rounds * 2 + 2);
    for (const batch of store.commits.slice(0, -1)) {
      const last = batch[batch.length - 1]!;
      // Every commit ends right at an effect: a request about to go out or a tool about to run.
      expect(['model.requested', 'tool.started']).toContain(last.type);
    }
  });

  it('makes the model response durable before any tool runs, and tool results before the next request', async () => {
    const store = new CountingStore();
    const h = await scriptedSession(
      [toolTurn([{ name: 'echo', input: { text: 'x' }, id: 'a' }]), textTurn('ok')],
      {
        store,
      },
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
