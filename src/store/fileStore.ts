import { fstatSync, statSync, writeSync } from 'node:fs';
import { type FileHandle, mkdir, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Catalog, type StreamStamp } from './catalog.ts';
import { updateCatalogRow } from './catalogRow.ts';
import { catalogSorted } from './catalogSort.ts';
import { ConcurrencyError, InvalidRecordError, SessionNotFoundError } from './errors.ts';
import { followStreamFile } from './fileFollow.ts';
import {
  type ReadRecordsOptions,
  readRecords,
  readRecordsSync,
  type StoreWarning,
  type WarningHandler,
} from './fileStream.ts';
import { PRIVATE_DIR } from './privateFiles.ts';
import type { LogRecord } from './records.ts';
import { sealRecords } from './seal.ts';
import { acquireSessionLock, lockHolder, type SessionLock } from './sessionLock.ts';
import { removeDeadTempFiles, writeWholeStream } from './streamCreate.ts';
import { createStream, openStreamForWriting, peekLastSeq } from './streamTail.ts';
import type { AppendOptions, EventStore, ReadRange, SessionInfo } from './types.ts';
import { checkContiguous, validateRecord } from './validate.ts';

export type { StoreWarning, WarningHandler } from './fileStream.ts';
export { type FdatasyncLatency, fdatasyncLatency } from './fsyncProbe.ts';

export interface FileStoreOptions {
  /** Torn tails cut, catalog repairs… Defaults to process.emitWarning so the CLI decides what to show. */
  onWarning?: WarningHandler;
  /** Delay before the catalog is rewritten after an append; appends in between share one write. */
  catalogFlushMs?: number;
}

/** What a writer keeps in memory so that an append never looks at what is already on disk. */
interface Writer {
  /** Opened (and the file created) by the first write, so a refused first append leaves no file. */
  fh: FileHandle | undefined;
  lock: SessionLock;
  lastSeq: number;
  /** Committed bytes: the end of the last durable line. */
  size: number;
  /** The seal of the last record (src/store/seal.ts): what the next record is chained to. */
  head: string | undefined;
  /** The file's stamp after the last commit, for the catalog row. */
  stamp: StreamStamp | undefined;
}

// Session ids become file names: no separators, no dot-names.
const SESSION_ID = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/;

function assertSessionId(session: string): void {
  if (!SESSION_ID.test(session)) {
    throw new InvalidRecordError({ session }, 'session id cannot be used as a file name');
  }
}

async function stampOf(file: string): Promise<StreamStamp | undefined> {
  try {
    const st = await stat(file);
    return { size: st.size, mtimeMs: st.mtimeMs, ino: st.ino };
  } catch (e) {
    if ((e as { code?: string }).code === 'ENOENT') return undefined;
    throw e;
  }
}

async function sizeOf(file: string): Promise<number | undefined> {
  return (await stampOf(file))?.size;
}

function sizeOfSync(file: string): number | undefined {
  return statSync(file, { throwIfNoEntry: false })?.size;
}

function stampOfFd(fd: number): StreamStamp {
  const st = fstatSync(fd);
  return { size: st.size, mtimeMs: st.mtimeMs, ino: st.ino };
}

/**
 * `<dir>/sessions`, created if missing. The last level is made without `recursive`: Node's
 * recursive mkdir loops forever on a parent that exists but refuses children with ENOENT
 * (`--store /proc` hung); a plain mkdir fails at once with the path in its message.
 */
