import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { importedSessionId, importTranscripts } from '../../src/import/index.ts';
import { parseScript } from '../../src/model/script.ts';
import { ScriptedModelClient } from '../../src/model/scripted.ts';
import { forkSession } from '../../src/replay/fork.ts';
import { verifyReplay } from '../../src/replay/verify.ts';
import { counterIds, seededRandom, VirtualClock } from '../../src/runtime/determinism.ts';
import { Session } from '../../src/runtime/session.ts';
import { MemoryEventStore } from '../../src/store/memoryStore.ts';
import type { LogRecord } from '../../src/store/records.ts';
import { resealed } from '../../src/store/seal.ts';
import { parseRecordLine } from '../../src/store/validate.ts';
import { SID, transcriptFile } from '../import/support/fixtures.ts';

const goldenDir = new URL('../fixtures/logs/', import.meta.url);

/** A log marked as imported, so verify checks its conformance instead of re-driving it. */
function asImported(records: readonly LogRecord[]): LogRecord[] {
  return records.map((r) =>
    r.type === 'session.created'
      ? {
          ...r,
          data: {
            ...r.data,
            importedFrom: {
              format: 'claude-code' as const,
              file: 'golden',
              sessionId: r.session,
              version: null,
              bytes: 0,
              records: records.length,
              lines: { total: 0, bookkeeping: {}, unmapped: 0, malformed: 0 },
            },
          },
        }
      : r,
  );
}

async function imported(sid: string): Promise<{ store: MemoryEventStore; id: string; log: LogRecord[] }> {
  const store = new MemoryEventStore();
  await importTranscripts(store, [transcriptFile(sid)]);
  const id = importedSessionId(sid);
  const log: LogRecord[] = [];
  for await (const r of store.read(id)) log.push(r);
  return { store, id, log };
}

