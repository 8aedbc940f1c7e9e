import { open } from 'node:fs/promises';
import { InvalidRecordError } from './errors.ts';
import type { LogRecord } from './records.ts';
import { validateRecord } from './validate.ts';

/** Something the store recovered from on its own but a person should hear about. */
export interface StoreWarning {
  code:
    | 'torn_tail'
    | 'torn_tail_cut'
    | 'catalog_unreadable'
    | 'catalog_write_failed'
    | 'catalog_row_unreadable';
  message: string;
  session?: string;
  file?: string;
  line?: number;
}
export type WarningHandler = (warning: StoreWarning) => void;

const NL = 0x0a;
export const CHUNK = 256 * 1024;

interface Line {
  text: string;
  /** File offset just past this line (past its newline when it has one). */
  end: number;
  terminated: boolean;
}

/**
 * The lines of a file between two offsets, a chunk at a time. Splitting on the raw newline byte is safe
 * in UTF-8 (no multi-byte sequence contains 0x0a) and keeps memory bounded by the chunk, not the file.
 */
async function* readLines(file: string, start: number, end: number): AsyncGenerator<Line[]> {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(CHUNK);
    let carry: Buffer | undefined;
    let pos = start;
    while (pos < end) {
      const { bytesRead } = await fh.read(buf, 0, Math.min(CHUNK, end - pos), pos);
      if (bytesRead === 0) break;
      const chunk = buf.subarray(0, bytesRead);
      const lines: Line[] = [];
      let from = 0;
      for (let nl = chunk.indexOf(NL); nl !== -1; nl = chunk.indexOf(NL, from)) {
        const text = carry
          ? Buffer.concat([carry, chunk.subarray(from, nl)]).toString('utf8')
          : chunk.toString('utf8', from, nl);
        carry = undefined;
        lines.push({ text, end: pos + nl + 1, terminated: true });
        from = nl + 1;
      }
      if (from < bytesRead) {
        const rest = Buffer.from(chunk.subarray(from));
        carry = carry ? Buffer.concat([carry, rest]) : rest;
      }
      pos += bytesRead;
      if (lines.length > 0) yield lines;
    }
    if (carry?.length) yield [{ text: carry.toString('utf8'), end: pos, terminated: false }];
  } finally {
    await fh.close();
  }
}

export interface TornTail {
  /** Line number of the first torn line. */
  line: number;
  /** Offset where the good part of the file ends. */
  offset: number;
  detail: string;
}

export interface ReadRecordsOptions {
  session: string;
  file: string;
  /** Offset where line `firstLine` starts (the catalog resumes folding from where it stopped). */
  start?: number;
  firstLine?: number;
  /** Stop at this offset: a writer in this process reads only what it has committed. */
  end?: number;
  fromSeq?: number;
  toSeq?: number;
  onTornTail: (tail: TornTail) => void;
}

/**
 * Validated records of one stream, in order, a chunk's worth at a time (one await per chunk, not per
 * record). Line n holds seq n, so a gap or a duplicate shows up as a seq that is not its line number.
 * A bad line is held back until we know what follows it: if the file ends there it is a torn write
 * (reported, not yielded); if anything follows it is corruption (thrown, after the good records before
 * it). Lines before `fromSeq` are skipped without parsing; the first yielded record still proves its place.
 */
export async function* readRecords(
  opts: ReadRecordsOptions,
): AsyncGenerator<{ records: LogRecord[]; end: number }> {
  const { session, file } = opts;
  const fromSeq = opts.fromSeq ?? 1;
  const toSeq = opts.toSeq ?? Number.POSITIVE_INFINITY;
  let line = (opts.firstLine ?? 1) - 1;
  let offset = opts.start ?? 0;
  let pending: { tail: TornTail; error: InvalidRecordError } | undefined;
  for await (const lines of readLines(file, offset, opts.end ?? Number.POSITIVE_INFINITY)) {
    const records: LogRecord[] = [];
    let end = offset;
    let error: unknown;
    let done = false;
    try {
      for (const l of lines) {
        line++;
        const lineStart = offset;
        offset = l.end;
        if (pending) throw pending.error;
        if (!l.terminated || line >= fromSeq) {
          const record = parseLine(l, line, file, session);
          if ('torn' in record) {
            pending = { tail: { line, offset: lineStart, detail: record.torn }, error: record.error };
            continue;
          }
          records.push(record);
          end = l.end;
          if (record.seq >= toSeq) {
            done = true;
            break;
          }
        }
      }
    } catch (e) {
      error = e;
    }
    if (records.length > 0) yield { records, end };
    if (error) throw error;
    if (done) return;
  }
  if (pending) opts.onTornTail(pending.tail);
}

/** One line as a validated record, or why it may be a torn write (decided by what follows it). */
function parseLine(
  l: Line,
  line: number,
  file: string,
  session: string,
): LogRecord | { torn: string; error: InvalidRecordError } {
  const torn = (detail: string) => ({ torn: detail, error: new InvalidRecordError({ file, line }, detail) });
  if (!l.terminated) return torn('no trailing newline');
  let raw: unknown;
  try {
    raw = JSON.parse(l.text);
  } catch (e) {
    return torn(`not valid JSON (${(e as Error).message})`);
  }
  const record = validateRecord(raw, { file, line, session });
  if (record.session !== session) {
    throw new InvalidRecordError(
      { file, line, seq: record.seq },
      `record belongs to session ${record.session}`,
    );
  }
  if (record.seq !== line) {
    throw new InvalidRecordError(
      { file, line, seq: record.seq },
      `seq gap: expected ${line}, got ${record.seq}`,
    );
  }
  return record;
}
