import type { LogRecord } from '../store/records.ts';
import type { EventStore } from '../store/types.ts';
import { createWholeSession } from '../store/wholeStream.ts';
import { type Divergence, verifyReplay } from './verify.ts';

export interface CopyReport {
  session: string;
  /** `copied`: records were appended; `present`: the target already had the whole log. */
  outcome: 'copied' | 'present' | 'failed';
  records: number;
  appended: number;
  /** The copy read back from the target replays identically (replay --verify). */
  verified: boolean;
  divergence?: Divergence;
  error?: string;
}

/**
 * Copies one session's log to another store (file ↔ PostgreSQL), then reads it back from the
 * target and checks it: the same JSON, record for record, and a verify replay. A target that
 * already holds a prefix of the log gets the rest; one holding something else is refused.
 * What is written appears whole or not at all — a copy killed half-way leaves the target as it
 * was, never a prefix that lists as `interrupted`: a new session through `createWholeSession`
 * (a temporary file linked into place; one transaction on PostgreSQL), the rest of a prefix
 * through `replace` (renamed over) or one append (one transaction).
 */
export async function copySession(from: EventStore, to: EventStore, session: string): Promise<CopyReport> {
  const source: LogRecord[] = [];
  for await (const r of from.read(session)) source.push(r);
  const report: CopyReport = {
    session,
    outcome: 'copied',
    records: source.length,
    appended: 0,
    verified: false,
  };
  try {
    const have = (await to.exists(session)) ? await to.lastSeq(session) : 0;
    if (have > source.length)
      throw new Error(`the target's log is longer (${have} records) than the source's (${source.length})`);
    if (have > 0) {
      let i = 0;
      for await (const r of to.read(session, { toSeq: have })) {
        if (JSON.stringify(r) !== JSON.stringify(source[i]))
          throw new Error(`the target's log differs at seq ${r.seq}`);
        i++;
      }
    }
    if (have === 0) await createWholeSession(to, session, source);
    else if (have < source.length && to.replace) await to.replace(session, source, have);
    else if (have < source.length) await to.append(session, source.slice(have), { expectedSeq: have });
    report.appended = source.length - have;
    if (report.appended === 0) report.outcome = 'present';
    const copy: LogRecord[] = [];
    for await (const r of to.read(session)) copy.push(r);
    const same =
      copy.length === source.length && copy.every((r, k) => JSON.stringify(r) === JSON.stringify(source[k]));
    if (!same) throw new Error('the log read back from the target is not the one written');
    const verify = await verifyReplay(copy);
    report.verified = verify.ok;
    if (verify.divergence) report.divergence = verify.divergence;
  } catch (e) {
    report.outcome = 'failed';
    report.error = e instanceof Error ? e.message : String(e);
  }
  return report;
}
