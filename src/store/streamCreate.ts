import { randomBytes } from 'node:crypto';
import { writeSync } from 'node:fs';
import { link, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { StreamStamp } from './catalog.ts';
import { updateCatalogRow } from './catalogRow.ts';
import { PRIVATE_FILE } from './privateFiles.ts';
import type { LogRecord } from './records.ts';
import { sealRecords } from './seal.ts';
import type { SessionInfo } from './types.ts';
import { checkContiguous, validateRecord } from './validate.ts';

/** `.<session>.<pid>.<random>.tmp`: a stream being written whole; the pid says whether its writer lives. */
const TEMP_FILE = /^\.[A-Za-z0-9._-]+\.(\d+)\.[0-9a-f]{8}\.tmp$/;
/** `<session>.lock.<uuid>.tmp`: a lock owner being written (sessionLock.ts); it holds the owner's pid. */
const LOCK_TEMP_FILE = /\.lock\.[0-9a-f-]{36}\.tmp$/;

const FLUSH_BYTES = 1 << 20;

async function syncDir(dir: string): Promise<void> {
  const d = await open(dir, 'r');
  try {
    await d.sync().catch(() => undefined); // not every platform can sync a directory
  } finally {
    await d.close();
  }
}

/**
 * Writes `records` (validated, sealed, seqs from 1) to a temporary file in `dir`, makes it durable,
 * then links it into place as `file`: the stream appears complete or not at all. Records are read
 * as they come, so a fork of a large session never holds it whole in memory. `link` refuses to
 * replace a stream that appeared meanwhile: then nothing is written and the answer is 'exists'.
 * `replace`: the stream exists (its writer lock is held by the caller) and is renamed over,
 * so a reader sees the old stream or the new one, never a mix.
 */
export async function writeWholeStream(
  dir: string,
  file: string,
  session: string,
  records: AsyncIterable<LogRecord> | Iterable<LogRecord>,
  { replace = false }: { replace?: boolean } = {},
): Promise<{ row: SessionInfo | undefined; stamp: StreamStamp } | 'exists'> {
  const tmp = join(dir, `.${session}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const fh = await open(tmp, 'wx', PRIVATE_FILE);
  let closed = false;
  try {
    let row: SessionInfo | undefined;
    let head: string | undefined;
    let seq = 0;
    let batch: LogRecord[] = [];
    let batchBytes = 0;
    const flush = () => {
      if (batch.length === 0) return;
      checkContiguous(session, batch, seq - batch.length);
      const sealed = sealRecords(head, batch);
      head = sealed.head;
      row = updateCatalogRow(row, batch);
      const buf = Buffer.from(`${sealed.lines.join('\n')}\n`);
      for (let done = 0; done < buf.length; ) done += writeSync(fh.fd, buf, done, buf.length - done);
      batch = [];
      batchBytes = 0;
    };
    for await (const r of records) {
      const valid = validateRecord(r, { session });
      batch.push(valid);
      seq++;
      // A rough size (the data's JSON is not built twice): enough to bound the buffer.
      batchBytes += 200 + (valid.type === 'tool.finished' || valid.type === 'model.responded' ? 4096 : 0);
      if (batchBytes >= FLUSH_BYTES) flush();
    }
    flush();
    await fh.datasync();
    await fh.close();
    closed = true;
    if (replace) {
      await rename(tmp, file);
    } else {
      try {
        await link(tmp, file);
      } catch (e) {
        if ((e as { code?: string }).code !== 'EEXIST') throw e;
        await unlink(tmp).catch(() => undefined);
        return 'exists';
      }
      await unlink(tmp);
    }
    await syncDir(dir);
    const st = await stat(file);
    return { row, stamp: { size: st.size, mtimeMs: st.mtimeMs, ino: st.ino } };
  } catch (e) {
    if (!closed) await fh.close().catch(() => undefined);
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
}

function processGone(pid: number): boolean {
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (e) {
    return (e as { code?: string }).code === 'ESRCH';
  }
}

async function lockTempOwnerGone(file: string): Promise<boolean> {
  try {
    const owner = JSON.parse(await readFile(file, 'utf8')) as { pid?: unknown; host?: unknown };
    return owner.host === hostname() && typeof owner.pid === 'number' && processGone(owner.pid);
  } catch {
    return false; // being written right now, or not ours to judge
  }
}

/**
 * Removes what a process killed half-way leaves in the sessions directory: the temporary file of a
 * whole-stream write (a fork) or of a lock being taken. Only files whose process is gone.
 */
export async function removeDeadTempFiles(dir: string, names: readonly string[]): Promise<void> {
  for (const name of names) {
    const m = TEMP_FILE.exec(name);
    const gone = m
      ? processGone(Number(m[1]))
      : LOCK_TEMP_FILE.test(name) && (await lockTempOwnerGone(join(dir, name)));
    if (gone) await unlink(join(dir, name)).catch(() => undefined);
  }
}
