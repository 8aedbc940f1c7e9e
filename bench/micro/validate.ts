/**
 * validateRecord cost per record type, for the ten records of a tool round (and the round total),
 * next to the plain zod union parse it replaced (`LogRecordSchema.safeParse`, runtime parser).
 *   npm run bench:build && node node_modules/.cache/reloop-bench/bench/micro/validate.js
 */
import { LogRecordSchema } from '../../src/store/records.ts';
import { validateRecord } from '../../src/store/validate.ts';
import { fmt, medianNs, RoundStream } from './_round.ts';

const s = new RoundStream();
s.start();
const rounds = Array.from({ length: 1000 }, (_, i) => s.round(i));
const byType = new Map<string, unknown[]>();
for (const round of rounds) {
  for (const r of round) {
    const list = byType.get(r.type) ?? [];
    list.push(r);
    byType.set(r.type, list);
  }
}
const all = rounds.flat();

const where = { session: 'bench-s1' };
const ways: [string, (r: unknown) => unknown][] = [
  ['validateRecord', (r) => validateRecord(r, where)],
  ['union.safeParse', (r) => LogRecordSchema.safeParse(r)],
];
const header = ['record'.padEnd(20), ...ways.map(([name]) => name.padStart(16))].join(' ');
const rows: string[] = [];
const perRound = ways.map(() => 0);
for (const [type, records] of byType) {
  const perRoundCount = records.length / rounds.length;
  const cells = ways.map(([, f], i) => {
    const { median } = medianNs(() => {
      for (const r of records) f(r);
    }, records.length);
    perRound[i]! += median * perRoundCount;
    return fmt(median).padStart(16);
  });
  rows.push([`${type} ×${perRoundCount}`.padEnd(20), ...cells].join(' '));
}
const mixed = ways.map(([, f]) =>
  fmt(
    medianNs(() => {
      for (const r of all) f(r);
    }, all.length).median,
  ).padStart(16),
);
console.log(header);
console.log(rows.join('\n'));
console.log(['sum per round'.padEnd(20), ...perRound.map((ns) => fmt(ns).padStart(16))].join(' '));
console.log(['mixed, per record'.padEnd(20), ...mixed].join(' '));
