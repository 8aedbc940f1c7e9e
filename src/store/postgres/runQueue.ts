import type pg from 'pg';
import { SessionLockedError } from '../errors.ts';
import { type ClaimFilter, type Job, JobBusyError, type RunQueue, START_FAILED } from '../runQueue.ts';
import type { ChannelListener, Subscription } from './listener.ts';
import { JOBS_CHANNEL } from './schema.ts';

interface JobRow {
  session: string;
  state: Job['state'];
  spec: unknown;
  prompt: string | null;
  after_seq: number;
  worker: string | null;
  lease_until: Date | null;
  attempts: number;
}

function jobOf(r: JobRow): Job {
  return {
    session: r.session,
    state: r.state,
    spec: r.spec,
    prompt: r.prompt,
    afterSeq: r.after_seq,
    worker: r.worker,
    leaseExpires: r.lease_until ? r.lease_until.getTime() : null,
    attempts: r.attempts,
  };
}

const JOB_COLUMNS = 'session, state, spec, prompt, after_seq, worker, lease_until, attempts';
// Every change that makes a run claimable wakes the workers waiting on the channel; the payload's
// number only has to grow.
/** The SQL condition a filter stands for, on `reloop.jobs` rows (no parameters: only fixed text). */
function filterSql(filter: ClaimFilter | undefined): string {
  return filter?.scriptedOnly ? ` AND spec->'script' IS NOT NULL` : '';
}

const NOTIFY = `pg_notify('${JOBS_CHANNEL}', (extract(epoch FROM clock_timestamp()) * 1000000)::bigint::text || ':jobs')`;

/**
 * The run queue in `reloop.jobs`. Claims take rows with FOR UPDATE SKIP LOCKED, so workers never
 * wait on each other's claims; lease times are the database's clock, the same for every machine.
 */
export class PostgresRunQueue implements RunQueue {
  private sub: Promise<Subscription> | null = null;
  /** The notification count at the last `nextChange`: anything newer wakes the next one at once. */
  private seen = 0;

  constructor(
    private readonly pool: pg.Pool,
    private readonly listener: ChannelListener,
  ) {}

  async enqueue(session: string, spec: unknown, prompt: string | null, afterSeq: number): Promise<void> {
    const res = await this.pool.query<{ session: string }>(
      `WITH queued AS (
         INSERT INTO reloop.jobs (session, state, spec, prompt, after_seq)
         VALUES ($1, 'queued', $2, $3, $4)
         ON CONFLICT (session) DO UPDATE
           SET state = 'queued', spec = EXCLUDED.spec, prompt = EXCLUDED.prompt,
               after_seq = EXCLUDED.after_seq, worker = NULL, lease_until = NULL, attempts = 0,
               outcome = NULL, queued_at = clock_timestamp(), updated_at = clock_timestamp()
           WHERE reloop.jobs.state = 'done'
         RETURNING session)
       SELECT session, ${NOTIFY} FROM queued`,
      [session, JSON.stringify(spec), prompt, afterSeq],
    );
    if (res.rows.length === 0) throw new JobBusyError(session, (await this.get(session))?.state ?? 'queued');
  }

  async claim(worker: string, max: number, leaseMs: number, filter?: ClaimFilter): Promise<Job[]> {
    const res = await this.pool.query<JobRow>(
      `WITH c AS (
         SELECT session FROM reloop.jobs
          WHERE (state = 'queued' OR (state = 'claimed' AND lease_until < clock_timestamp()))${filterSql(filter)}
          ORDER BY queued_at, session
          LIMIT $2
          FOR UPDATE SKIP LOCKED)
       UPDATE reloop.jobs j
          SET state = 'claimed', worker = $1, attempts = j.attempts + 1, updated_at = clock_timestamp(),
              lease_until = clock_timestamp() + $3 * interval '1 millisecond', resume_after = NULL
         FROM c WHERE j.session = c.session
       RETURNING ${JOB_COLUMNS.split(', ')
         .map((c) => `j.${c}`)
         .join(', ')}`,
      [worker, max, leaseMs],
    );
    return res.rows.map(jobOf);
  }

  async renew(worker: string, sessions: readonly string[], leaseMs: number): Promise<string[]> {
    if (sessions.length === 0) return [];
    const res = await this.pool.query<{ session: string }>(
      `UPDATE reloop.jobs SET lease_until = clock_timestamp() + $3 * interval '1 millisecond'
        WHERE worker = $1 AND state IN ('claimed', 'held') AND session = ANY($2) RETURNING session`,
      [worker, sessions, leaseMs],
    );
    return res.rows.map((r) => r.session);
  }

