import { z } from 'zod';
import { MAX_RECORD_DEPTH, nestedDeeperThan } from '../lib/jsonDepth.ts';
import { InvalidRecordError, SchemaVersionError } from './errors.ts';
import {
  type LogRecord,
  LogRecordSchema,
  RECORD_TYPES,
  type RecordType,
  SUPPORTED_SCHEMA_VERSIONS,
} from './records.ts';

export interface RecordLocation {
  session?: string;
  line?: number;
  file?: string;
}

interface RecordParser {
  safeParse(raw: unknown): { success: true; data: unknown } | { success: false };
}

/**
 * One compiled parser per record type, built on the type's first record. The log record union
 * dispatches on `type` to exactly one option, so parsing with that option (z.compile'd: zod's
 * generated straight-line parser) accepts and returns exactly what the union does; it is ~10×
 * faster than the runtime parser (bench/micro/validate.ts). Compiling is lazy because it costs
 * ~1–15 ms a type, paid once per process and only for the types a process sees.
 */
const parsers = new Map<unknown, RecordParser>();

function parserFor(type: unknown): RecordParser | undefined {
  let parser = parsers.get(type);
  if (parser === undefined && RECORD_TYPES.includes(type as RecordType)) {
    // z.compile never throws: a schema it cannot compile comes back as is (runtime parser).
    parser = z.compile(z.getDiscriminatedOption(LogRecordSchema, type as RecordType)) as RecordParser;
    parsers.set(type, parser);
  }
  return parser;
}

function located(raw: object, where: RecordLocation) {
  const seq = (raw as { seq?: unknown }).seq;
  return { ...where, seq: typeof seq === 'number' ? seq : undefined };
}

/** Validates one record (already parsed from JSON). Throws a located, typed error. */
export function validateRecord(raw: unknown, where: RecordLocation = {}): LogRecord {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    const seq = typeof raw === 'object' && raw !== null ? (raw as { seq?: unknown }).seq : undefined;
    throw new InvalidRecordError(
      { ...where, seq: typeof seq === 'number' ? seq : undefined },
      'not a JSON object',
    );
  }
  const v = (raw as { v?: unknown }).v;
  if (typeof v !== 'number' || !SUPPORTED_SCHEMA_VERSIONS.includes(v)) {
    throw new SchemaVersionError(located(raw, where), v, SUPPORTED_SCHEMA_VERSIONS);
  }
  // Before anything walks it: the seal's JSON.stringify overflows the stack ~4 500 levels down.
  if (nestedDeeperThan(raw, MAX_RECORD_DEPTH))
    throw new InvalidRecordError(located(raw, where), `nested deeper than ${MAX_RECORD_DEPTH} levels`);
  const parsed = parserFor((raw as { type?: unknown }).type)?.safeParse(raw);
  if (parsed?.success) return parsed.data as LogRecord;
  // The error (and an unknown type) comes from the union itself, so its wording never changes.
  const failed = LogRecordSchema.safeParse(raw);
  if (failed.success) return failed.data;
  const issue = failed.error.issues[0];
  const path = issue?.path.length ? issue.path.join('.') : '(record)';
  const type = (raw as { type?: unknown }).type;
  throw new InvalidRecordError(
    located(raw, where),
    `${JSON.stringify(type)} ${path}: ${issue?.message ?? 'invalid'}`,
  );
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
