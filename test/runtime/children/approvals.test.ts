/**
 * A sub-agent whose call needs an approval nobody attached can give parks, and its parent parks
 * with it: the Task call stays open, the calls beside it finish and keep their results, and the
 * tree resumes (the child from its own log) once the child's call is answered.
 */
import { describe, expect, it } from 'vitest';
import { AgentCatalog } from '../../../src/agents/index.ts';
import { loadRecords } from '../../../src/replay/loadSession.ts';
import { verifyReplay } from '../../../src/replay/verify.ts';
import { verifyTree } from '../../../src/replay/verifyTree.ts';
import {
  decideApproval,
  pendingApprovals,
  pendingBelow,
  SubAgentAwaitingApprovalError,
  treeApprovals,
} from '../../../src/runtime/approvals.ts';
import { counterIds, seededRandom, VirtualClock } from '../../../src/runtime/determinism.ts';
import { Session } from '../../../src/runtime/session.ts';
import { MemoryEventStore } from '../../../src/store/memoryStore.ts';
import { resealed } from '../../../src/store/seal.ts';
import type { EventStore } from '../../../src/store/types.ts';
import { echoTool } from '../../support/harness.ts';
import { askForGuarded, counted } from '../reasons/reasonSpec.ts';
import { parentSession, reasonsOf, recordsOf, taskTurn } from './support.ts';

/** The Task calls, and an echo call beside them. */
function withEcho(turn: ReturnType<typeof taskTurn>) {
  return {
    ...turn,
    content: [...turn.content, { type: 'tool_use', id: 'echo_1', name: 'echo', input: { text: 'beside' } }],
  };
}

const script = {
  turns: [
    withEcho(
      taskTurn([
        { id: 'task_a', prompt: 'deploy' },
        { id: 'task_b', prompt: 'look around' },
      ]),
    ),
    { text: 'all done' },
  ],
  children: {
    task_a: {
      turns: [
        {
          content: [{ type: 'tool_use', id: 'g1', name: 'guarded', input: { text: 'deploy' } }],
          stop_reason: 'tool_use',
        },
        { text: 'A deployed' },
      ],
    },
    task_b: { turns: [{ text: 'B looked' }] },
  },
};

async function parkedTree(opts: { store?: EventStore } = {}) {
  const { calls, tool } = counted();
  const shared = {
    clock: new VirtualClock(),
    ids: counterIds(),
    tools: [tool, echoTool],
    canUseTool: askForGuarded,
  };
  const h = await parentSession(script, { ...shared, ...opts });
  const parked = opts.store ? null : await h.session.submit('go');
  const [a, b] = await h.children();
  /** The parent as a later process opens it, with the same model, tools and policy. */
  const reopen = (store: EventStore = h.store) =>
    Session.open(h.session.id, {
      ...shared,
      store,
      model: h.client,
      random: seededRandom(42),
      cwd: process.cwd(),
      subAgents: { agents: new AgentCatalog() },
    });
  return { h, calls, parked, a: a!, b: b!, reopen };
}