  async release(
    session: string,
    worker: string,
    state: 'done' | 'parked' | 'queued',
    outcome: unknown,
    afterSeq?: number,
  ): Promise<boolean> {
    // Parked, but its approvals were answered while it was held: queued at once (resume_after).
    const answered = `($3 = 'parked' AND resume_after IS NOT NULL)`;
    const res = await this.pool.query(
      `WITH released AS (
         UPDATE reloop.jobs
            SET state = CASE WHEN ${answered} THEN 'queued' ELSE $3 END, outcome = $4, worker = NULL,
                lease_until = NULL, updated_at = clock_timestamp(),
                queued_at = CASE WHEN $3 = 'queued' OR ${answered} THEN clock_timestamp() ELSE queued_at END,
                prompt = CASE WHEN $3 = 'queued' AND $5::integer IS NULL THEN prompt ELSE NULL END,
                after_seq = CASE WHEN ${answered} THEN resume_after ELSE coalesce($5::integer, after_seq) END,
                attempts = CASE WHEN ${answered} THEN 0 ELSE attempts END,
                resume_after = NULL
          WHERE session = $1 AND worker = $2 AND state = 'claimed'
         RETURNING state)
       SELECT CASE WHEN state = 'queued' THEN ${NOTIFY} END FROM released`,
      [session, worker, state, JSON.stringify(outcome ?? null), afterSeq ?? null],
    );
    return (res.rowCount ?? 0) > 0;
  }

  async resume(session: string, afterSeq: number): Promise<boolean> {
    // Parked, or held under a lease that lapsed (its holder died): queued now. A row the hold of a
    // plain `run` made has no spec for a worker: `run --resume` resumes that session.
    const ours = `(state <> 'held' OR held_over IS NOT NULL)`;
    const res = await this.pool.query(
      `WITH requeued AS (
         UPDATE reloop.jobs
            SET state = 'queued', prompt = NULL, after_seq = $2, worker = NULL, lease_until = NULL,
                held_over = NULL, resume_after = NULL, attempts = 0, queued_at = clock_timestamp(),
                updated_at = clock_timestamp()
          WHERE session = $1 AND ${ours}
            AND (state = 'parked' OR (state IN ('claimed', 'held') AND lease_until < clock_timestamp()))
         RETURNING session)
       SELECT ${NOTIFY} FROM requeued`,
      [session, afterSeq],
    );
    if ((res.rowCount ?? 0) > 0) return true;
    // A live holder (the worker that parked the run and has not released it yet): its release queues it.
    const later = await this.pool.query(
      `UPDATE reloop.jobs SET resume_after = $2, updated_at = clock_timestamp()
        WHERE session = $1 AND ${ours} AND state IN ('claimed', 'held')`,
      [session, afterSeq],
    );
    return (later.rowCount ?? 0) > 0;
  }

