/**
 * evolve cost per record: the fold of a session start plus 1000 tool rounds (10 records each),
 * overall and per record type.
 *   npm run bench:build && node node_modules/.cache/reloop-bench/bench/micro/evolve.js
 */
import { evolve, fold } from '../../src/store/evolve.ts';
import type { SessionState } from '../../src/store/sessionState.ts';
import { emptySessionState } from '../../src/store/sessionState.ts';
import { fmt, medianNs, roundStream } from './_round.ts';

const stream = roundStream(1000);
let sink: SessionState | undefined;
const { median: foldNs, min: foldMin } = medianNs(() => {
  sink = fold(stream, emptySessionState());
}, stream.length);
console.log(
  `fold, per record          ${fmt(foldNs).padStart(10)}  (min ${fmt(foldMin)}; ${fmt(foldNs * 10)} per round)`,
);

// Per type: one round's record evolved again and again from the state just before it (a short
// history, so the list copy an append to an older view makes stays negligible).
const short = roundStream(2);
let s = emptySessionState();
const cases: [string, SessionState, (typeof short)[number]][] = [];
short.forEach((r, i) => {
  if (i >= 13) cases.push([r.type, s, r]);
  s = evolve(s, r);
});
const seen = new Set<string>();
for (const [type, state, record] of cases) {
  if (seen.has(type)) continue;
  seen.add(type);
  const { median } = medianNs(() => {
    for (let i = 0; i < 10_000; i++) sink = evolve(state, record);
  }, 10_000);
  console.log(`${type.padEnd(26)}${fmt(median).padStart(10)}`);
}
if (!sink) throw new Error('unreachable');