describe('a sub-agent parked on an approval parks its parent', () => {
  it('parent paused with the Task call open; siblings finish; approve → the tree resumes and completes', async () => {
    const { h, calls, parked, a, b, reopen } = await parkedTree();
    expect(parked).toMatchObject({ status: 'paused', reason: 'awaiting_approval' });
    expect(calls).toEqual([]);
    let log = await h.records();
    expect(reasonsOf(log)).toEqual(['query_built', 'tool_use_requested', 'awaiting_approval']);
    // B and the echo beside it finished; A's call is left open (started, never finished).
    expect(recordsOf(log, 'child.finished').map((r) => r.data.toolUseId)).toEqual(['task_b']);
    expect(
      recordsOf(log, 'tool.finished')
        .map((r) => r.data.toolUseId)
        .sort(),
    ).toEqual(['echo_1', 'task_b']);
    expect(recordsOf(log, 'approval.requested').map((r) => r.data)).toEqual([
      {
        toolUseId: 'task_a',
        tool: 'Task',
        input: { description: 'task task_a', prompt: 'deploy', subagent_type: 'general-purpose' },
        child: a,
      },
    ]);
    // The parent's own list is empty: the call to answer is the child's.
    expect(pendingApprovals(h.session.state)).toEqual([]);
    const below = await pendingBelow(h.store, h.session.id, h.session.state);
    expect(below.map((w) => [w.session, w.parent, w.entry.toolUseId])).toEqual([[a, h.session.id, 'g1']]);
    // Answering the parent's Task call is refused by name; resuming before the child is answered too.
    await expect(decideApproval(h.store, h.session.id, 'task_a', { allow: true, by: 'x' })).rejects.toThrow(
      /waits for its sub-agent, session/,
    );
    const seq = h.session.state.lastSeq;
    await expect(h.session.submit()).rejects.toThrow(SubAgentAwaitingApprovalError);
    await expect(h.session.submit()).rejects.toThrow(new RegExp(`g1 of session ${a}`));
    expect(await h.store.lastSeq(h.session.id)).toBe(seq);

    await decideApproval(h.store, a, 'g1', { allow: true, by: 'alice' });
    expect((await treeApprovals(h.store, h.session.id)).pending).toEqual([]);
    const resumed = await reopen();
    const done = await resumed.submit();
    expect(done).toMatchObject({ status: 'completed', reason: 'completed' });
    expect(calls).toEqual(['deploy']);
    log = await h.records();
    const run2 = log.filter((r) => r.run === done.runId);
    expect(reasonsOf(run2)).toEqual([
      'tool_batch_resumed',
      'tool_result_continuation',
      'query_built',
      'finish_requested',
      'completed',
    ]);
    // Nothing acknowledged is lost or run twice: one child.started each, echo ran once, B once.
    expect(recordsOf(log, 'child.started').map((r) => r.data.child)).toEqual([a, b]);
    expect(recordsOf(log, 'tool.started').filter((r) => r.data.toolUseId === 'echo_1')).toHaveLength(1);
    expect(recordsOf(run2, 'child.finished').map((r) => r.data)).toMatchObject([
      { toolUseId: 'task_a', child: a, status: 'completed' },
    ]);
    const results = resumed.state.messages.view().at(-2)!;
    expect(results.content).toMatchObject([
      { tool_use_id: 'task_a', content: 'A deployed' },
      { tool_use_id: 'task_b', content: 'B looked' },
      { tool_use_id: 'echo_1', content: 'echo: beside' },
    ]);
    const child = await h.records(a);
    expect(recordsOf(child, 'run.started')).toHaveLength(2);
    expect(recordsOf(child, 'tool.started').map((r) => r.data.toolUseId)).toEqual(['g1']);
    const tree = await verifyTree(h.store, h.session.id);
    expect(tree.divergence).toBeNull();
    expect(tree.sessions).toHaveLength(3);
  });

  it('deny → the child gets an is_error result for its call and goes on; the parent completes', async () => {
    const { h, calls, a, reopen } = await parkedTree();
    await decideApproval(h.store, a, 'g1', { allow: false, by: 'bob', message: 'not today' });
    const resumed = await reopen();
    const done = await resumed.submit();
    expect(done.status).toBe('completed');
    expect(calls).toEqual([]);
    const child = await h.records(a);
    expect(recordsOf(child, 'tool.finished').map((r) => r.data)).toMatchObject([
      { toolUseId: 'g1', outcome: 'denied', result: { isError: true } },
    ]);
    expect((await verifyTree(h.store, h.session.id)).divergence).toBeNull();
  });

  it('verify checks the child a parked Task call names: another one is a divergence at that record', async () => {
    const { h, b } = await parkedTree();
    const log = await h.records();
    const at = log.findIndex((r) => r.type === 'approval.requested');
    const edited = structuredClone(log);
    const rec = edited[at]!;
    if (rec.type === 'approval.requested') rec.data.child = b;
    const report = await verifyReplay(resealed(edited));
    expect(report.divergence).toMatchObject({
      seq: log[at]!.seq,
      detail: 'a call parked on a sub-agent it did not start',
    });
    expect((await verifyReplay(log)).divergence).toBeNull();
  });

  it('a parent that died before it logged the park: resume closes its run, finds the child parked again, parks; then completes', async () => {
    // The parent's process dies as it commits the park: nothing of that commit reaches the store.
    const inner = new MemoryEventStore();
    let died!: () => void;
    const death = new Promise<void>((r) => {
      died = r;
    });
    const dying: EventStore = {
      append: (session, records, options) => {
        if (!records.some((r) => r.type === 'approval.requested' && r.data.child !== undefined))
          return inner.append(session, records, options);
        died();
        return new Promise<void>(() => {});
      },
      read: (id, r) => inner.read(id, r),
      list: () => inner.list(),
      lastSeq: (id) => inner.lastSeq(id),
      exists: (id) => inner.exists(id),
      close: () => inner.close(),
    };
    const { h, calls, reopen } = await parkedTree({ store: dying });
    void h.session.submit('go');
    await death;
    const [a] = await h.children();
    const again = await (await reopen(inner)).submit();
    expect(again).toMatchObject({ status: 'paused', reason: 'awaiting_approval' });
    const log = await loadRecords(inner, h.session.id);
    expect(recordsOf(log, 'run.ended').map((r) => r.data.reason)).toEqual([
      'interrupted',
      'awaiting_approval',
    ]);
    expect(recordsOf(log, 'approval.requested').at(-1)?.data).toMatchObject({
      toolUseId: 'task_a',
      child: a,
    });
    await expect((await reopen(inner)).submit()).rejects.toThrow(SubAgentAwaitingApprovalError);
    await decideApproval(inner, a!, 'g1', { allow: true, by: 'alice' });
    const done = await (await reopen(inner)).submit();
    expect(done.status).toBe('completed');
    expect(calls).toEqual(['deploy']);
    const tree = await verifyTree(inner, h.session.id);
    expect(tree.divergence).toBeNull();
  });
});
