import { constants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { InvalidRecordError } from './errors.ts';
import { CHUNK } from './fileStream.ts';
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
  /** Offset just past the last complete, parseable line (0 when there is none). */
  goodEnd: number;
  /** That line, parsed but not yet validated, and where it starts. */
  last?: { raw: unknown; offset: number };
}

/**
 * Finds the last complete, parseable line by reading backwards from the end, so the cost is bounded by
 * the size of the last records, not by the length of the stream. Everything after it — a line without
 * its newline, or lines that are not JSON (a crash can leave zeros) — is the torn tail.
 */
export async function scanTail(fh: FileHandle, size: number): Promise<TailScan> {
  let cacheStart = size;
  let cache = Buffer.alloc(0);
  const ensure = async (offset: number): Promise<void> => {
    while (cacheStart > offset) {
      const n = Math.min(CHUNK, cacheStart);
      const b = Buffer.allocUnsafe(n);
      await readFully(fh, b, cacheStart - n);
      cache = Buffer.concat([b, cache]);
      cacheStart -= n;
    }
  };
  /** Offset of the last newline before `before`, or -1. */
  const newlineBefore = async (before: number): Promise<number> => {
    for (;;) {
      if (before - 1 >= cacheStart) {
        const idx = cache.lastIndexOf(NL, before - 1 - cacheStart);
        if (idx !== -1) return cacheStart + idx;
      }
      if (cacheStart === 0) return -1;
      await ensure(Math.max(0, cacheStart - CHUNK));
    }
  };
  let end = size;
  while (end > 0) {
    await ensure(end - 1);
    const terminated = cache[end - 1 - cacheStart] === NL;
    const textEnd = terminated ? end - 1 : end;
    const start = (await newlineBefore(textEnd)) + 1;
    if (terminated) {
      try {
        const raw: unknown = JSON.parse(cache.toString('utf8', start - cacheStart, textEnd - cacheStart));
        return { goodEnd: end, last: { raw, offset: start } };
      } catch {
        // not JSON: part of the torn tail, keep walking back
      }
    }
    end = start;
  }
  return { goodEnd: 0 };
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
 * Last seq of a stream and where its good part ends, from the tail alone. A last line that is valid
 * JSON but fails validation (a newer schema version, a bug) is not a torn write: it is thrown, never cut.
 */
export async function inspectTail(
  fh: FileHandle,
  size: number,
  file: string,
  session: string,
): Promise<{ lastSeq: number; goodEnd: number }> {
  const tail = await scanTail(fh, size);
  if (!tail.last) return { lastSeq: 0, goodEnd: 0 };
  const { raw, offset } = tail.last;
  let record: LogRecord;
  try {
    record = validateRecord(raw, { file, session });
  } catch {
    // Same check again, now with the line number that the error must name (counted only on this path).
    record = validateRecord(raw, { file, session, line: (await countLines(fh, offset)) + 1 });
  }
  if (record.session !== session) {
    const line = (await countLines(fh, offset)) + 1;
    throw new InvalidRecordError(
      { file, line, seq: record.seq },
      `record belongs to session ${record.session}`,
    );
  }
  return { lastSeq: record.seq, goodEnd: tail.goodEnd };
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
  { fh: FileHandle; lastSeq: number; size: number; cut?: { line: number; bytes: number } } | undefined
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
    const { lastSeq, goodEnd } = await inspectTail(fh, size, file, session);
    if (goodEnd === size) return { fh, lastSeq, size };
    const line = (await countLines(fh, goodEnd)) + 1;
    await fh.truncate(goodEnd);
    await fh.datasync();
    return { fh, lastSeq, size: goodEnd, cut: { line, bytes: size - goodEnd } };
  } catch (e) {
    await fh.close();
    throw e;
  }
}

/** Creates a stream file; its directory entry is synced too, or a crash could lose the whole stream. */
export async function createStream(file: string, dir: string): Promise<FileHandle> {
  const fh = await open(file, 'a+');
  const d = await open(dir, 'r');
  try {
    await d.sync().catch(() => undefined); // not every platform can sync a directory
  } finally {
    await d.close();
  }
  return fh;
}