describe('conformance of imported sessions', () => {
  it.each(
    readdirSync(goldenDir).filter((f) => f.endsWith('.jsonl')),
  )('the runtime’s own golden log %s conforms (the check agrees with the chart)', async (file) => {
    const log = readFileSync(new URL(file, goldenDir), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => parseRecordLine(line));
    const report = await verifyReplay(asImported(log));
    expect(report.divergence).toBeNull();
    expect(report.transitions).toBe(log.filter((r) => r.type === 'transition').length);
  });

  it('reports a transition that is not an edge of the chart, at its seq', async () => {
    const { log } = await imported(SID.tools);
    const t = log.find((r) => r.type === 'transition' && r.data.reason === 'tool_result_continuation')!;
    const tampered = log.map((r) =>
      r === t && r.type === 'transition' ? { ...r, data: { ...r.data, to: 'completed' } } : r,
    );
    const { ok, divergence } = await verifyReplay(tampered);
    expect(ok).toBe(false);
    expect(divergence!.seq).toBe(t.seq);
    expect(divergence!.detail).toMatch(/is not an edge of the chart$/);
  });

  it('reports a walk that breaks: a transition leaving a state the run is not in', async () => {
    const { log } = await imported(SID.tools);
    const firstQuery = log.find((r) => r.type === 'transition' && r.data.reason === 'query_built')!;
    const next = log.find((r) => r.type === 'transition' && r.seq > firstQuery.seq)!;
    // Sealed anew, as a deliberate edit would be: unsealed, the seal after the gap gives it away first.
    const { divergence } = await verifyReplay(resealed(log.filter((r) => r !== firstQuery)));
    expect(divergence!.seq).toBe(next.seq);
    expect(divergence!.detail).toBe(
      'the walk breaks: the run is in building, the transition leaves requesting',
    );
  });

  it('reports an edge whose trigger has no fact: no response before xstate.done.actor.callModel', async () => {
    const { log } = await imported(SID.tools);
    const responded = log.find((r) => r.type === 'model.responded')!;
    const edge = log.find((r) => r.type === 'transition' && r.seq > responded.seq)!;
    const { divergence } = await verifyReplay(log.filter((r) => r !== responded));
    expect(divergence!.seq).toBe(edge.seq);
    expect(divergence!.detail).toMatch(/no model\.responded \(turn\) recorded before it$/);
  });

  it('reports a reason the fact contradicts: tool_use_requested for a response without tool_use', async () => {
    const { log } = await imported(SID.tools);
    const last = [...log]
      .reverse()
      .find((r) => r.type === 'transition' && r.data.reason === 'finish_requested')!;
    const tampered = log.map((r) =>
      r === last && r.type === 'transition'
        ? { ...r, data: { ...r.data, to: 'dispatchingTools', reason: 'tool_use_requested' } }
        : r,
    );
    const { divergence } = await verifyReplay(tampered);
    expect(divergence!.seq).toBe(last.seq);
    expect(divergence!.detail).toMatch(/does not lead to tool_use_requested$/);
  });

  it('reports tools that end without a result for every call', async () => {
    const { log } = await imported(SID.tools);
    const finished = log.find((r) => r.type === 'tool.finished')!;
    const { divergence } = await verifyReplay(resealed(log.filter((r) => r !== finished)));
    expect(divergence!.detail).toMatch(/no tool\.finished for toolu_t1$/);
  });

  it('reports a run that ends otherwise than its walk', async () => {
    const { log } = await imported(SID.stopHooks);
    const end = log.find((r) => r.type === 'run.ended')!;
    const tampered = log.map((r) =>
      r === end && r.type === 'run.ended' ? { ...r, data: { ...r.data, reason: 'refused' } } : r,
    );
    const { divergence } = await verifyReplay(tampered);
    expect(divergence).toMatchObject({
      seq: end.seq,
      detail: 'the run ends refused but its walk ended completed',
    });
  });

  it('verifies a fork of an imported session that reloop continued: imported runs by conformance, the new run by re-driving', async () => {
    const { store, id, log } = await imported(SID.tools);
    const fork = await forkSession(store, id, log.length, counterIds('fork-'));
    const session = await Session.open(fork, {
      store,
      model: new ScriptedModelClient(parseScript({ turns: [{ text: 'Continuing from the import.' }] })),
      clock: new VirtualClock(),
      random: seededRandom(1),
      ids: counterIds('r-'),
    });
    const result = await session.submit('Go on.');
    expect(result.status).toBe('completed');
    const forked: LogRecord[] = [];
    for await (const r of store.read(fork)) forked.push(r);
    const report = await verifyReplay(forked);
    expect(report.divergence).toBeNull();
    expect(report.runs).toBe(3);
    // The continued run saw the imported history.
    const requested = forked.filter((r) => r.type === 'model.requested').at(-1)!;
    const history = log.filter((r) => r.type === 'user.message' || r.type === 'message.appended').length;
    expect(requested.type === 'model.requested' && requested.data.messageCount).toBe(history + 1);

    const tampered = forked.map((r) =>
      r.type === 'message.appended' && r.seq > log.length && r.data.origin === 'assistant'
        ? { ...r, data: { ...r.data, message: { role: 'assistant' as const, content: 'something else' } } }
        : r,
    );
    expect((await verifyReplay(tampered)).divergence?.detail).toBe('the assistant message appended differs');
  });

  it('resumes a fork taken mid-run the way it resumes a crashed session', async () => {
    const { store, id, log } = await imported(SID.tools);
    const mid = log.find((r) => r.type === 'tool.started')!;
    const fork = await forkSession(store, id, mid.seq, counterIds('fork-'));
    const session = await Session.open(fork, {
      store,
      model: new ScriptedModelClient(parseScript({ turns: [{ text: 'Done after the crash.' }] })),
      clock: new VirtualClock(),
      random: seededRandom(1),
      ids: counterIds('r-'),
    });
    expect((await session.submit(null)).status).toBe('completed');
    const forked: LogRecord[] = [];
    for await (const r of store.read(fork)) forked.push(r);
    expect(forked.find((r) => r.type === 'run.ended')?.data).toMatchObject({ reason: 'interrupted' });
    expect((await verifyReplay(forked)).divergence).toBeNull();
  });
});
