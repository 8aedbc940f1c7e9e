import { describe, expect, it } from 'vitest';
import { Redactor } from '../../src/lib/secrets.ts';
import { SessionWriter } from '../../src/runtime/sessionWriter.ts';
import { MemoryEventStore } from '../../src/store/memoryStore.ts';
import type { DraftRecord } from '../../src/store/records.ts';
import { emptySessionState } from '../../src/store/sessionState.ts';
import type { EventStore } from '../../src/store/types.ts';
import { readLog } from '../support/logRecords.ts';

const abort = (reason: string): DraftRecord => ({
  type: 'abort.requested',
  run: null,
  at: 1,
  data: { reason },
});

/** A memory store whose next `failures` appends throw, as a full disk would. */
function flakyStore(failures: number): EventStore & { attempts: number } {
  const inner = new MemoryEventStore();
  let left = failures;
  const store = Object.create(inner) as EventStore & { attempts: number };
  store.attempts = 0;
  store.append = async (session, records, options) => {
    store.attempts++;
    if (left-- > 0) throw new Error('ENOSPC: no space left on device');
    return inner.append(session, records, options);
  };
  return store;
}

describe('SessionWriter', () => {
  it('commits everything added since the last commit in one append', async () => {
    const store = new MemoryEventStore();
    const w = new SessionWriter('s1', store, emptySessionState());
    w.add(abort('a'));
    w.add(abort('b'));
    await w.commit();
    await w.commit(); // nothing pending: no append
    expect((await readLog(store, 's1')).map((r) => r.seq)).toEqual([1, 2]);
    expect(w.durableSeq).toBe(2);
  });

  it('a failed commit loses nothing: its records stay pending and the next commit writes them', async () => {
    const store = flakyStore(1);
    const w = new SessionWriter('s1', store, emptySessionState());
    w.add(abort('first'));
    await expect(w.commit()).rejects.toThrow(/ENOSPC/);
    expect(w.durableSeq).toBe(0);
    w.add(abort('second'));
    await w.commit();
    const records = await readLog(store, 's1');
    expect(records.map((r) => [r.seq, r.type === 'abort.requested' ? r.data.reason : ''])).toEqual([
      [1, 'first'],
      [2, 'second'],
    ]);
    expect(w.durableSeq).toBe(2);
    expect(store.attempts).toBe(2);
  });

  it('commits queued behind a failed one still run, in order', async () => {
    const store = flakyStore(1);
    const w = new SessionWriter('s1', store, emptySessionState());
    w.add(abort('a'));
    const first = w.commit();
    w.add(abort('b'));
    const second = w.commit();
    await expect(first).rejects.toThrow(/ENOSPC/);
    await second;
    expect((await readLog(store, 's1')).map((r) => r.seq)).toEqual([1, 2]);
  });
});

/** `{ a: { a: … } }`, `depth` objects deep, built without recursion. */
function nested(depth: number): unknown {
  let v: unknown = 'bottom';
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

describe('SessionWriter and input nested past the depth limit (issue 18, item 7)', () => {
  it('a record it refuses takes no seq: the next one follows and commits (was: seq gap, session interrupted)', async () => {
    const store = new MemoryEventStore();
    // An active redactor, as in any run with ANTHROPIC_API_KEY set: its walk is where 3 800 levels broke.
    const w = new SessionWriter(
      's1',
      store,
      emptySessionState(),
      new Redactor(new Map([['ANTHROPIC_API_KEY', 'sk-ant-0123456789abcdef']])),
    );
    w.add(abort('first'));
    const deep: DraftRecord = {
      type: 'abort.requested',
      run: null,
      at: 1,
      data: { reason: 'x', deep: nested(3_800) } as never,
    };
    expect(() => w.add(deep)).toThrow(/nested deeper than 544 levels/);
    expect(w.lastSeq).toBe(1);
    w.add(abort('after'));
    await w.commit();
    expect((await readLog(store, 's1')).map((r) => r.seq)).toEqual([1, 2]);
  });
});
