import { closeSync, openSync, readSync } from 'node:fs';
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
 * Cuts a file read a chunk at a time into lines. Splitting on the raw newline byte is safe in UTF-8
 * (no multi-byte sequence contains 0x0a) and keeps memory bounded by the chunk, not the file. A line
 * longer than a chunk is kept as a list of its pieces and joined once at its newline, so reading it
 * costs time linear in its length (joining on every chunk made a 100 MB line quadratic).
 */
class LineSplitter {
  private readonly carry: Buffer[] = [];

  /** The lines `chunk` (read at offset `pos`) completes; its tail after the last newline is kept. */
  *lines(chunk: Buffer, pos: number): Generator<Line> {
    const { carry } = this;
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
      from = nl + 1;
      yield { text, end: pos + from, terminated: true };
    }
    if (from < chunk.length) carry.push(chunk.subarray(from));
  }

  /**
   * A piece of the last chunk is kept for the line it starts: the next chunk must be read into a
   * fresh buffer.
   */
  get carrying(): boolean {
    return this.carry.length > 0;
  }

  /** What is left at the end of the file: a last line without its newline. */
  rest(pos: number): Line | null {
    return this.carry.length > 0
      ? { text: Buffer.concat(this.carry).toString('utf8'), end: pos, terminated: false }
      : null;
  }
}

/** The lines of a file between two offsets, a chunk at a time. */
async function* readLines(file: string, start: number, end: number): AsyncGenerator<Line[]> {
  const fh = await open(file, 'r');
  try {
    const split = new LineSplitter();
    let buf = Buffer.allocUnsafe(CHUNK);
    let pos = start;
    while (pos < end) {
      const { bytesRead } = await fh.read(buf, 0, Math.min(CHUNK, end - pos), pos);
      if (bytesRead === 0) break;
      const lines = [...split.lines(buf.subarray(0, bytesRead), pos)];
      if (split.carrying) buf = Buffer.allocUnsafe(CHUNK);
      pos += bytesRead;
      if (lines.length > 0) yield lines;
    }
    const rest = split.rest(pos);
    if (rest) yield [rest];
  } finally {
    await fh.close();
  }
}

/** readLines, synchronously: for a reader that pulls its records one at a time (verify). */
function* readLinesSync(file: string, start: number, end: number): Generator<Line[]> {
  const fd = openSync(file, 'r');
  try {
    const split = new LineSplitter();
    let buf = Buffer.allocUnsafe(CHUNK);
    let pos = start;
    while (pos < end) {
      const bytesRead = readSync(fd, buf, 0, Math.min(CHUNK, end - pos), pos);
      if (bytesRead === 0) break;
      const lines = [...split.lines(buf.subarray(0, bytesRead), pos)];
      if (split.carrying) buf = Buffer.allocUnsafe(CHUNK);
      pos += bytesRead;
      if (lines.length > 0) yield lines;
    }
    const rest = split.rest(pos);
    if (rest) yield [rest];
  } finally {
    closeSync(fd);
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
  const reader = new RecordReader(opts);
  for await (const lines of readLines(opts.file, reader.offset, opts.end ?? Number.POSITIVE_INFINITY)) {
    const batch = reader.records(lines);
    if (batch.records.length > 0) yield batch;
    if (batch.error) throw batch.error.thrown;
    if (reader.done) return;
  }
}

/**
 * readRecords, synchronously, handed out a record at a time: what verify pulls as its re-drive goes
 * (src/replay/verify.ts), so that a long log is never held whole. The same checks and errors. A
 * chunk's lines are parsed together, as `readRecords` does: parsing, validating and the re-drive
 * interleaved record by record measured slower than a chunk at a time (the code stays hot).
 */
export function* readRecordsSync(opts: ReadRecordsOptions): Generator<LogRecord> {
  const reader = new RecordReader(opts);
  for (const lines of readLinesSync(opts.file, reader.offset, opts.end ?? Number.POSITIVE_INFINITY)) {
    const batch = reader.records(lines);
    yield* batch.records;
    if (batch.error) throw batch.error.thrown;
    if (reader.done) return;
  }
}

/** Lines to records, for both readers: where the stream is, and what it may hold. */
class RecordReader {
  private line: number;
  /** File offset of the next line. */
  offset: number;
  /** `toSeq` is reached: nothing more to read. */
  done = false;
  private readonly fromSeq: number;
  private readonly toSeq: number;

  constructor(private readonly opts: ReadRecordsOptions) {
    this.line = (opts.firstLine ?? 1) - 1;
    this.offset = opts.start ?? 0;
    this.fromSeq = opts.fromSeq ?? 1;
    this.toSeq = opts.toSeq ?? Number.POSITIVE_INFINITY;
  }

  /**
   * The records of `lines` (a chunk's), up to `toSeq` (then `done`) or to the first bad line: the
   * good ones before it are returned with its error, for the caller to hand out before throwing.
   */
  records(lines: readonly Line[]): { records: LogRecord[]; end: number; error?: { thrown: unknown } } {
    const records: LogRecord[] = [];
    let end = this.offset;
    try {
      for (const l of lines) {
        const record = this.record(l);
        if (record === undefined) continue;
        records.push(record);
        end = l.end;
        if (this.done) break;
      }
    } catch (thrown) {
      return { records, end, error: { thrown } };
    }
    return { records, end };
  }

  /** The record on the next line (undefined: torn, reported, or before `fromSeq`); a bad one throws. */
  private record(l: Line): LogRecord | undefined {
    const line = ++this.line;
    const lineStart = this.offset;
    this.offset = l.end;
    if (!l.terminated) {
      this.opts.onTornTail({ line, offset: lineStart, detail: 'no trailing newline' });
      return undefined;
    }
    if (line < this.fromSeq) return undefined;
    const record = parseLine(l, line, this.opts.file, this.opts.session);
    if (record.seq >= this.toSeq) this.done = true;
    return record;
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
