import { Low } from 'lowdb';
import { z } from 'zod';
import { updateCatalogRow } from './catalogRow.ts';
import { readRecords, type WarningHandler } from './fileStream.ts';
import { PrivateJsonFile } from './privateFiles.ts';
import { RunStatusSchema } from './records.ts';
import type { SessionInfo } from './types.ts';

/**
 * `<store>/catalog.json`, through lowdb. The catalog is a cache of what the streams say: each row keeps
 * the stamp of the stream it was folded from (size, mtime, inode), so a stream that changed behind our
 * back is noticed with one stat: one that only grew (another process, a crash before the catalog was
 * flushed) is folded on from the row's offset; one replaced, cut or rewritten in place — even to the
 * same size — is refolded from the start. Several processes may rewrite this file; the last one wins
 * and the others' rows get repaired later.
 */
const EntrySchema = z.object({
  id: z.string(),
  title: z.string(),
  created: z.number(),
  updated: z.number(),
  status: z.union([RunStatusSchema, z.enum(['running', 'interrupted', 'idle'])]),
  lastSeq: z.number().int().nonnegative(),
  forkedFrom: z.object({ session: z.string(), seq: z.number().int() }).nullable(),
  // Rows written before sub-agents existed have no `parent`: they are no one's child.
  parent: z
    .object({ session: z.string(), toolUseId: z.string().nullable(), agent: z.string() })
    .nullable()
    .default(null),
  bytes: z.number().int().nonnegative(),
  mtimeMs: z.number(),
  ino: z.number(),
});
export type CatalogEntry = z.infer<typeof EntrySchema>;

/** What says whether a stream changed: its size, modification time and inode. */
export interface StreamStamp {
  size: number;
  mtimeMs: number;
  ino: number;
}

interface CatalogFile {
  version: 1;
  sessions: Record<string, CatalogEntry>;
}

export class Catalog {
  private timer: NodeJS.Timeout | undefined;
  private dirty = false;
  private inflight: Promise<void> = Promise.resolve();
  /** How many times the file was rewritten: lets tests and benchmarks check the coalescing. */
  writes = 0;

  private constructor(
    private readonly db: Low<CatalogFile>,
    private readonly warn: WarningHandler,
    private readonly flushDelayMs: number,
  ) {}

  static async open(path: string, warn: WarningHandler, flushDelayMs: number): Promise<Catalog> {
    const db = new Low<CatalogFile>(new PrivateJsonFile<CatalogFile>(path), { version: 1, sessions: {} });
    let raw: unknown;
    try {
      await db.read();
      raw = db.data;
    } catch (e) {
      warn({
        code: 'catalog_unreadable',
        file: path,
        message: `${path}: ${(e as Error).message}; rebuilding`,
      });
    }
    const sessions: Record<string, CatalogEntry> = {};
    const rows = (raw as { sessions?: unknown } | undefined)?.sessions;
    if (typeof rows === 'object' && rows !== null) {
      for (const [id, row] of Object.entries(rows)) {
        const parsed = EntrySchema.safeParse(row);
        // A row we cannot read is simply refolded from its stream on the next list().
        if (parsed.success && parsed.data.id === id) sessions[id] = parsed.data;
      }
    }
    db.data = { version: 1, sessions };
    return new Catalog(db, warn, flushDelayMs);
  }

  get(id: string): CatalogEntry | undefined {
    return this.db.data.sessions[id];
  }

  row(id: string): SessionInfo | undefined {
    const entry = this.get(id);
    return entry ? rowOf(entry) : undefined;
  }

  ids(): string[] {
    return Object.keys(this.db.data.sessions);
  }

  set(row: SessionInfo, stamp: StreamStamp): void {
    this.db.data.sessions[row.id] = { ...row, bytes: stamp.size, mtimeMs: stamp.mtimeMs, ino: stamp.ino };
    this.touch();
  }

  delete(id: string): void {
    if (!(id in this.db.data.sessions)) return;
    delete this.db.data.sessions[id];
    this.touch();
  }

  /**
   * Appends only mark the catalog dirty; one delayed write covers every append in the meantime, so
   * lowdb's whole-file rewrite never sits on the append path. Losing it in a crash costs a refold.
   */
  private touch(): void {
    this.dirty = true;
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.flushDelayMs);
    this.timer.unref();
  }

  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.dirty) return this.inflight;
    this.dirty = false;
    this.writes++;
    // lowdb serialises synchronously inside write(), so later changes wait for the next flush.
    const write = this.db.write().catch((e: unknown) => {
      this.dirty = true;
      this.warn({ code: 'catalog_write_failed', message: `catalog not saved: ${(e as Error).message}` });
    });
    this.inflight = this.inflight.then(() => write);
    return this.inflight;
  }

  /**
   * The row of a session whose stream has this stamp: the cached row when the stamp is the one it was
   * folded from; else folded on from the row's offset when the stream only grew (same inode, later
   * mtime, more bytes), else refolded from the start.
   */
  async fresh(session: string, file: string, stamp: StreamStamp): Promise<SessionInfo | undefined> {
    const entry = this.get(session);
    if (stamp.size === 0) return undefined; // no record yet (a writer that has not written)
    if (entry && entry.bytes === stamp.size && entry.mtimeMs === stamp.mtimeMs && entry.ino === stamp.ino) {
      return rowOf(entry);
    }
    const grew = entry && entry.ino === stamp.ino && entry.bytes > 0 && entry.bytes < stamp.size;
    const resume = grew ? entry : undefined;
    // The offset a row was folded to may not be a line boundary any more (a file rewritten in place):
    // then fold from the start.
    let error: unknown;
    for (const from of resume ? [resume, undefined] : [undefined]) {
      try {
        return await this.fold(session, file, from, stamp);
      } catch (e) {
        error = e;
      }
    }
    this.warn({
      code: 'catalog_row_unreadable',
      session,
      file,
      message: `catalog row of ${session} not rebuilt: ${(error as Error).message}`,
    });
    return entry ? rowOf(entry) : undefined;
  }

  private async fold(
    session: string,
    file: string,
    from: CatalogEntry | undefined,
    stamp: StreamStamp,
  ): Promise<SessionInfo | undefined> {
    let row = from ? rowOf(from) : undefined;
    let bytes = from?.bytes ?? 0;
    const records = readRecords({
      session,
      file,
      start: bytes,
      firstLine: (from?.lastSeq ?? 0) + 1,
      end: stamp.size,
      onTornTail: () => undefined, // read() and the writer report torn tails; the catalog just stops there
    });
    for await (const batch of records) {
      row = updateCatalogRow(row, batch.records);
      bytes = batch.end;
    }
    // A row folded short of a torn tail keeps the stamp of what it read, so it is refolded once
    // the writer has cut or completed the tail.
    if (row) this.set(row, bytes === stamp.size ? stamp : { size: bytes, mtimeMs: -1, ino: stamp.ino });
    return row;
  }
}

function rowOf(entry: CatalogEntry): SessionInfo {
  const { bytes: _bytes, mtimeMs: _mtimeMs, ino: _ino, ...row } = entry;
  return row;
}
