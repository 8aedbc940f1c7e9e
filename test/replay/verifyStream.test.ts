import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { verifyReplay } from '../../src/replay/verify.ts';
import { Window } from '../../src/replay/window.ts';
import { InvalidRecordError } from '../../src/store/errors.ts';
import { openFileStore } from '../../src/store/fileStore.ts';
import type { LogRecord, RecordOf } from '../../src/store/records.ts';
import { resealed } from '../../src/store/seal.ts';
import { scriptedSession, textTurn, toolTurn } from '../support/harness.ts';

/*
 * Verify pulls its records from a lazy source (the file store's readSync) as the re-drive needs
 * them and lets go of those it is past. These logs are long enough for that (one run of several
 * hundred records: the windows drop their heads in blocks of 64), so each check below runs with
 * the records it looks at already released, and must answer as verify of the whole array does.
 */

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

const ROUNDS = 40;

async function longLog(): Promise<LogRecord[]> {
  const turns = [
    ...Array.from({ length: ROUNDS }, (_, i) => toolTurn([{ name: 'echo', input: { text: `t${i}` } }])),
    textTurn('done'),
  ];
  const h = await scriptedSession(turns, { settings: { maxTurns: ROUNDS + 5 } });
  const res = await h.session.submit('go');
  expect(res.status).toBe('completed');
  return h.records();
}

/** The records one at a time, never as an array verify could hold. */
function* lazily(records: readonly LogRecord[]): Generator<LogRecord> {
  for (const r of records) yield r;
}

describe('verify from a lazy source', () => {
  it('reports what verify of the whole array reports, on a long run', async () => {
    const records = await longLog();
    expect(records.length).toBeGreaterThan(300);
    const whole = await verifyReplay(records);
    expect(whole.ok).toBe(true);
    expect(await verifyReplay(lazily(records))).toEqual(whole);
    for (const toSeq of [7, 150, records.length - 3]) {
      expect(await verifyReplay(lazily(records), { toSeq }), `toSeq ${toSeq}`).toEqual(
        await verifyReplay(records, { toSeq }),
      );
    }
  });

  it('catches an edit near the end of a long run at the same seq, by its seal and by re-derivation', async () => {
    const records = await longLog();
    const responses = records.filter((r) => r.type === 'model.responded');
    const target = responses[responses.length - 3]!;
    const edited = structuredClone(records);
    const rec = edited.find((r) => r.seq === target.seq) as RecordOf<'model.responded'>;
    rec.data.response.content = [{ type: 'text', text: 'no tools today' }];
    rec.data.response.stopReason = 'end_turn';

    const sealedOnly = await verifyReplay(lazily(edited));
    expect(sealedOnly.divergence?.seq).toBe(rec.seq);
    expect(sealedOnly).toEqual(await verifyReplay(edited));

    const rewritten = resealed(edited);
    const derived = await verifyReplay(lazily(rewritten));
    const nextTransition = rewritten.find((r) => r.seq > rec.seq && r.type === 'transition')!;
    expect(derived.divergence?.seq).toBe(nextTransition.seq);
    expect(derived).toEqual(await verifyReplay(rewritten));
    // Every record is still counted, past the divergence.
    expect(derived.records).toBe(records.length);
  });

  it('a source that fails mid-way makes verify fail with its error, even after a divergence', async () => {
    const records = await longLog();
    function* failingAt(n: number, log: readonly LogRecord[]): Generator<LogRecord> {
      for (const r of log) {
        if (r.seq === n) throw new InvalidRecordError({ file: 'x.jsonl', line: n }, 'not valid JSON');
        yield r;
      }
    }
    await expect(verifyReplay(failingAt(200, records))).rejects.toThrow(/x\.jsonl, line 200/);
    // A divergence long before the bad line does not hide it: reading the log first would have failed.
    const edited = structuredClone(records);
    const rec = edited.find((r) => r.type === 'model.responded') as RecordOf<'model.responded'>;
    rec.data.response.content = [{ type: 'text', text: 'no tools today' }];
    rec.data.response.stopReason = 'end_turn';
    const rewritten = resealed(edited);
    expect((await verifyReplay(rewritten)).divergence!.seq).toBeLessThan(20);
    await expect(verifyReplay(failingAt(300, rewritten))).rejects.toThrow(/line 300/);
  });

  it("the file store's readSync: the same report as reading the stream into an array", async () => {
    const records = await longLog();
    const dir = await mkdtemp(join(tmpdir(), 'reloop-verify-stream-'));
    dirs.push(dir);
    const store = await openFileStore(dir, { onWarning: () => undefined });
    const id = records[0]!.session;
    await store.append(id, records, { expectedSeq: 0 });
    const report = await verifyReplay(store.readSync(id));
    expect(report).toEqual(await verifyReplay(records));
    expect(report.ok).toBe(true);
    expect(await verifyReplay(store.readSync(id, { toSeq: 123 }), { toSeq: 123 })).toEqual(
      await verifyReplay(records, { toSeq: 123 }),
    );
    await store.close();
  });
});

describe('Window', () => {
  it('keeps indices after its head is released, and refuses a released item', () => {
    const w = new Window<number>(4);
    for (let i = 0; i < 10; i++) w.push(i);
    w.release(2); // fewer than a block: kept
    expect(w.at(0)).toBe(0);
    w.release(6);
    expect(w.length).toBe(10);
    expect(w.at(6)).toBe(6);
    expect(w.range(7, 10)).toEqual([7, 8, 9]);
    expect(() => w.at(5)).toThrow(/released/);
    expect(() => w.range(3, 8)).toThrow(/released/);
  });
});
