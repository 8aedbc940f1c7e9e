import pg from 'pg';
import { updateCatalogRow } from '../catalogRow.ts';
import { catalogSorted } from '../catalogSort.ts';
import { ConcurrencyError, SessionNotFoundError } from '../errors.ts';
import { DEFAULT_LINK_RETRY, isLinkError, type LinkRetry, linkDelay, withLinkRetry } from '../linkRetry.ts';
import type { LogRecord } from '../records.ts';
import { redactUrl } from '../redactUrl.ts';
import { JobBusyError, START_FAILED } from '../runQueue.ts';
import { sealRecords } from '../seal.ts';
import type { AppendOptions, EventStore, ReadRange, SessionInfo, SessionJob } from '../types.ts';
import { checkContiguous, parseRecordLine, validateRecord } from '../validate.ts';
import { GroupCommitter, type PendingAppend } from './groupCommit.ts';
import { ChannelListener } from './listener.ts';
import { PostgresRunQueue } from './runQueue.ts';
import { JOBS_CHANNEL, migrate, RECORDS_CHANNEL } from './schema.ts';

export class StoreUnavailableError extends Error {
  readonly code = 'STORE_UNAVAILABLE';
  constructor(
    readonly url: string,
    readonly detail: string,
  ) {
    super(`cannot use the PostgreSQL store ${url}: ${detail}`);
    this.name = 'StoreUnavailableError';
  }
}

export interface PostgresStoreOptions {
  /** Connections in the pool (default 10). */
  maxConnections?: number;
  /** Create or migrate the schema on open (default true); `reloop store init` does it explicitly. */
  migrate?: boolean;
  /**
   * How long (and how) an append or a read lost to a link error is tried again (default: for
   * 60 s, backoff 100 ms doubling to 2 s, jittered): a database out of reach for a few seconds
   * pauses a run instead of failing it.
   */
  linkRetry?: Partial<LinkRetry>;
}

/** Reads a whole range in pages of this many records: a long log never sits in memory twice. */
const PAGE = 1000;

// jsonb refuses NUL characters and lone surrogates, which JSON.stringify writes as escapes: a
// record holding one gets a cleaned copy of its data for the jsonb column. The JSON text, which
// is what is read back, keeps them.
const JSONB_UNSAFE = /\\u(?:0000|d[89a-f])/i;
function jsonbSafe(_key: string, value: unknown): unknown {
  // Node 20 has String.prototype.toWellFormed; the TypeScript lib targeted here does not know it yet.
  return typeof value === 'string'
    ? (value.replaceAll('\0', '\ufffd') as string & { toWellFormed(): string }).toWellFormed()
    : value;
}

/** A session's catalog row and the seal of its last record (undefined: none, or a v1 record). */
interface Known {
  row: SessionInfo;
  head: string | undefined;
}

interface CatalogRowSql {
  id: string;
  title: string;
  created: number;
  updated: number;
  status: SessionInfo['status'];
  last_seq: number;
  forked_from: SessionInfo['forkedFrom'];
  parent: SessionInfo['parent'];
  job_state?: SessionJob['state'] | null;
  worker?: string | null;
  lease_until?: Date | null;
  start_error?: string | null;
}

function rowOf(r: CatalogRowSql): SessionInfo {
  const info: SessionInfo = {
    id: r.id,
    title: r.title,
    created: r.created,
    updated: r.updated,
    status: r.status,
    lastSeq: r.last_seq,
    forkedFrom: r.forked_from ?? null,
    parent: r.parent ?? null,
  };
  if (r.job_state) {
    info.job = {
      state: r.job_state,
      worker: r.worker ?? null,
      leaseExpires: r.lease_until ? r.lease_until.getTime() : null,
      ...(r.start_error ? { startError: r.start_error } : {}),
    };
  }
  return info;
}

/** Opens (and unless told otherwise creates or migrates) the store at a `postgres://` URL. */
export async function openPostgresStore(
  url: string,
  options: PostgresStoreOptions = {},
): Promise<PostgresEventStore> {
  const config: pg.PoolConfig = {
    connectionString: url,
    max: options.maxConnections ?? 10,
    // A link that goes away without a word (no reset) must still end in an error the store can
    // retry, not a query that waits forever: keep-alives, and bounds on connecting and on a query.
    keepAlive: true,
    keepAliveInitialDelayMillis: 5_000,
    connectionTimeoutMillis: 10_000,
    query_timeout: 30_000,
  };
  const pool = new pg.Pool(config);
  // An idle connection that dies (server restart) must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  try {
    if (options.migrate !== false) {
      const client = await pool.connect();
      try {
        await migrate(client);
      } finally {
        client.release();
      }
    } else {
      await pool.query('SELECT 1');
    }
  } catch (e) {
    await pool.end().catch(() => undefined);
    const err = e as { code?: string; message?: string };
    if (err.code === 'STORE_SCHEMA') throw e;
    throw new StoreUnavailableError(redactUrl(url), err.message || err.code || String(e));
  }
  return new PostgresEventStore(url, pool, config, { ...DEFAULT_LINK_RETRY, ...options.linkRetry });
}

