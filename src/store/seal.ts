import * as crypto from 'node:crypto';
import type { LogRecord } from './records.ts';

/*
 * The seal: every v2 record carries `h`, a hash of its own canonical JSON chained to the seal of
 * the record before it:
 *
 *   h(n) = base64url(sha256(h(n-1) + canonical(n)))[0..22]      (h(n-1) = '' when record n-1 has none)
 *   canonical(n) = JSON.stringify({ v, seq, at, session, run, type, data })  — `data` as validated
 *
 * Stores seal records as they write them (whatever the writer passed as `h` is replaced), so a
 * fork, an import or a resumed v1 session are sealed the same way. Verify recomputes the chain:
 * changing any field of any record (or dropping its seal) breaks the seal at that record. It is
 * tamper-evidence, not authentication: whoever can rewrite the file can recompute the chain;
 * verify's re-derivation of derived records is what catches an edit made consistently.
 * 22 base64url characters keep 132 bits of the hash.
 */

export const SEAL_CHARS = 22;

// crypto.hash (one call, no Hash object) is ~2× faster for small inputs; Node < 20.12 lacks it.
const oneShot = (crypto as { hash?: (alg: string, data: string, enc: 'base64url') => string }).hash;

function sha256(data: string): string {
  return oneShot
    ? oneShot('sha256', data, 'base64url')
    : crypto.createHash('sha256').update(data).digest('base64url');
}

/** The JSON a record's seal covers: the envelope in a fixed order and `data`, never `h`. */
export function canonicalJson(r: LogRecord): string {
  // Numbers print the same through String() as through JSON.stringify (records hold finite ones
  // only), a record type is a plain identifier, and a stream repeats its session and run ids:
  // only `data` is serialised every time.
  return `{"v":${r.v},"seq":${r.seq},"at":${r.at},"session":${ids.session(r.session)},"run":${ids.run(r.run)},"type":"${r.type}","data":${JSON.stringify(r.data)}}`;
}

/** JSON of the last session and run ids seen: a stream's records share them. */
function lastJson<T extends string | null>(): (value: T) => string {
  let last: T | undefined;
  let json = '';
  return (value) => {
    if (value !== last) {
      last = value;
      json = JSON.stringify(value);
    }
    return json;
  };
}
const ids = { session: lastJson<string>(), run: lastJson<string | null>() };

export function sealOf(previous: string | undefined, canonical: string): string {
  return sha256((previous ?? '') + canonical).slice(0, SEAL_CHARS);
}

/** Records (validated, in order) as the store writes them: sealed when v ≥ 2, with their JSON lines. */
export interface SealedBatch {
  records: LogRecord[];
  lines: string[];
  /** The seal of the last record (undefined when it is a v1 record): the `previous` of the next batch. */
  head: string | undefined;
}

export function sealRecords(previous: string | undefined, records: readonly LogRecord[]): SealedBatch {
  const out: LogRecord[] = new Array(records.length);
  const lines: string[] = new Array(records.length);
  let head = previous;
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    const canonical = canonicalJson(r);
    if (r.v >= 2) {
      const h = sealOf(head, canonical);
      out[i] = { ...r, h } as LogRecord;
      lines[i] = `${canonical.slice(0, -1)},"h":"${h}"}`;
      head = h;
    } else {
      out[i] = r.h === undefined ? r : unsealed(r);
      lines[i] = canonical;
      head = undefined;
    }
  }
  return { records: out, lines, head };
}

function unsealed(r: LogRecord): LogRecord {
  const { h: _dropped, ...rest } = r;
  return rest as LogRecord;
}

export interface BrokenSeal {
  seq: number;
  expected: string | null;
  actual: string | null;
  detail: string;
}

/**
 * The first record whose seal does not match what the records before it and its own content
 * give, or null. v1 records carry no seal; a v2 record without one is broken.
 */
export function firstBrokenSeal(records: readonly LogRecord[]): BrokenSeal | null {
  let previous: string | undefined;
  for (const r of records) {
    const broken = brokenSeal(previous, r);
    if (broken) return broken;
    previous = r.h;
  }
  return null;
}

/** Whether `r`'s seal is broken, `previous` being the seal of the record before it (for a reader that holds one record at a time). */
export function brokenSeal(previous: string | undefined, r: LogRecord): BrokenSeal | null {
  if (r.v < 2 && r.h === undefined) return null;
  if (r.h === undefined) {
    return {
      seq: r.seq,
      expected: null,
      actual: null,
      detail: `seq ${r.seq} is a v${r.v} record without its seal`,
    };
  }
  const expected = sealOf(previous, canonicalJson(r));
  if (expected === r.h) return null;
  return {
    seq: r.seq,
    expected,
    actual: r.h,
    detail: `seq ${r.seq} (${r.type}) is not what was written: its seal does not match its content and the records before it`,
  };
}

/**
 * The records sealed anew from the first: what a tool that rewrites a log on purpose (a migration,
 * a test editing a log to see verify catch it by re-derivation alone) does after its edit.
 */
export function resealed(records: readonly LogRecord[]): LogRecord[] {
  return sealRecords(undefined, records).records;
}
