import type { LogRecord } from '../store/records.ts';
import type { EventStore } from '../store/types.ts';
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

/** Records per append into the target: one commit each. */
const CHUNK = 500;

/**
 * Copies one session's log to another store (file ↔ PostgreSQL), then reads it back from the
 * target and checks it: the same JSON, record for record, and a verify replay. A target that
 * already holds a prefix of the log gets the rest; one holding something else is refused.
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
    for (let at = have; at < source.length; at += CHUNK) {
      const chunk = source.slice(at, at + CHUNK);
      await to.append(session, chunk, { expectedSeq: at });
      report.appended += chunk.length;
    }
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
