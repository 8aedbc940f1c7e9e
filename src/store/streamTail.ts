import { constants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { InvalidRecordError } from './errors.ts';
import { CHUNK } from './fileStream.ts';
import { PRIVATE_FILE } from './privateFiles.ts';
import type { LogRecord } from './records.ts';
import { validateRecord } from './validate.ts';

const NL = 0x0a;

async function readFully(fh: FileHandle, buf: Buffer, position: number): Promise<void> {
  let done = 0;
  while (done < buf.length) {
    const { bytesRead } = await fh.read(buf, done, buf.length - done, position + done);
    if (bytesRead === 0) throw new Error(`unexpected end of file at offset ${position + done}`);
    done += bytesRead;
  }
}

export interface TailScan {
  /** Offset just past the last complete line (0 when there is none): what follows is a torn write. */
  goodEnd: number;
  /** That line's text and where it starts. */
  last?: { text: string; offset: number };
}

/**
 * Finds the last complete line by reading backwards from the end, so the cost is bounded by the size
 * of the last records, not by the length of the stream, and is linear in them: chunks are collected
 * and joined once, never re-copied per chunk. Only what follows the last newline — a line a crash cut
 * short — is the torn tail; a complete line is returned whatever it holds, for the caller to judge.
 */
export async function scanTail(fh: FileHandle, size: number): Promise<TailScan> {
  const chunks: Buffer[] = [];
  let start = size;
  /** Offsets of the newlines found so far, highest first. */
  const newlines: number[] = [];
  while (start > 0 && newlines.length < 2) {
    const n = Math.min(CHUNK, start);
    const b = Buffer.allocUnsafe(n);
    await readFully(fh, b, start - n);
    start -= n;
    for (
      let i = b.lastIndexOf(NL);
      i !== -1 && newlines.length < 2;
      i = i > 0 ? b.lastIndexOf(NL, i - 1) : -1
    ) {
      newlines.push(start + i);
    }
    // Chunks wholly inside the torn tail are not needed; from the last newline back they are.
    if (newlines.length > 0) chunks.unshift(b);
  }
  const lastNl = newlines[0];
  if (lastNl === undefined) return { goodEnd: 0 };
  const lineStart = (newlines[1] ?? -1) + 1;
  const buf = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  return {
    goodEnd: lastNl + 1,
    last: { text: buf.toString('utf8', lineStart - start, lastNl - start), offset: lineStart },
  };
}

/** Number of lines before `offset`: only called on the rare paths that must name a line. */
export async function countLines(fh: FileHandle, offset: number): Promise<number> {
  const buf = Buffer.allocUnsafe(CHUNK);
  let count = 0;
  for (let pos = 0; pos < offset; ) {
    const { bytesRead } = await fh.read(buf, 0, Math.min(CHUNK, offset - pos), pos);
    if (bytesRead === 0) break;
    for (let i = buf.indexOf(NL); i !== -1 && i < bytesRead; i = buf.indexOf(NL, i + 1)) count++;
    pos += bytesRead;
  }
  return count;
}

/**
 * Last seq of a stream, the seal of its last record and where its good part ends, from the tail
 * alone. Only a last line without its newline is a torn write (a crash can leave nothing else: every
 * commit is one write, made durable before the next). A complete last line that is not JSON or fails
 * validation — a corrupted disk block, an edit, a newer schema version — is thrown, never cut.
 */
export async function inspectTail(
  fh: FileHandle,
  size: number,
  file: string,
  session: string,
): Promise<{ lastSeq: number; goodEnd: number; head: string | undefined }> {
  const tail = await scanTail(fh, size);
  if (!tail.last) return { lastSeq: 0, goodEnd: 0, head: undefined };
  const { text, offset } = tail.last;
  let record: LogRecord;
  try {
    record = validateRecord(JSON.parse(text), { file, session });
  } catch (e) {
    // Again, now with the line number that the error must name (counted only on this path).
    const line = (await countLines(fh, offset)) + 1;
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (parseError) {
      throw new InvalidRecordError(
        { file, line },
        `complete last line is not valid JSON (${(parseError as Error).message}): the stream is corrupt, not torn, and is left as it is`,
      );
    }
    record = validateRecord(raw, { file, session, line });
    throw e;
  }
  if (record.session !== session) {
    const line = (await countLines(fh, offset)) + 1;
    throw new InvalidRecordError(
      { file, line, seq: record.seq },
      `record belongs to session ${record.session}`,
    );
  }
  return { lastSeq: record.seq, goodEnd: tail.goodEnd, head: record.h };
}

/** Last seq of a stream read by someone without the writer lock: a torn tail is reported, not cut. */
export async function peekLastSeq(
  file: string,
  session: string,
  onTorn: (line: number) => void,
): Promise<number> {
  let fh: FileHandle;
  try {
    fh = await open(file, 'r');
  } catch (e) {
    if ((e as { code?: string }).code === 'ENOENT') return 0;
    throw e;
  }
  try {
    const size = (await fh.stat()).size;
    const { lastSeq, goodEnd } = await inspectTail(fh, size, file, session);
    if (goodEnd < size) onTorn((await countLines(fh, goodEnd)) + 1);
    return lastSeq;
  } finally {
    await fh.close();
  }
}

/**
 * Opens an existing stream for appending (O_APPEND) and finds where it really ends; a torn tail is cut
 * and made durable before anything is appended after it. Undefined when the stream does not exist yet.
 */
export async function openStreamForWriting(
  file: string,
  session: string,
): Promise<
  | {
      fh: FileHandle;
      lastSeq: number;
      size: number;
      head: string | undefined;
      cut?: { line: number; bytes: number };
    }
  | undefined
> {
  let fh: FileHandle;
  try {
    // Read-write and append, but no O_CREAT: a missing stream is the caller's to create.
    fh = await open(file, constants.O_RDWR | constants.O_APPEND);
  } catch (e) {
    if ((e as { code?: string }).code === 'ENOENT') return undefined;
    throw e;
  }
  try {
    const size = (await fh.stat()).size;
    const { lastSeq, goodEnd, head } = await inspectTail(fh, size, file, session);
    if (goodEnd === size) return { fh, lastSeq, size, head };
    const line = (await countLines(fh, goodEnd)) + 1;
    await fh.truncate(goodEnd);
    await fh.datasync();
    return { fh, lastSeq, size: goodEnd, head, cut: { line, bytes: size - goodEnd } };
  } catch (e) {
    await fh.close();
    throw e;
  }
}

/** Creates a stream file; its directory entry is synced too, or a crash could lose the whole stream. */
export async function createStream(file: string, dir: string): Promise<FileHandle> {
  const fh = await open(file, 'a+', PRIVATE_FILE);
  const d = await open(dir, 'r');
  try {
    await d.sync().catch(() => undefined); // not every platform can sync a directory
  } finally {
    await d.close();
  }
  return fh;
}
