import { type FSWatcher, watch } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { InvalidRecordError } from './errors.ts';
import type { LogRecord } from './records.ts';
import { validateRecord } from './validate.ts';
import { Wakeup } from './wakeup.ts';

const NL = 0x0a;
const CHUNK = 256 * 1024;
/**
 * Bytes of lines one read hands out at most: a follower whose consumer waits (a client that stopped
 * reading) holds one such batch, not the whole log (issue 18). The next read goes on from there.
 */
const BATCH_BYTES = CHUNK;
/** Every stored line starts with its envelope's first two keys: skipping old lines needs no JSON.parse. */
const SEQ_PREFIX = /^\{"v":\d+,"seq":(\d+),/;

/**
 * Reads a growing stream file from where it last stopped: only complete lines (ending in a
 * newline) count; a line still being written is left for the next read. Records at or below
 * the last seq handed out are skipped, so a file that shrank (a torn tail cut by the next
 * writer) or was replaced is simply read again from the start without repeating anything.
 */
class StreamTail {
  private offset = 0;
  private line = 0;
  /** A bad line met after good ones: thrown on the next read, once the good ones are out. */
  private failed: unknown;

  constructor(
    private readonly file: string,
    private readonly session: string,
    private lastSeq: number,
  ) {}

  async readNew(): Promise<LogRecord[]> {
    if (this.failed) throw this.failed;
    let fh: FileHandle;
    try {
      fh = await open(this.file, 'r');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw e;
    }
    try {
      const size = (await fh.stat()).size;
      if (size < this.offset) {
        this.offset = 0;
        this.line = 0;
      }
      const out: LogRecord[] = [];
      let batch = 0;
      // The pieces of a line longer than a chunk, joined once at its newline: a long line costs
      // time linear in its length (joining on every chunk made it quadratic).
      const pieces: Buffer[] = [];
      let pos = this.offset;
      const buf = Buffer.allocUnsafe(CHUNK);
      while (pos < size) {
        const { bytesRead } = await fh.read(buf, 0, Math.min(CHUNK, size - pos), pos);
        if (bytesRead === 0) break;
        const data = buf.subarray(0, bytesRead);
        let from = 0;
        for (let nl = data.indexOf(NL); nl !== -1; nl = data.indexOf(NL, from)) {
          let text: string;
          if (pieces.length > 0) {
            pieces.push(data.subarray(from, nl));
            text = Buffer.concat(pieces).toString('utf8');
            pieces.length = 0;
          } else {
            text = data.toString('utf8', from, nl);
          }
          try {
            if (!this.take(text, out, pos + nl + 1 < size)) return out;
          } catch (e) {
            if (out.length === 0) throw e;
            this.failed = e;
            return out;
          }
          from = nl + 1;
          this.offset = pos + from;
          this.line++;
          batch += text.length;
          if (batch >= BATCH_BYTES && out.length > 0) return out;
        }
        // Copied: the read buffer is reused for the next chunk.
        if (from < bytesRead) pieces.push(Buffer.from(data.subarray(from)));
        pos += bytesRead;
      }
      return out;
    } finally {
      await fh.close();
    }
  }

  /** Handles one complete line; false when it cannot be read yet (a torn tail the next writer will cut). */
  private take(text: string, out: LogRecord[], more: boolean): boolean {
    const quick = SEQ_PREFIX.exec(text);
    if (quick && Number(quick[1]) <= this.lastSeq) return true;
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      // Garbage at the very end is a crash's torn write: wait for it to be cut. Garbage with
      // complete lines after it is a corrupt log.
      if (!more) return false;
      throw new InvalidRecordError(
        { file: this.file, session: this.session, line: this.line + 1 },
        'not valid JSON',
      );
    }
    const seq = (raw as { seq?: unknown } | null)?.seq;
    if (typeof seq === 'number' && seq <= this.lastSeq) return true;
    const record = validateRecord(raw, { file: this.file, session: this.session, line: this.line + 1 });
    this.lastSeq = record.seq;
    out.push(record);
    return true;
  }
}

/**
 * Follows a file store stream: reads what is there, then waits for the directory watcher to
 * say the file changed and reads again. The directory is watched, not the file: that also sees
 * the file appear, and a file replaced by a rename. Waking is level-triggered (see Wakeup), so
 * a change during a read is never lost; there is no polling.
 */
export async function* followStreamFile(
  file: string,
  session: string,
  afterSeq: number,
  signal: AbortSignal,
): AsyncGenerator<LogRecord> {
  const wake = new Wakeup();
  const name = basename(file);
  let failure: Error | undefined;
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(dirname(file), { persistent: true }, (_event, changed) => {
      if (changed === null || changed === name) wake.poke();
    });
    watcher.on('error', (e) => {
      failure = e;
      wake.poke();
    });
    const tail = new StreamTail(file, session, afterSeq);
    while (!signal.aborted) {
      const records = await tail.readNew();
      for (const r of records) {
        if (signal.aborted) return;
        yield r;
      }
      if (failure) throw failure;
      if (records.length === 0) await wake.wait(signal);
    }
  } finally {
    watcher?.close();
  }
}