/**
 * The PostgreSQL store: same contract as the file store, for many processes on many
 * machines. Records are keyed (session, seq); each append is checked against the session's last
 * seq under its catalog row's lock, so a stale writer gets a ConcurrencyError and never
 * interleaves; the catalog row changes in the same transaction; every append NOTIFYs, so
 * `follow` tails a session without polling. Appends from concurrent sessions share transactions
 * (GroupCommitter).
 */
export class PostgresEventStore implements EventStore {
  private readonly committer: GroupCommitter;
  private readonly listener: ChannelListener;
  private readonly jobsListener: ChannelListener;
  /** The queue of runs for workers (`reloop submit`, `reloop worker`). */
  readonly runQueue: PostgresRunQueue;
  /**
   * Catalog rows this process wrote last, by session, with the seal of the session's last
   * record: the next append folds onto the row and chains its seals to that one.
   */
  private readonly rows = new Map<string, Known>();
  private closed = false;

  constructor(
    readonly url: string,
    readonly pool: pg.Pool,
    config: pg.PoolConfig,
    private readonly linkRetry: LinkRetry = DEFAULT_LINK_RETRY,
  ) {
    this.committer = new GroupCommitter(pool);
    this.listener = new ChannelListener({ connectionString: config.connectionString }, RECORDS_CHANNEL);
    this.jobsListener = new ChannelListener({ connectionString: config.connectionString }, JOBS_CHANNEL);
    this.runQueue = new PostgresRunQueue(pool, this.jobsListener);
  }

  /** Transactions committed by this store so far (appends share them). */
  get commits(): number {
    return this.committer.commits;
  }

  async append(
    session: string,
    records: readonly LogRecord[],
    { expectedSeq, durable = true }: AppendOptions,
  ): Promise<void> {
    this.assertOpen();
    // The row this append folds onto: none for a new session, the one this process wrote last
    // when it is still current, else the database's (and a stale expectedSeq fails right here).
    const cached = this.rows.get(session);
    let known: Known | undefined;
    if (records.length === 0 || (expectedSeq > 0 && cached?.row.lastSeq !== expectedSeq)) {
      known = await this.known(session);
      const actual = known?.row.lastSeq ?? 0;
      if (actual !== expectedSeq) throw new ConcurrencyError(session, expectedSeq, actual);
      if (records.length === 0) return;
    } else if (expectedSeq > 0) known = cached;
    const valid = records.map((r) => validateRecord(r, { session }));
    checkContiguous(session, valid, expectedSeq);
    const next = updateCatalogRow(known?.row, valid);
    // Sealed as the file store seals them (src/store/seal.ts): the text stored is the line it writes.
    const sealed = sealRecords(known?.head, valid);
    const submit = () =>
      new Promise<number | Error>((settle) => {
        const pending: PendingAppend = {
          session,
          expectedSeq,
          records: valid.map((r, i) => {
            const text = sealed.lines[i]!;
            const entry: PendingAppend['records'][number] = { type: r.type, run: r.run, at: r.at, text };
            if (JSONB_UNSAFE.test(text)) entry.data = JSON.parse(JSON.stringify(r.data, jsonbSafe));
            return entry;
          }),
          row: next,
          head: sealed.head ?? null,
          durable,
          settle,
        };
        this.committer.submit(pending);
      });
    // A link error: the same append again, on a new connection, until the retry policy gives up.
    // The lost try may have committed (the link died before its answer): then the log holds
    // exactly these records, and the session's head is their seal.
    const policy = this.linkRetry;
    const deadline = policy.now() + policy.forMs;
    let result = await submit();
    for (
      let attempt = 0;
      result instanceof Error && isLinkError(result) && policy.now() < deadline;
      attempt++
    ) {
      await policy.sleep(linkDelay(policy, attempt));
      result = await submit();
      if (typeof result === 'number' && result === expectedSeq + valid.length && sealed.head !== undefined) {
        const head = await this.known(session).catch(() => undefined);
        if (head?.head === sealed.head) result = -1;
      }
    }
    if (result instanceof Error) {
      this.rows.delete(session);
      throw result;
    }
    if (result !== -1) {
      this.rows.delete(session);
      throw new ConcurrencyError(session, expectedSeq, result);
    }
    this.rows.set(session, { row: next, head: sealed.head });
  }

