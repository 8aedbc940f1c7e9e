import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ConcurrencyError,
  InvalidRecordError,
  SchemaVersionError,
  SessionNotFoundError,
} from '../../src/store/errors.ts';
import type { LogRecord } from '../../src/store/records.ts';
import { firstBrokenSeal } from '../../src/store/seal.ts';
import type { EventStore } from '../../src/store/types.ts';
import { collect, StreamBuilder, sealed } from './support/records.ts';

/**
 * The behaviour every EventStore must have, run against each implementation (emmett-style): a store
 * passes when it is indistinguishable from the others through the interface.
 */
export function testEventStore(name: string, factory: () => Promise<EventStore>): void {
  describe(`EventStore contract: ${name}`, () => {
    let store: EventStore;
    beforeEach(async () => {
      store = await factory();
    });
    afterEach(async () => {
      await store.close();
    });

    async function seqsOf(session: string, range?: { fromSeq?: number; toSeq?: number }): Promise<number[]> {
      return (await collect(store.read(session, range))).map((r) => r.seq);
    }

    it('reads back what was appended, in order', async () => {
      const s = new StreamBuilder('s1');
      const batch = [s.created('first'), s.user('hello'), s.transition()];
      await store.append('s1', batch, { expectedSeq: 0 });
      expect(await collect(store.read('s1'))).toEqual(sealed(batch));
      expect(await store.lastSeq('s1')).toBe(3);
      expect(await store.exists('s1')).toBe(true);
    });

    it('seals every v2 record, chained across appends, whatever seal the writer passed', async () => {
      const s = new StreamBuilder('s1');
      const first = [s.created(), s.user('a')];
      const third = s.transition();
      const fourth = s.transition();
      await store.append('s1', first, { expectedSeq: 0 });
      await store.append('s1', [{ ...third, h: 'AAAAAAAAAAAAAAAAAAAAAA' } as LogRecord, fourth], {
        expectedSeq: 2,
      });
      const read = await collect(store.read('s1'));
      expect(read.every((r) => typeof r.h === 'string')).toBe(true);
      expect(firstBrokenSeal(read)).toBeNull();
      expect(read).toEqual(sealed([...first, third, fourth]));
      // One field changed afterwards breaks the seal of that record.
      const edited = read.map((r) => ({ ...r })) as LogRecord[];
      edited[1] = { ...edited[1]!, at: edited[1]!.at + 1 } as LogRecord;
      expect(firstBrokenSeal(edited)?.seq).toBe(2);
    });

    it('continues a stream across appends and keeps sessions apart', async () => {
      const a = new StreamBuilder('a');
      const b = new StreamBuilder('b');
      await store.append('a', [a.created()], { expectedSeq: 0 });
      await store.append('b', [b.created(), b.user('x')], { expectedSeq: 0 });
      await store.append('a', [a.user('y'), a.transition()], { expectedSeq: 1 });
      expect(await seqsOf('a')).toEqual([1, 2, 3]);
      expect(await seqsOf('b')).toEqual([1, 2]);
      expect((await collect(store.read('b'))).every((r) => r.session === 'b')).toBe(true);
    });

    it('requires the first seq to be 1', async () => {
      const s = new StreamBuilder('s1', { seq: 1 });
      await expect(store.append('s1', [s.created()], { expectedSeq: 0 })).rejects.toBeInstanceOf(
        InvalidRecordError,
      );
      expect(await store.exists('s1')).toBe(false);
    });

    it('rejects a gap inside a batch and writes none of it', async () => {
      const s = new StreamBuilder('s1');
      await store.append('s1', [s.created()], { expectedSeq: 0 });
      const r2 = s.user('two');
      s.seq++; // skip 3
      const r4 = s.transition();
      await expect(store.append('s1', [r2, r4], { expectedSeq: 1 })).rejects.toThrow(/seq gap/);
      expect(await seqsOf('s1')).toEqual([1]);
      expect(await store.lastSeq('s1')).toBe(1);
    });

    it('rejects a record of another session', async () => {
      const other = new StreamBuilder('other');
      await expect(store.append('s1', [other.created()], { expectedSeq: 0 })).rejects.toBeInstanceOf(
        InvalidRecordError,
      );
      expect(await store.exists('s1')).toBe(false);
    });

    it('rejects a stale expectedSeq with ConcurrencyError and writes nothing', async () => {
      const s = new StreamBuilder('s1');
      await store.append('s1', [s.created(), s.user('a')], { expectedSeq: 0 });
      const late = new StreamBuilder('s1', { seq: 1 });
      const err = await store.append('s1', [late.user('b')], { expectedSeq: 1 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConcurrencyError);
      expect(err).toMatchObject({ session: 's1', expectedSeq: 1, actualSeq: 2, code: 'CONCURRENCY' });
      expect(await seqsOf('s1')).toEqual([1, 2]);
      expect((await collect(store.read('s1')))[1]).toMatchObject({ type: 'user.message' });
    });

    it('rejects an expectedSeq ahead of a new session', async () => {
      const s = new StreamBuilder('fresh', { seq: 4 });
      const err = await store.append('fresh', [s.created()], { expectedSeq: 4 }).catch((e: unknown) => e);
      expect(err).toMatchObject({ name: 'ConcurrencyError', expectedSeq: 4, actualSeq: 0 });
      expect(await store.exists('fresh')).toBe(false);
    });

    it('lets exactly one of two racing appends with the same expectedSeq win', async () => {
      const s = new StreamBuilder('s1');
      await store.append('s1', [s.created()], { expectedSeq: 0 });
      const one = new StreamBuilder('s1', { seq: 1 });
      const two = new StreamBuilder('s1', { seq: 1 });
      const results = await Promise.allSettled([
        store.append('s1', [one.user('one')], { expectedSeq: 1 }),
        store.append('s1', [two.user('two'), two.transition()], { expectedSeq: 1 }),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const rejected = results.find((r) => r.status === 'rejected');
      expect(rejected?.status === 'rejected' && rejected.reason).toBeInstanceOf(ConcurrencyError);
      const seqs = await seqsOf('s1');
      expect(seqs[0]).toBe(1);
      expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    });

    it('treats an empty append as a check of expectedSeq only', async () => {
      await store.append('s1', [], { expectedSeq: 0 });
      expect(await store.exists('s1')).toBe(false);
      const s = new StreamBuilder('s1');
      await store.append('s1', [s.created()], { expectedSeq: 0 });
      await store.append('s1', [], { expectedSeq: 1 });
      await expect(store.append('s1', [], { expectedSeq: 0 })).rejects.toBeInstanceOf(ConcurrencyError);
      expect(await store.lastSeq('s1')).toBe(1);
    });

    it('rejects a record failing its schema and writes none of the batch', async () => {
      const s = new StreamBuilder('s1');
      await store.append('s1', [s.created()], { expectedSeq: 0 });
      const good = s.user('fine');
      const bad = { ...s.transition(), data: { from: 'building', to: 42 } } as unknown as LogRecord;
      const err = await store.append('s1', [good, bad], { expectedSeq: 1 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidRecordError);
      expect(err).toMatchObject({ code: 'INVALID_RECORD', where: { seq: 3 } });
      expect(await seqsOf('s1')).toEqual([1]);
    });

    it('rejects an unknown record type', async () => {
      const s = new StreamBuilder('s1');
      const bad = { ...s.created(), type: 'session.exploded' } as unknown as LogRecord;
      await expect(store.append('s1', [bad], { expectedSeq: 0 })).rejects.toBeInstanceOf(InvalidRecordError);
      expect(await store.exists('s1')).toBe(false);
    });

    it('rejects a wrong schema version with SchemaVersionError and writes nothing', async () => {
      const s = new StreamBuilder('s1');
      await store.append('s1', [s.created()], { expectedSeq: 0 });
      const future = { ...s.user('from the future'), v: 99 } as unknown as LogRecord;
      const err = await store.append('s1', [future], { expectedSeq: 1 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SchemaVersionError);
      expect(err).toMatchObject({ version: 99, code: 'SCHEMA_VERSION' });
      expect(await seqsOf('s1')).toEqual([1]);
    });

    it('reads ranges', async () => {
      const s = new StreamBuilder('s1');
      await store.append('s1', [s.created(), ...s.transitions(9)], { expectedSeq: 0 });
      expect(await seqsOf('s1', { fromSeq: 4 })).toEqual([4, 5, 6, 7, 8, 9, 10]);
      expect(await seqsOf('s1', { toSeq: 3 })).toEqual([1, 2, 3]);
      expect(await seqsOf('s1', { fromSeq: 5, toSeq: 6 })).toEqual([5, 6]);
      expect(await seqsOf('s1', { fromSeq: 10, toSeq: 10 })).toEqual([10]);
      expect(await seqsOf('s1', { fromSeq: 8, toSeq: 50 })).toEqual([8, 9, 10]);
      expect(await seqsOf('s1', { fromSeq: 11 })).toEqual([]);
      expect(await seqsOf('s1', { fromSeq: 6, toSeq: 5 })).toEqual([]);
      expect(await seqsOf('s1', { fromSeq: 0, toSeq: 2 })).toEqual([1, 2]);
    });

    it('throws SessionNotFoundError for an unknown session', async () => {
      expect(await store.exists('nope')).toBe(false);
      await expect(store.lastSeq('nope')).rejects.toBeInstanceOf(SessionNotFoundError);
      await expect(collect(store.read('nope'))).rejects.toMatchObject({
        name: 'SessionNotFoundError',
        session: 'nope',
      });
    });

    it('lists catalog rows folded from the records', async () => {
      const a = new StreamBuilder('a', { at: 1_000_000 });
      await store.append('a', [a.created('explicit title'), a.user('ignored for the title')], {
        expectedSeq: 0,
      });
      const b = new StreamBuilder('b', { at: 2_000_000 });
      await store.append('b', [b.created(), b.user('  fix   the\nfailing test  ')], { expectedSeq: 0 });
      await store.append('b', [b.runStarted(), b.transition()], { expectedSeq: 2 });
      const c = new StreamBuilder('c', { at: 3_000_000 });
      await store.append('c', [c.created('fork', { session: 'b', seq: 2 }), c.runStarted()], {
        expectedSeq: 0,
      });
      await store.append('c', [c.runEnded('failed', 'max_turns_reached')], { expectedSeq: 2 });

      const rows = await store.list();
      expect(rows.map((r) => r.id)).toEqual(['c', 'b', 'a']); // newest first
      expect(rows.find((r) => r.id === 'a')).toEqual({
        id: 'a',
        title: 'explicit title',
        created: 1_001_000,
        updated: 1_002_000,
        status: 'idle',
        lastSeq: 2,
        forkedFrom: null,
        parent: null,
      });
      expect(rows.find((r) => r.id === 'b')).toMatchObject({
        title: 'fix the failing test',
        status: 'running',
        lastSeq: 4,
        created: 2_001_000,
        updated: 2_004_000,
      });
      expect(rows.find((r) => r.id === 'c')).toMatchObject({
        title: 'fork',
        status: 'failed',
        lastSeq: 3,
        forkedFrom: { session: 'b', seq: 2 },
      });
    });

    it("lists a sub-agent's parent (run and toolUseId may be unknown)", async () => {
      const k = new StreamBuilder('kid');
      await store.append(
        'kid',
        [k.child({ session: 'p', run: 'r1', toolUseId: 'toolu_1', agent: 'general-purpose' })],
        {
          expectedSeq: 0,
        },
      );
      const i = new StreamBuilder('imported');
      await store.append(
        'imported',
        [i.child({ session: 'p', run: null, toolUseId: null, agent: 'Explore' })],
        {
          expectedSeq: 0,
        },
      );
      const rows = await store.list();
      expect(rows.find((r) => r.id === 'kid')?.parent).toEqual({
        session: 'p',
        toolUseId: 'toolu_1',
        agent: 'general-purpose',
      });
      expect(rows.find((r) => r.id === 'imported')?.parent).toEqual({
        session: 'p',
        toolUseId: null,
        agent: 'Explore',
      });
    });

    it('keeps the catalog row in step with later appends', async () => {
      const s = new StreamBuilder('s1');
      await store.append('s1', [s.created(), s.runStarted()], { expectedSeq: 0 });
      expect((await store.list())[0]).toMatchObject({ status: 'running', lastSeq: 2 });
      await store.append('s1', [s.runEnded('completed')], { expectedSeq: 2 });
      expect((await store.list())[0]).toMatchObject({ status: 'completed', lastSeq: 3, updated: s.at });
    });

    it('does not list a session whose only append was refused', async () => {
      const s = new StreamBuilder('s1', { seq: 3 });
      await store.append('s1', [s.created()], { expectedSeq: 0 }).catch(() => undefined);
      expect(await store.list()).toEqual([]);
    });

    it('takes many small appends, each continuing the last', async () => {
      const s = new StreamBuilder('many');
      await store.append('many', [s.created()], { expectedSeq: 0 });
      for (let i = 0; i < 300; i++) {
        await store.append('many', [s.transition()], { expectedSeq: s.seq - 1 });
      }
      const seqs = await seqsOf('many');
      expect(seqs).toHaveLength(301);
      expect(seqs).toEqual(seqs.map((_, i) => i + 1));
      expect(await store.lastSeq('many')).toBe(301);
      expect((await store.list())[0]).toMatchObject({ id: 'many', lastSeq: 301 });
    });

    it('removes a whole session when it can (optional), leaving the others and a fresh start', async () => {
      if (!store.remove) return;
      const a = new StreamBuilder('a');
      const b = new StreamBuilder('b');
      await store.append('a', [a.created('gone'), a.user('x')], { expectedSeq: 0 });
      await store.append('b', [b.created('kept')], { expectedSeq: 0 });
      await store.remove('a');
      expect(await store.exists('a')).toBe(false);
      await expect(store.lastSeq('a')).rejects.toBeInstanceOf(SessionNotFoundError);
      expect((await store.list()).map((r) => r.id)).toEqual(['b']);
      const again = new StreamBuilder('a');
      await store.append('a', [again.created('new')], { expectedSeq: 0 });
      expect(await seqsOf('a')).toEqual([1]);
      expect((await store.list()).find((r) => r.id === 'a')).toMatchObject({ title: 'new', lastSeq: 1 });
    });
  });
}
