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
 * A line longer than a chunk is kept as a list of its pieces and joined once at its newline, so reading
 * it costs time linear in its length (joining on every chunk made a 100 MB line quadratic).
 */
async function* readLines(file: string, start: number, end: number): AsyncGenerator<Line[]> {
  const fh = await open(file, 'r');
  try {
    let buf = Buffer.allocUnsafe(CHUNK);
    const carry: Buffer[] = [];
    let pos = start;
    while (pos < end) {
      const { bytesRead } = await fh.read(buf, 0, Math.min(CHUNK, end - pos), pos);
      if (bytesRead === 0) break;
      const chunk = buf.subarray(0, bytesRead);
      const lines: Line[] = [];
      let from = 0;
      for (let nl = chunk.indexOf(NL); nl !== -1; nl = chunk.indexOf(NL, from)) {
        let text: string;
        if (carry.length > 0) {
          carry.push(chunk.subarray(from, nl));
          text = Buffer.concat(carry).toString('utf8');
          carry.length = 0;
        } else {
          text = chunk.toString('utf8', from, nl);
        }
        lines.push({ text, end: pos + nl + 1, terminated: true });
        from = nl + 1;
      }
      if (from < bytesRead) {
        // The piece stays referenced until its line ends: read the next chunk into a fresh buffer.
        carry.push(chunk.subarray(from));
        buf = Buffer.allocUnsafe(CHUNK);
      }
      pos += bytesRead;
      if (lines.length > 0) yield lines;
    }
    if (carry.length > 0)
      yield [{ text: Buffer.concat(carry).toString('utf8'), end: pos, terminated: false }];
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
 * Only a last line without its newline is a torn write (reported, not yielded: a crash, or a write in
 * progress in another process). Any complete line that is not a valid record is corruption: thrown,
 * after the good records before it. Lines before `fromSeq` are skipped without parsing; the first
 * yielded record still proves its place.
 */
export async function* readRecords(
  opts: ReadRecordsOptions,
): AsyncGenerator<{ records: LogRecord[]; end: number }> {
  const { session, file } = opts;
  const fromSeq = opts.fromSeq ?? 1;
  const toSeq = opts.toSeq ?? Number.POSITIVE_INFINITY;
  let line = (opts.firstLine ?? 1) - 1;
  let offset = opts.start ?? 0;
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
        if (!l.terminated) {
          opts.onTornTail({ line, offset: lineStart, detail: 'no trailing newline' });
          continue;
        }
        if (line >= fromSeq) {
          const record = parseLine(l, line, file, session);
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
}

/** One complete line as a validated record; anything else is a located InvalidRecordError. */
function parseLine(l: Line, line: number, file: string, session: string): LogRecord {
  let raw: unknown;
  try {
    raw = JSON.parse(l.text);
  } catch (e) {
    throw new InvalidRecordError({ file, line }, `not valid JSON (${(e as Error).message})`);
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