  async hold(session: string, holder: string, leaseMs: number): Promise<{ created: boolean }> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const res = await this.pool.query<{ held_over: string | null }>(
        `INSERT INTO reloop.jobs (session, state, spec, prompt, after_seq, worker, lease_until)
         VALUES ($1, 'held', '{}'::jsonb, NULL, 0, $2, clock_timestamp() + $3 * interval '1 millisecond')
         ON CONFLICT (session) DO UPDATE
           SET state = 'held', worker = EXCLUDED.worker, lease_until = EXCLUDED.lease_until,
               updated_at = clock_timestamp(), resume_after = NULL,
               held_over = CASE WHEN reloop.jobs.state = 'held' THEN reloop.jobs.held_over ELSE reloop.jobs.state END
           WHERE reloop.jobs.state IN ('done', 'parked')
              OR (reloop.jobs.state IN ('claimed', 'held') AND reloop.jobs.lease_until < clock_timestamp())
         RETURNING held_over`,
        [session, holder, leaseMs],
      );
      if (res.rows[0]) return { created: res.rows[0].held_over === null };
      const job = await this.get(session);
      if (!job) continue; // removed between the two statements: try again
      if (job.state === 'queued') throw new JobBusyError(session, 'queued');
      if (job.state === 'claimed' || job.state === 'held') {
        const until = job.leaseExpires !== null ? new Date(job.leaseExpires).toISOString() : '?';
        throw new SessionLockedError(
          session,
          `${job.state === 'claimed' ? 'worker ' : ''}${job.worker ?? '?'}, its lease renewed until ${until}`,
        );
      }
    }
    throw new SessionLockedError(session, 'another process (the lease kept changing hands)');
  }

  async unhold(
    session: string,
    holder: string,
    next: 'done' | 'parked' | 'restore',
    outcome?: unknown,
  ): Promise<boolean> {
    const mine = `session = $1 AND worker = $2 AND state = 'held'`;
    const gone = await this.pool.query(`DELETE FROM reloop.jobs WHERE ${mine} AND held_over IS NULL`, [
      session,
      holder,
    ]);
    if ((gone.rowCount ?? 0) > 0) return true;
    // An approval answered while this lease was held queues the parked run at once.
    const state =
      next === 'restore'
        ? `CASE WHEN held_over IN ('claimed', 'held') THEN 'queued' ELSE held_over END`
        : `CASE WHEN $3 = 'parked' AND resume_after IS NOT NULL THEN 'queued' ELSE $3 END`;
    const res = await this.pool.query(
      `WITH released AS (
         UPDATE reloop.jobs
            SET state = ${state}, worker = NULL, lease_until = NULL, held_over = NULL,
                outcome = coalesce($4::jsonb, outcome), updated_at = clock_timestamp(),
                after_seq = CASE WHEN $3 = 'parked' AND resume_after IS NOT NULL THEN resume_after ELSE after_seq END,
                prompt = CASE WHEN $3 = 'restore' THEN prompt ELSE NULL END,
                queued_at = CASE WHEN $3 = 'parked' AND resume_after IS NOT NULL THEN clock_timestamp() ELSE queued_at END,
                resume_after = NULL
          WHERE ${mine}
         RETURNING state)
       SELECT CASE WHEN state = 'queued' THEN ${NOTIFY} END FROM released`,
      [session, holder, next, outcome === undefined ? null : JSON.stringify(outcome)],
    );
    return (res.rowCount ?? 0) > 0;
  }

  async get(session: string): Promise<Job | undefined> {
    const res = await this.pool.query<JobRow & { start_error: string | null }>(
      `SELECT ${JOB_COLUMNS},
              CASE WHEN outcome->>'reason' = '${START_FAILED}' THEN outcome->>'error' END AS start_error
         FROM reloop.jobs WHERE session = $1`,
      [session],
    );
    const r = res.rows[0];
    if (!r) return undefined;
    return { ...jobOf(r), ...(r.start_error ? { startError: r.start_error } : {}) };
  }

  async failStart(session: string, worker: string, error: string): Promise<boolean> {
    const res = await this.pool.query(
      `UPDATE reloop.jobs
          SET state = 'done', outcome = $3, worker = NULL, lease_until = NULL, updated_at = clock_timestamp()
        WHERE session = $1 AND worker = $2 AND state = 'claimed'`,
      [session, worker, JSON.stringify({ status: 'failed', reason: START_FAILED, error })],
    );
    return (res.rowCount ?? 0) > 0;
  }

  async busy(filter?: ClaimFilter): Promise<boolean> {
    const res = await this.pool.query(
      `SELECT 1 FROM reloop.jobs WHERE state IN ('queued', 'claimed')${filterSql(filter)} LIMIT 1`,
    );
    return (res.rowCount ?? 0) > 0;
  }

  async excluded(filter: ClaimFilter): Promise<number> {
    if (!filter.scriptedOnly) return 0;
    const res = await this.pool.query<{ n: number }>(
      `SELECT count(*)::integer AS n FROM reloop.jobs WHERE (state = 'queued' OR (state = 'claimed' AND lease_until < clock_timestamp()))
          AND spec->'script' IS NULL`,
    );
    return res.rows[0]?.n ?? 0;
  }

  async nextChange(ms: number, signal: AbortSignal): Promise<void> {
    // A subscription the listener lost with its connection: subscribe again (a new LISTEN).
    if (this.sub && (await this.sub.catch(() => null))?.closed !== false) this.sub = null;
    this.sub ??= this.listener.subscribe('jobs');
    const sub = await this.sub.catch((e: unknown) => {
      this.sub = null;
      throw e;
    });
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), ms);
    const onAbort = () => timeout.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      await sub.wait(this.seen, timeout.signal);
      this.seen = sub.notified;
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    }
  }
}