async function ensureStoreDirs(dir: string): Promise<void> {
  // Private (docs/security.md): only directories made here; an existing store keeps its mode.
  await mkdir(dir, { recursive: true, mode: PRIVATE_DIR });
  try {
    await mkdir(join(dir, 'sessions'), { mode: PRIVATE_DIR });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
}

export async function openFileStore(dir: string, options: FileStoreOptions = {}): Promise<FileEventStore> {
  await ensureStoreDirs(dir);
  const warn: WarningHandler =
    options.onWarning ?? ((w: StoreWarning) => process.emitWarning(w.message, { code: w.code }));
  const catalog = await Catalog.open(join(dir, 'catalog.json'), warn, options.catalogFlushMs ?? 100);
  return new FileEventStore(dir, catalog, warn);
}

/**
 * The embedded store: `<dir>/sessions/<id>.jsonl`, one record per line, one `write` and one
 * `fdatasync` per append call, one writer per session across processes.
 */
export class FileEventStore implements EventStore {
  private readonly writers = new Map<string, Writer>();
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly sessionsDir: string;
  private closed = false;
  /** Aborts every follower when the store closes. */
  private readonly closing = new AbortController();

  constructor(
    readonly dir: string,
    private readonly catalog: Catalog,
    private readonly warn: WarningHandler,
  ) {
    this.sessionsDir = join(dir, 'sessions');
  }

  /** Catalog rewrites so far (appends share them). */
  get catalogWrites(): number {
    return this.catalog.writes;
  }

  async append(
    session: string,
    records: readonly LogRecord[],
    { expectedSeq, durable = true }: AppendOptions,
  ): Promise<void> {
    this.assertOpen();
    assertSessionId(session);
    return this.exclusive(session, async () => {
      if (records.length === 0) {
        const actual = this.writers.get(session)?.lastSeq ?? (await this.lastSeqOrZero(session));
        if (actual !== expectedSeq) throw new ConcurrencyError(session, expectedSeq, actual);
        return;
      }
      const w = await this.writerFor(session);
      if (w.lastSeq !== expectedSeq) throw new ConcurrencyError(session, expectedSeq, w.lastSeq);
      const valid = records.map((r) => validateRecord(r, { session }));
      checkContiguous(session, valid, expectedSeq);
      const sealed = sealRecords(w.head, valid);
      const buf = Buffer.from(`${sealed.lines.join('\n')}\n`);
      w.fh ??= await createStream(this.streamPath(session), this.sessionsDir);
      const fh = w.fh;
      try {
        // O_APPEND: the batch lands at the end in one write; the loop only matters for short writes.
        // The write only reaches the page cache (microseconds), so it is made synchronously;
        // only the fdatasync waits for the disk and goes to the thread pool: one hop per commit.
        for (let done = 0; done < buf.length; ) {
          done += writeSync(fh.fd, buf, done, buf.length - done);
        }
        if (durable) await fh.datasync();
      } catch (e) {
        // After a failed write or fdatasync the file's state is unknown: undo what we can and let the
        // next append reopen the stream, which re-derives lastSeq from what is really there.
        await fh.truncate(w.size).catch(() => undefined);
        await this.dropWriter(session);
        throw e;
      }
      w.size += buf.length;
      w.lastSeq = expectedSeq + valid.length;
      w.head = sealed.head;
      // The stamp a reader in another process will stat: one fstat, no thread-pool hop.
      w.stamp = { ...stampOfFd(fh.fd), size: w.size };
      this.catalog.set(updateCatalogRow(this.catalog.row(session), valid), w.stamp);
    });
  }

  /**
   * Writes a whole new stream at once (a fork): to a temporary file, made durable, then linked into
   * place. A process killed on the way leaves no stream (and no lock: none is taken, the stream does
   * not exist until it is complete); its temporary file is removed by a later `list()`. The stream
   * must not exist yet (ConcurrencyError).
   */
  async create(session: string, records: AsyncIterable<LogRecord> | Iterable<LogRecord>): Promise<void> {
    this.assertOpen();
    assertSessionId(session);
    return this.exclusive(session, async () => {
      const file = this.streamPath(session);
      const existing = this.writers.get(session)?.lastSeq ?? (await this.lastSeqOrZero(session));
      if (existing !== 0) throw new ConcurrencyError(session, 0, existing);
      const written = await writeWholeStream(this.sessionsDir, file, session, records);
      if (written === 'exists') throw new ConcurrencyError(session, 0, await this.lastSeqOrZero(session));
      if (written.row) this.catalog.set(written.row, written.stamp);
    });
  }

  /**
   * Replaces a whole stream at once (an import again, a copy that completes a prefix): written to a
   * temporary file, made durable, renamed over the old one under the session's writer lock, so
   * readers see the old stream or the new one and a process killed on the way changes nothing.
   * `expectedSeq` is the old stream's last seq (ConcurrencyError otherwise).
   */
  async replace(
    session: string,
    records: AsyncIterable<LogRecord> | Iterable<LogRecord>,
    expectedSeq: number,
  ): Promise<void> {
    this.assertOpen();
    assertSessionId(session);
    return this.exclusive(session, async () => {
      const w = await this.writerFor(session);
      try {
        if (w.lastSeq !== expectedSeq) throw new ConcurrencyError(session, expectedSeq, w.lastSeq);
        const file = this.streamPath(session);
        const written = await writeWholeStream(this.sessionsDir, file, session, records, { replace: true });
        if (written !== 'exists' && written.row) this.catalog.set(written.row, written.stamp);
      } finally {
        // The writer's handle is on the old inode: the next append reopens the new stream.
        await this.dropWriter(session);
      }
    });
  }

  async *read(session: string, range: ReadRange = {}): AsyncIterable<LogRecord> {
    this.assertOpen();
    const file = this.streamPath(session);
    if (!SESSION_ID.test(session) || !(await sizeOf(file))) throw new SessionNotFoundError(session);
    const options = this.readOptions(session, file, range);
    if (!options) return;
    for await (const batch of readRecords(options)) yield* batch.records;
  }

  /** See EventStore.readSync: the same records, checks and errors as `read`. */
  *readSync(session: string, range: ReadRange = {}): Iterable<LogRecord> {
    this.assertOpen();
    const file = this.streamPath(session);
    if (!SESSION_ID.test(session) || !sizeOfSync(file)) throw new SessionNotFoundError(session);
    const options = this.readOptions(session, file, range);
    if (options) yield* readRecordsSync(options);
  }

  /** How to read a stream over `range` (null: the range is empty). */
  private readOptions(session: string, file: string, range: ReadRange): ReadRecordsOptions | null {
    const fromSeq = Math.max(1, range.fromSeq ?? 1);
    const toSeq = range.toSeq ?? Number.POSITIVE_INFINITY;
    if (fromSeq > toSeq) return null;
    return {
      session,
      file,
      end: this.writers.get(session)?.size,
      fromSeq,
      toSeq,
      onTornTail: (t) =>
        this.warn({
          code: 'torn_tail',
          session,
          file,
          line: t.line,
          message: `${file} line ${t.line}: torn last line (${t.detail}); ignored — a crash mid-write, or a write in progress`,
        }),
    };
  }

  /** See EventStore.follow: the stream file is watched (fs.watch on its directory), never polled. */
  follow(session: string, options: { afterSeq: number; signal: AbortSignal }): AsyncIterable<LogRecord> {
    this.assertOpen();
    assertSessionId(session);
    const signal = AbortSignal.any([options.signal, this.closing.signal]);
    return followStreamFile(this.streamPath(session), session, options.afterSeq, signal);
  }

  async list(): Promise<SessionInfo[]> {
    this.assertOpen();
    const names = await readdir(this.sessionsDir);
    const ids = names
      .filter((f) => f.endsWith('.jsonl'))
      .map((f) => f.slice(0, -'.jsonl'.length))
      .filter((id) => SESSION_ID.test(id));
    const present = new Set(ids);
    for (const id of this.catalog.ids()) if (!present.has(id)) this.catalog.delete(id);
    const rows = await Promise.all(ids.map(async (id) => this.withLiveness(await this.freshRow(id))));
    await removeDeadTempFiles(this.sessionsDir, names);
    return catalogSorted(rows.filter((r): r is SessionInfo => r !== undefined && r.lastSeq > 0));
  }

  /**
   * A row whose last run never ended is `running` while a live process holds the session's writer
   * lock, and `interrupted` once nobody does (the writer died: `run --resume` closes the run). A lock
   * held from another host cannot be checked and stays `running`.
   */
  private async withLiveness(row: SessionInfo | undefined): Promise<SessionInfo | undefined> {
    if (row?.status !== 'running' || this.writers.has(row.id)) return row;
    const { state } = await lockHolder(join(this.sessionsDir, `${row.id}.lock`));
    return state === 'live' || state === 'foreign' ? row : { ...row, status: 'interrupted' };
  }

  async lastSeq(session: string): Promise<number> {
    this.assertOpen();
    const w = this.writers.get(session);
    if (w && w.lastSeq > 0) return w.lastSeq;
    if (!(await this.exists(session))) throw new SessionNotFoundError(session);
    return this.lastSeqOrZero(session);
  }

  async exists(session: string): Promise<boolean> {
    this.assertOpen();
    if (!SESSION_ID.test(session)) return false;
    const w = this.writers.get(session);
    if (w) return w.lastSeq > 0;
    return ((await sizeOf(this.streamPath(session))) ?? 0) > 0;
  }

  /** Takes the session's writer lock now rather than at the first append (SessionLockedError if taken). */
  async openWriter(session: string): Promise<void> {
    this.assertOpen();
    assertSessionId(session);
    await this.exclusive(session, () => this.writerFor(session));
  }

  /** Gives the session's lock back (other processes may then write it) and closes its file. */
  async closeWriter(session: string): Promise<void> {
    await this.exclusive(session, () => this.dropWriter(session));
  }

  /** Deletes the session under its writer lock, so no other process is writing it meanwhile. */
  async remove(session: string): Promise<void> {
    this.assertOpen();
    assertSessionId(session);
    await this.exclusive(session, async () => {
      await this.writerFor(session);
      try {
        await rm(this.streamPath(session), { force: true });
      } finally {
        await this.dropWriter(session);
        this.catalog.delete(session);
      }
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.closing.abort();
    await Promise.all([...this.queues.values()]);
    await Promise.all([...this.writers.keys()].map((s) => this.dropWriter(s)));
    await this.catalog.flush();
  }

  private assertOpen(): void {
    if (this.closed) throw new Error(`file store ${this.dir} is closed`);
  }

  private streamPath(session: string): string {
    return join(this.sessionsDir, `${session}.jsonl`);
  }

  /** Serialises the operations on one session inside this process (the lock covers other processes). */
  private exclusive<T>(session: string, fn: () => Promise<T>): Promise<T> {
    const run = (this.queues.get(session) ?? Promise.resolve()).then(fn);
    const settled = run.catch(() => undefined);
    this.queues.set(session, settled);
    void settled.then(() => {
      if (this.queues.get(session) === settled) this.queues.delete(session);
    });
    return run;
  }

  private async writerFor(session: string): Promise<Writer> {
    const existing = this.writers.get(session);
    if (existing) return existing;
    const file = this.streamPath(session);
    const lock = await acquireSessionLock(join(this.sessionsDir, `${session}.lock`), session);
    const w: Writer = { fh: undefined, lock, lastSeq: 0, size: 0, head: undefined, stamp: undefined };
    try {
      const opened = await openStreamForWriting(file, session);
      if (opened) {
        Object.assign(w, { fh: opened.fh, lastSeq: opened.lastSeq, size: opened.size, head: opened.head });
        if (opened.cut) {
          const { line, bytes } = opened.cut;
          this.warn({
            code: 'torn_tail_cut',
            session,
            file,
            line,
            message: `${file} line ${line}: torn last write (${bytes} bytes) cut; the stream ends at seq ${opened.lastSeq}`,
          });
        }
      }
      this.writers.set(session, w);
      // The writer folds its appends onto the catalog row, so that row must match the stream first.
      await this.freshRow(session);
      return w;
    } catch (e) {
      this.writers.delete(session);
      await w.fh?.close().catch(() => undefined);
      await lock.release();
      throw e;
    }
  }

  private async dropWriter(session: string): Promise<void> {
    const w = this.writers.get(session);
    if (!w) return;
    this.writers.delete(session);
    await w.fh?.close().catch(() => undefined);
    await w.lock.release();
  }

  /** Last seq without the lock, from the tail: the cost does not depend on the stream's length. */
  private lastSeqOrZero(session: string): Promise<number> {
    const file = this.streamPath(session);
    return peekLastSeq(file, session, (line) =>
      this.warn({
        code: 'torn_tail',
        session,
        file,
        line,
        message: `${file} line ${line}: torn last line ignored (the next writer cuts it)`,
      }),
    );
  }

  private async freshRow(session: string): Promise<SessionInfo | undefined> {
    const file = this.streamPath(session);
    const w = this.writers.get(session);
    // A writer here knows its committed size; the file may be further along only by a write in flight.
    const stamp = w?.stamp ?? (await stampOf(file));
    if (!stamp) return undefined;
    return this.catalog.fresh(session, file, w ? { ...stamp, size: w.size } : stamp);
  }
}
