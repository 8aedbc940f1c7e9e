import type pg from 'pg';

/**
 * reloop's tables in PostgreSQL, created and migrated by reloop itself: schema `reloop`, one
 * migration per version, applied in order under an advisory lock (so two processes starting at
 * once never both migrate). `reloop.meta.schema_version` says which migrations a database has.
 *
 * Versions (one line each):
 *   1 — records keyed (session, seq) with the record's JSON text and a jsonb copy of its data,
 *       the session catalog, the run queue, and the group-commit function.
 *   2 — one lease per session for every process that drives it: job state `held` (a `run` /
 *       `run --resume` process outside the queue holds the session), `held_over` (the state the
 *       holder took the row over from; NULL: the row is the holder's own), `resume_after` (an
 *       approval answered while a live holder still had the row: its release queues the run).
 */
export const PG_SCHEMA_VERSION = 2;

/** Channel every append notifies, payload `<lastSeq>:<session>`. */
export const RECORDS_CHANNEL = 'reloop_records';
/** Channel the run queue notifies when a run is queued (payload: the session). */
export const JOBS_CHANNEL = 'reloop_jobs';

/** Any number that is the same in every reloop process: the advisory lock key of migrations. */
const MIGRATION_LOCK = 0x7265_6c6f; // "relo"

const MIGRATIONS: readonly string[] = [
  // v1
  `
  CREATE SCHEMA IF NOT EXISTS reloop;
  CREATE TABLE reloop.meta (key text PRIMARY KEY, value text NOT NULL);

  -- The log. "record" is the record's JSON text exactly as written: jsonb reorders keys and drops
  -- duplicates, so a log read back from jsonb would not verify byte for byte. "data" is a jsonb
  -- copy of the payload for queries.
  CREATE TABLE reloop.records (
    session text NOT NULL,
    seq integer NOT NULL CHECK (seq > 0),
    type text NOT NULL,
    run text,
    at double precision NOT NULL,
    record text NOT NULL,
    data jsonb NOT NULL,
    PRIMARY KEY (session, seq)
  );

  -- The catalog, kept in the same transaction as the records it is folded from.
  CREATE TABLE reloop.sessions (
    id text PRIMARY KEY,
    title text NOT NULL,
    created double precision NOT NULL,
    updated double precision NOT NULL,
    status text NOT NULL,
    last_seq integer NOT NULL,
    forked_from jsonb,
    parent jsonb,
    -- The seal of the session's last record (src/store/seal.ts): the next append chains to it.
    head text
  );
  CREATE INDEX sessions_updated ON reloop.sessions (updated DESC);

  -- The run queue: at most one queued or running run per session.
  CREATE TABLE reloop.jobs (
    session text PRIMARY KEY,
    state text NOT NULL CHECK (state IN ('queued', 'claimed', 'parked', 'done')),
    spec jsonb NOT NULL,
    prompt text,
    after_seq integer NOT NULL,
    worker text,
    lease_until timestamptz,
    attempts integer NOT NULL DEFAULT 0,
    outcome jsonb,
    queued_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
  );
  CREATE INDEX jobs_claimable ON reloop.jobs (queued_at) WHERE state IN ('queued', 'claimed');

  -- One group commit: appends of any sessions, each checked against the session's last seq
  -- under the catalog row's lock, in session order (two groups never wait on each other in a
  -- cycle). Returns one entry per append: -1 when written, else the session's actual last seq.
  CREATE FUNCTION reloop.append_group(grp json, durable boolean) RETURNS integer[] LANGUAGE plpgsql AS $fn$
  DECLARE
    a json;
    sess text;
    expected integer;
    cur integer;
    n integer;
    row_ json;
    results integer[] := '{}';
  BEGIN
    -- Appends nobody waits on (AppendOptions.durable = false): committed without the WAL flush.
    IF NOT durable THEN
      PERFORM set_config('synchronous_commit', 'off', true);
    END IF;
    FOR a IN SELECT value FROM json_array_elements(grp) LOOP
      sess := a->>'session';
      expected := (a->>'expectedSeq')::integer;
      n := json_array_length(a->'records');
      row_ := a->'row';
      IF expected = 0 THEN
        INSERT INTO reloop.sessions (id, title, created, updated, status, last_seq, forked_from, parent, head)
        VALUES (sess, row_->>'title', (row_->>'created')::float8, (row_->>'updated')::float8,
                row_->>'status', n, (row_->'forkedFrom')::jsonb, (row_->'parent')::jsonb, row_->>'head')
        ON CONFLICT (id) DO NOTHING;
        IF NOT FOUND THEN
          SELECT last_seq INTO cur FROM reloop.sessions WHERE id = sess FOR UPDATE;
          results := results || cur;
          CONTINUE;
        END IF;
      ELSE
        SELECT last_seq INTO cur FROM reloop.sessions WHERE id = sess FOR UPDATE;
        IF NOT FOUND OR cur <> expected THEN
          results := results || coalesce(cur, 0);
          CONTINUE;
        END IF;
        UPDATE reloop.sessions
           SET title = row_->>'title', created = (row_->>'created')::float8,
               updated = (row_->>'updated')::float8, status = row_->>'status',
               last_seq = expected + n, forked_from = (row_->'forkedFrom')::jsonb,
               parent = (row_->'parent')::jsonb, head = row_->>'head'
         WHERE id = sess;
      END IF;
      INSERT INTO reloop.records (session, seq, type, run, at, record, data)
      SELECT sess, expected + t.ord::integer, r->>'type', r->>'run', (r->>'at')::float8, r->>'text',
             coalesce((r->'data')::jsonb, ((r->>'text')::jsonb)->'data')
        FROM json_array_elements(a->'records') WITH ORDINALITY AS t(r, ord);
      PERFORM pg_notify('${RECORDS_CHANNEL}', (expected + n)::text || ':' || sess);
      results := results || -1;
    END LOOP;
    RETURN results;
  END
  $fn$;
  `,
  // v2
  `
  ALTER TABLE reloop.jobs DROP CONSTRAINT jobs_state_check;
  ALTER TABLE reloop.jobs ADD CONSTRAINT jobs_state_check
    CHECK (state IN ('queued', 'claimed', 'held', 'parked', 'done'));
  ALTER TABLE reloop.jobs ADD COLUMN held_over text;
  ALTER TABLE reloop.jobs ADD COLUMN resume_after integer;
  `,
];

