/**
 * Resume of a parent whose process "died" at the awkward moments around a sub-agent: a store
 * that stops acknowledging appends from some point on plays the crash (the old objects just
 * wait for ever), then a new Session is opened on what was acknowledged.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { AgentCatalog } from '../../../src/agents/index.ts';
import { parseScript } from '../../../src/model/script.ts';
import { ScriptedModelClient } from '../../../src/model/scripted.ts';
import { verifyTree } from '../../../src/replay/verifyTree.ts';
import { counterIds, VirtualClock } from '../../../src/runtime/determinism.ts';
import { Session } from '../../../src/runtime/session.ts';
import { MemoryEventStore } from '../../../src/store/memoryStore.ts';
import type { LogRecord } from '../../../src/store/records.ts';
import type { EventStore } from '../../../src/store/types.ts';
import { echoTool, textTurn } from '../../support/harness.ts';
import { recordsOf, taskTurn } from './support.ts';

/** Acknowledges appends until `dies` says so; from then on, every append waits (rejected at cleanup). */
function dyingStore(
  dies: (session: string, records: readonly LogRecord[]) => boolean,
  /** Of the batch that kills, the part that reached the disk (a write cut at a line boundary). */
  kept: (records: readonly LogRecord[]) => readonly LogRecord[] = () => [],
) {
  const inner = new MemoryEventStore();
  const stuck: (() => void)[] = [];
  let dead = false;
  let buried = false;
  let died!: () => void;
  const death = new Promise<void>((r) => {
    died = r;
  });
  const store: EventStore = {
    append: (session, records, options) => {
      dead ||= dies(session, records);
      if (!dead) return inner.append(session, records, options);
      if (!buried) {
        buried = true;
        died();
        const written = kept(records);
        if (written.length > 0)
          return inner.append(session, written, options).then(() => new Promise<void>(() => {}));
      }
      return new Promise<void>((_, reject) => stuck.push(() => reject(new Error('dead process'))));
    },
    read: (s, r) => inner.read(s, r),
    list: () => inner.list(),
    lastSeq: (s) => inner.lastSeq(s),
    exists: (s) => inner.exists(s),
    close: () => inner.close(),
  };
  const release = () => {
    for (const f of stuck.splice(0)) f();
  };
  return { store, inner, death, release };
}

const releases: (() => void)[] = [];
afterEach(() => {
  for (const r of releases.splice(0)) r();
});

const script = {
  turns: [taskTurn([{ id: 'toolu_t', prompt: 'report' }]), textTurn('parent done')],
  children: { toolu_t: { turns: [textTurn('child report')] } },
};

async function crashThenResume(
  dies: Parameters<typeof dyingStore>[0],
  resumeScript: unknown,
  kept?: Parameters<typeof dyingStore>[1],
) {
  const d = dyingStore(dies, kept);
  releases.push(d.release);
  const ids = counterIds();
  const common = {
    tools: [echoTool],
    clock: new VirtualClock(),
    ids,
    subAgents: { agents: new AgentCatalog() },
  };
  const first = await Session.create({
    store: d.store,
    model: new ScriptedModelClient(parseScript(script)),
    ...common,
  });
  void first.submit('go').catch(() => undefined);
  // The first "process" runs until it is stuck on a write that will never be acknowledged.
  await d.death;
  const model = new ScriptedModelClient(parseScript(resumeScript));
  const resumed = await Session.open(first.id, { store: d.inner, model, ...common });
  const res = await resumed.submit(null);
  const records = async (id = first.id) => {
    const out: LogRecord[] = [];
    for await (const r of d.inner.read(id)) out.push(r);
    return out;
  };
  return { res, records, model, store: d.inner, parent: first.id };
}

describe('resuming a parent around its sub-agent', () => {
  it('the child had ended, its end not yet logged in the parent: no re-run, child.finished logged once', async () => {
    // Dies on the parent's first write after the child's run ended (its request for turn 2).
    let childEnded = false;
    const h = await crashThenResume(
      (session, rs) => {
        if (rs.some((r) => r.type === 'run.ended' && r.session !== 's1')) childEnded = true;
        return childEnded && session === 's1';
      },
      { turns: [textTurn('parent done')] },
    );
    expect(h.res.status).toBe('completed');
    const parent = await h.records();
    const child = recordsOf(parent, 'child.started')[0]!.data.child;
    expect(recordsOf(parent, 'child.finished').map((r) => r.data.status)).toEqual(['completed']);
    expect(recordsOf(await h.records(child), 'run.started')).toHaveLength(1);
    expect(h.model.forChild('toolu_t').consumed).toBe(0);
    const task = recordsOf(parent, 'tool.finished').find((r) => r.data.name === 'Task')!;
    expect(task.data.result).toEqual({ content: 'child report', isError: false });
    expect((await verifyTree(h.store, h.parent)).divergence).toBeNull();
  });

  it("the child's end was logged, the Task result was not: the end is not logged twice", async () => {
    let childEnded = false;
    const h = await crashThenResume(
      (session, rs) => {
        if (rs.some((r) => r.type === 'run.ended' && r.session !== 's1')) childEnded = true;
        return childEnded && session === 's1';
      },
      { turns: [textTurn('parent done')] },
      (rs) => rs.slice(0, rs.findIndex((r) => r.type === 'child.finished') + 1),
    );
    expect(h.res.status).toBe('completed');
    const parent = await h.records();
    expect(recordsOf(parent, 'child.finished')).toHaveLength(1);
    expect(recordsOf(parent, 'tool.finished').find((r) => r.data.name === 'Task')?.data.result.content).toBe(
      'child report',
    );
    expect((await verifyTree(h.store, h.parent)).divergence).toBeNull();
  });

  it('child.started is durable but the child never existed: the child is started on resume', async () => {
    const h = await crashThenResume((session) => session !== 's1', {
      turns: [textTurn('parent done')],
      children: { toolu_t: { turns: [textTurn('child report')] } },
    });
    expect(h.res.status).toBe('completed');
    const parent = await h.records();
    const child = recordsOf(parent, 'child.started')[0]!.data.child;
    const childLog = await h.records(child);
    expect(childLog[0]).toMatchObject({
      type: 'session.created',
      data: { parent: { session: h.parent, toolUseId: 'toolu_t' } },
    });
    expect(recordsOf(childLog, 'run.ended').map((r) => r.data.status)).toEqual(['completed']);
    expect((await verifyTree(h.store, h.parent)).divergence).toBeNull();
  });

  it('the Task call started but its child was never announced: a child is started on resume', async () => {
    const h = await crashThenResume((_, rs) => rs.some((r) => r.type === 'child.started'), {
      turns: [textTurn('parent done')],
      children: { toolu_t: { turns: [textTurn('child report')] } },
    });
    expect(h.res.status).toBe('completed');
    const parent = await h.records();
    expect(recordsOf(parent, 'child.started')).toHaveLength(1);
    expect(recordsOf(parent, 'run.ended')[0]!.data.interrupted?.inFlight).toEqual([
      'sub-agent (not started) (toolu_t): resumed',
    ]);
    expect((await verifyTree(h.store, h.parent)).divergence).toBeNull();
  });
});
