import { describe, expect, it } from 'vitest';
import { importedSessionId, importTranscripts } from '../../src/import/index.ts';
import { verifyTree } from '../../src/replay/verifyTree.ts';
import { MemoryEventStore } from '../../src/store/memoryStore.ts';
import type { LogRecord } from '../../src/store/records.ts';
import type { EventStore } from '../../src/store/types.ts';
import { AGENT, PROJECT, SID } from '../import/support/fixtures.ts';
import { parentSession, taskTurn } from '../runtime/children/support.ts';
import { textTurn } from '../support/harness.ts';

/** The store's streams, with `edit` applied to one record: a tampered copy. */
async function tampered(
  store: EventStore,
  session: string,
  edit: (r: LogRecord) => LogRecord | null,
): Promise<MemoryEventStore> {
  const copy = new MemoryEventStore();
  for (const row of await store.list()) {
    const records: LogRecord[] = [];
    for await (const r of store.read(row.id)) records.push(row.id === session ? (edit(r) ?? r) : r);
    await copy.append(row.id, records, { expectedSeq: 0 });
  }
  return copy;
}

describe('verifyTree', () => {
  async function tree() {
    const h = await parentSession({
      turns: [taskTurn([{ id: 'toolu_1', prompt: 'look' }]), textTurn('parent done')],
      children: { toolu_1: { turns: [textTurn('child done')] } },
    });
    await h.session.submit('go');
    const [child] = await h.children();
    return { h, child: child! };
  }

  it("catches a child.finished that its child's log does not bear out, in the parent, at its seq", async () => {
    const { h, child } = await tree();
    const bad = await tampered(h.store, h.session.id, (r) =>
      r.type === 'child.finished' ? { ...r, data: { ...r.data, turns: 7 } } : null,
    );
    const report = await verifyTree(bad, h.session.id);
    const seq = (await h.records()).find((r) => r.type === 'child.finished')!.seq;
    expect(report.divergence).toMatchObject({ session: h.session.id, seq });
    expect(report.divergence!.detail).toBe(
      `child.finished says completed (completed) after 7 turns; the log of ${child} says completed (completed) after 1`,
    );
  });

  it("catches a Task result that is not the child's last text", async () => {
    const { h, child } = await tree();
    // The result and the history both say "made up", so the parent's own log is consistent.
    const bad = await tampered(h.store, h.session.id, (r) => {
      if (r.type === 'tool.finished')
        return { ...r, data: { ...r.data, result: { content: 'made up', isError: false } } };
      // A v2 log's tool results message refers to that result; a v1-style one holds it.
      if (r.type === 'message.appended' && r.data.origin === 'tool_results' && r.data.message) {
        const content = [{ type: 'tool_result' as const, tool_use_id: 'toolu_1', content: 'made up' }];
        return { ...r, data: { ...r.data, message: { role: 'user', content } } };
      }
      return null;
    });
    const report = await verifyTree(bad, h.session.id);
    expect(report.divergence).toMatchObject({
      session: h.session.id,
      detail: `the Task result is not the last text of ${child}`,
    });
  });

  it("catches a tampered child log at its seq, naming the child; the parent's own verify still passes", async () => {
    const { h, child } = await tree();
    const bad = await tampered(h.store, child, (r) =>
      r.type === 'transition' && r.data.reason === 'completed'
        ? { ...r, data: { ...r.data, to: 'failed', reason: 'stop_hook_prevented' } }
        : null,
    );
    const report = await verifyTree(bad, h.session.id);
    const seq = (await h.records(child)).find(
      (r) => r.type === 'transition' && r.data.reason === 'completed',
    )!.seq;
    expect(report.sessions.map((s) => [s.session, s.report.ok])).toEqual([
      [h.session.id, true],
      [child, false],
    ]);
    expect(report.divergence).toMatchObject({ session: child, seq });
  });

  it('takes in imported sub-agents, linked only by their own parent field', async () => {
    const store = new MemoryEventStore();
    await importTranscripts(store, [PROJECT]);
    const parent = importedSessionId(SID.subagents);
    const report = await verifyTree(store, parent);
    expect(report.sessions[0]).toMatchObject({ session: parent, parent: null });
    expect(report.sessions.map((s) => s.session)).toContain(importedSessionId(SID.subagents, AGENT.explore));
    expect(report.sessions.slice(1).every((s) => s.parent === parent)).toBe(true);
    expect(report.divergence).toBeNull();
  });
});