export class StoreSchemaError extends Error {
  readonly code = 'STORE_SCHEMA';
  constructor(
    readonly found: number,
    readonly known: number,
  ) {
    super(
      `the PostgreSQL store has schema version ${found}, newer than this reloop knows (${known}): upgrade reloop`,
    );
    this.name = 'StoreSchemaError';
  }
}

async function versionOf(client: pg.ClientBase): Promise<number> {
  // A scan of the catalog under this statement's snapshot, not a name lookup: a lookup may answer
  // from the backend's cache, which can still say "no such table" after another process made it.
  const exists = await client.query(
    `SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = 'reloop' AND tablename = 'meta'`,
  );
  if (exists.rows.length === 0) return 0;
  const r = await client.query<{ value: string }>(
    `SELECT value FROM reloop.meta WHERE key = 'schema_version'`,
  );
  return r.rows[0] ? Number(r.rows[0].value) : 0;
}

/**
 * Brings the database to PG_SCHEMA_VERSION and returns the version it was at. Cheap when it is
 * already there (one query); a database from a newer reloop is refused rather than touched.
 */
export async function migrate(client: pg.ClientBase): Promise<{ from: number; to: number }> {
  const before = await versionOf(client);
  if (before === PG_SCHEMA_VERSION) return { from: before, to: before };
  if (before > PG_SCHEMA_VERSION) throw new StoreSchemaError(before, PG_SCHEMA_VERSION);
  // The lock is taken before the transaction starts, so the transaction sees whatever another
  // process migrated while this one waited.
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
  try {
    await client.query('BEGIN');
    try {
      const from = await versionOf(client);
      if (from > PG_SCHEMA_VERSION) throw new StoreSchemaError(from, PG_SCHEMA_VERSION);
      for (let v = from + 1; v <= PG_SCHEMA_VERSION; v++) await client.query(MIGRATIONS[v - 1]!);
      await client.query(
        `INSERT INTO reloop.meta (key, value) VALUES ('schema_version', $1)
         ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
        [String(PG_SCHEMA_VERSION)],
      );
      await client.query('COMMIT');
      return { from, to: PG_SCHEMA_VERSION };
    } catch (e) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw e;
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
  }
}