  /** A read: tried again after link errors, as appends are. */
  private query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    return withLinkRetry(this.linkRetry, () => this.pool.query<R>(text, values));
  }

  async *read(session: string, range: ReadRange = {}): AsyncIterable<LogRecord> {
    this.assertOpen();
    const last = await this.lastSeq(session);
    const fromSeq = Math.max(1, range.fromSeq ?? 1);
    const toSeq = Math.min(last, range.toSeq ?? last);
    yield* this.readBetween(session, fromSeq, toSeq);
  }

  async list(): Promise<SessionInfo[]> {
    this.assertOpen();
    const res = await this.query<CatalogRowSql>(
      // A run whose holder's lease lapsed is interrupted (as on the file store once its writer died).
      `SELECT s.id, s.title, s.created, s.updated, s.parent, s.last_seq, s.forked_from,
              CASE WHEN s.status = 'running' AND j.state IN ('claimed', 'held') AND j.lease_until < clock_timestamp()
                   THEN 'interrupted' ELSE s.status END AS status,
              j.state AS job_state, j.worker, j.lease_until,
              CASE WHEN j.outcome->>'reason' = '${START_FAILED}' THEN j.outcome->>'error' END AS start_error
         FROM reloop.sessions s LEFT JOIN reloop.jobs j ON j.session = s.id
        WHERE s.last_seq > 0`,
    );
    return catalogSorted(res.rows.map(rowOf));
  }

  async lastSeq(session: string): Promise<number> {
    this.assertOpen();
    const row = await this.row(session);
    if (!row || row.lastSeq === 0) throw new SessionNotFoundError(session);
    return row.lastSeq;
  }

  async exists(session: string): Promise<boolean> {
    this.assertOpen();
    return ((await this.row(session))?.lastSeq ?? 0) > 0;
  }

  async *follow(
    session: string,
    { afterSeq, signal }: { afterSeq: number; signal: AbortSignal },
  ): AsyncIterable<LogRecord> {
    this.assertOpen();
    const sub = await this.listener.subscribe(session);
    // Closing the store ends the iteration (no error), even while a read is on its way.
    const ended = () => signal.aborted || sub.closed || this.closed;
    try {
      let last = afterSeq;
      while (!ended()) {
        try {
          for await (const r of this.readBetween(session, last + 1, Number.MAX_SAFE_INTEGER)) {
            if (ended()) return;
            yield r;
            last = r.seq;
          }
        } catch (e) {
          if (this.closed) return;
          throw e;
        }
        if (ended()) break;
        await sub.wait(last, signal);
      }
      if (!signal.aborted && !this.closed && this.listener.error) throw this.listener.error;
    } finally {
      sub.close();
    }
  }

  /**
   * Deletes a session's records, catalog row and queue entry in one transaction, under the
   * catalog row's lock (an append racing it either lands before or finds no session). A session
   * a worker holds is refused.
   */
  async remove(session: string): Promise<void> {
    this.assertOpen();
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT 1 FROM reloop.sessions WHERE id = $1 FOR UPDATE', [session]);
      const held = await client.query<{ state: string }>(
        `SELECT state FROM reloop.jobs WHERE session = $1 AND state IN ('claimed', 'held') FOR UPDATE`,
        [session],
      );
      if (held.rows[0]) throw new JobBusyError(session, held.rows[0].state);
      await client.query('DELETE FROM reloop.records WHERE session = $1', [session]);
      await client.query('DELETE FROM reloop.jobs WHERE session = $1', [session]);
      await client.query('DELETE FROM reloop.sessions WHERE id = $1', [session]);
      await client.query('COMMIT');
    } catch (e) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw e;
    } finally {
      client.release();
      this.rows.delete(session);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.committer.idle();
    await this.listener.close();
    await this.jobsListener.close();
    await this.pool.end();
  }

  private assertOpen(): void {
    if (this.closed) throw new Error(`PostgreSQL store ${redactUrl(this.url)} is closed`);
  }

  private async row(session: string): Promise<SessionInfo | undefined> {
    return (await this.known(session))?.row;
  }

  private async known(session: string): Promise<Known | undefined> {
    const res = await this.query<CatalogRowSql & { head: string | null }>(
      `SELECT id, title, created, updated, status, last_seq, forked_from, parent, head
         FROM reloop.sessions WHERE id = $1`,
      [session],
    );
    const r = res.rows[0];
    return r ? { row: rowOf(r), head: r.head ?? undefined } : undefined;
  }

  private async *readBetween(session: string, fromSeq: number, toSeq: number): AsyncIterable<LogRecord> {
    let next = fromSeq;
    while (next <= toSeq) {
      const res = await this.query<{ seq: number; record: string }>(
        `SELECT seq, record FROM reloop.records
          WHERE session = $1 AND seq >= $2 AND seq <= $3 ORDER BY seq LIMIT ${PAGE}`,
        [session, next, Math.min(toSeq, 2_147_483_647)],
      );
      for (const r of res.rows) yield parseRecordLine(r.record, { session });
      if (res.rows.length < PAGE) return;
      next = res.rows[res.rows.length - 1]!.seq + 1;
    }
  }
}
