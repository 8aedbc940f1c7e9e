/**
 * SessionWriter + MemoryEventStore per tool round: ten `add`s and two `commit`s (the runtime's
 * write-ahead points), with the store validating (its default) and not, and the parts alone.
 *   npm run bench:build && node node_modules/.cache/reloop-bench/bench/micro/writer.js
 */
import { SessionWriter } from '../../src/runtime/sessionWriter.ts';
import { updateCatalogRow } from '../../src/store/catalogRow.ts';
import { evolve } from '../../src/store/evolve.ts';
import { MemoryEventStore } from '../../src/store/memoryStore.ts';
import type { DraftRecord, LogRecord } from '../../src/store/records.ts';
import { emptySessionState } from '../../src/store/sessionState.ts';
import { fmt, RoundStream, SESSION } from './_round.ts';

const ROUNDS = 2000;
const drafts = (records: LogRecord[]): DraftRecord[] =>
  records.map((r) => ({ type: r.type, run: r.run, at: r.at, data: r.data }) as DraftRecord);
const src = new RoundStream();
const start = drafts(src.start());
const rounds = Array.from({ length: ROUNDS }, (_, i) => drafts(src.round(i)));

async function writerRounds(validate: boolean, listeners: number): Promise<number> {
  const store = new MemoryEventStore({ validate });
  const w = new SessionWriter(SESSION, store, emptySessionState());
  let seen = 0;
  for (let i = 0; i < listeners; i++) w.onRecord(() => seen++);
  for (const d of start) w.add(d);
  await w.commit();
  const t0 = process.hrtime.bigint();
  for (const round of rounds) {
    // model.requested is the first write-ahead point, tool.started the second.
    for (let i = 0; i < 10; i++) {
      w.add(round[i]!);
      if (i === 1 || i === 6) await w.commit();
    }
  }
  await w.commit();
  return Number(process.hrtime.bigint() - t0) / ROUNDS;
}

function foldRounds(): number {
  let s = emptySessionState();
  const stream = new RoundStream();
  const records = [...stream.start(), ...Array.from({ length: ROUNDS }, (_, i) => stream.round(i)).flat()];
  const t0 = process.hrtime.bigint();
  for (const r of records) s = evolve(s, r);
  if (s.lastSeq !== records.length) throw new Error('fold');
  return Number(process.hrtime.bigint() - t0) / ROUNDS;
}

function catalogRounds(): number {
  const stream = new RoundStream();
  const batches = Array.from({ length: ROUNDS }, (_, i) => stream.round(i)).flatMap((r) => [
    r.slice(0, 2),
    r.slice(2, 7),
    r.slice(7),
  ]);
  let row = updateCatalogRow(undefined, new RoundStream().start());
  const t0 = process.hrtime.bigint();
  for (const b of batches) row = updateCatalogRow(row, b);
  if (row.lastSeq === 0) throw new Error('catalog');
  return Number(process.hrtime.bigint() - t0) / ROUNDS;
}

const cases: [string, () => number | Promise<number>][] = [
  ['writer + store, validating', () => writerRounds(true, 0)],
  ['writer + store, validating, 1 listener', () => writerRounds(true, 1)],
  ['writer + store, no validation', () => writerRounds(false, 0)],
  ['evolve alone (10 records)', foldRounds],
  ['updateCatalogRow alone (3 batches)', catalogRounds],
];
for (const [name, f] of cases) {
  const samples: number[] = [];
  for (let i = 0; i < 3; i++) await f();
  for (let i = 0; i < 15; i++) samples.push(await f());
  samples.sort((a, b) => a - b);
  console.log(`${name.padEnd(42)} ${fmt(samples[7]!).padStart(10)} per round  (min ${fmt(samples[0]!)})`);
}
