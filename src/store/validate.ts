import { InvalidRecordError, SchemaVersionError } from './errors.ts';
import { type LogRecord, LogRecordSchema, SUPPORTED_SCHEMA_VERSIONS } from './records.ts';

export interface RecordLocation {
  session?: string;
  line?: number;
  file?: string;
}

/** Validates one record (already parsed from JSON). Throws a located, typed error. */
export function validateRecord(raw: unknown, where: RecordLocation = {}): LogRecord {
  const seq = typeof raw === 'object' && raw !== null ? (raw as { seq?: unknown }).seq : undefined;
  const at = { ...where, seq: typeof seq === 'number' ? seq : undefined };
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new InvalidRecordError(at, 'not a JSON object');
  }
  const v = (raw as { v?: unknown }).v;
  if (typeof v !== 'number' || !SUPPORTED_SCHEMA_VERSIONS.includes(v)) {
    throw new SchemaVersionError(at, v, SUPPORTED_SCHEMA_VERSIONS);
  }
  const parsed = LogRecordSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.path.length ? issue.path.join('.') : '(record)';
    const type = (raw as { type?: unknown }).type;
    throw new InvalidRecordError(at, `${JSON.stringify(type)} ${path}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}

/** Parses one JSONL line. */
export function parseRecordLine(line: string, where: RecordLocation = {}): LogRecord {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch (e) {
    throw new InvalidRecordError(where, `not valid JSON (${(e as Error).message})`);
  }
  return validateRecord(raw, where);
}

/** Checks that a batch continues a stream at `expectedSeq` with no gap and one session id. */
export function checkContiguous(session: string, records: readonly LogRecord[], expectedSeq: number): void {
  let next = expectedSeq + 1;
  for (const r of records) {
    if (r.session !== session) {
      throw new InvalidRecordError({ session, seq: r.seq }, `record belongs to session ${r.session}`);
    }
    if (r.seq !== next) {
      throw new InvalidRecordError({ session, seq: r.seq }, `seq gap: expected ${next}, got ${r.seq}`);
    }
    next++;
  }
}
