import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LogRecord } from '../../src/store/records.ts';
import type { EventStore } from '../../src/store/types.ts';
import { StreamBuilder } from './support/records.ts';

/**
 * What `EventStore.follow` promises, for every store that has it (memory, file, and PostgreSQL
 * with LISTEN/NOTIFY): the records after `afterSeq` in order, then each new one as it lands,
 * until the signal aborts or the store closes. No test sleeps: each awaits the next record.
 */
export function testFollow(name: string, factory: () => Promise<EventStore>): void {
  describe(`EventStore.follow: ${name}`, () => {
    let store: EventStore;
    let stop: AbortController;
    beforeEach(async () => {
      store = await factory();
      stop = new AbortController();
    });
    afterEach(async () => {
      stop.abort();
      await store.close();
    });

    function follower(session: string, afterSeq = 0): AsyncIterator<LogRecord> {
      if (!store.follow) throw new Error(`${name} has no follow`);
      return store.follow(session, { afterSeq, signal: stop.signal })[Symbol.asyncIterator]();
    }
    const seqOf = async (it: AsyncIterator<LogRecord>) => {
      const next = await it.next();
      return next.done ? 'done' : `${next.value.session}:${next.value.seq}`;
    };

    it('yields what is there after afterSeq, then each record as it lands', async () => {
      const s = new StreamBuilder('s1');
      await store.append('s1', [s.created(), s.runStarted(), s.user('hi')], { expectedSeq: 0 });
      const it = follower('s1', 1);
      expect(await seqOf(it)).toBe('s1:2');
      expect(await seqOf(it)).toBe('s1:3');
      const pending = seqOf(it);
      await store.append('s1', [s.transition(), s.runEnded()], { expectedSeq: 3 });
      expect(await pending).toBe('s1:4');
      expect(await seqOf(it)).toBe('s1:5');
    });

    it('waits for a session that does not exist yet, and keeps sessions apart', async () => {
      const it = follower('later');
      const pending = seqOf(it);
      const other = new StreamBuilder('other');
      await store.append('other', [other.created(), other.user('not this one')], { expectedSeq: 0 });
      const s = new StreamBuilder('later');
      await store.append('later', [s.created()], { expectedSeq: 0 });
      expect(await pending).toBe('later:1');
    });

    it('loses nothing and repeats nothing across many small appends', async () => {
      const s = new StreamBuilder('busy');
      const it = follower('busy');
      const seen: number[] = [];
      const reading = (async () => {
        while (seen.length < 120) {
          const next = await it.next();
          if (next.done) break;
          seen.push(next.value.seq);
        }
      })();
      await store.append('busy', [s.created()], { expectedSeq: 0 });
      for (let seq = 1; seq < 120; seq += 3)
        await store.append('busy', [s.user(`a${seq}`), s.user(`b${seq}`), s.user(`c${seq}`)], {
          expectedSeq: seq,
        });
      await reading;
      expect(seen).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));
    });

    it('ends without an error when the signal aborts, also while it waits', async () => {
      const s = new StreamBuilder('s1');
      await store.append('s1', [s.created()], { expectedSeq: 0 });
      const it = follower('s1');
      expect(await seqOf(it)).toBe('s1:1');
      const pending = seqOf(it);
      stop.abort();
      expect(await pending).toBe('done');
    });

    it('ends when the store closes', async () => {
      const it = follower('s1');
      const pending = seqOf(it);
      await store.close();
      expect(await pending).toBe('done');
    });
  });
}
