import type { TracerProvider } from '@opentelemetry/api';
import { messageOf } from '../lib/errors.ts';
import { hasApiKey } from '../model/credentials.ts';
import { loadRecords } from '../replay/loadSession.ts';
import { parkedCalls, treeApprovals } from '../runtime/approvals.ts';
import { Session } from '../runtime/session.ts';
import { fold } from '../store/evolve.ts';
import { DEFAULT_LINK_RETRY, type LinkRetry, linkDelay, withLinkRetry } from '../store/linkRetry.ts';
import type { ClaimFilter, Job, RunQueue } from '../store/runQueue.ts';
import { emptySessionState } from '../store/sessionState.ts';
import type { EventStore } from '../store/types.ts';
import { parseRunSpec, sessionOptionsFor } from './runSpec.ts';

/** What a worker reports, one event at a time (the CLI prints them). */
export type WorkerEvent =
  | { type: 'claimed'; session: string; attempt: number; resumed: boolean }
  | { type: 'finished'; session: string; status: string; reason: string }
  | { type: 'failed'; session: string; message: string; started: boolean }
  /** Its run failed with the run still open in the log: queued again, to be closed and resumed. */
  | { type: 'requeued'; session: string; attempt: number }
  /** No model credentials: only scripted runs are claimed (said once, at start). */
  | { type: 'no-model'; message: string }
  /** The queue could not be reached (claim, poll): tried again after `retryMs`. */
  | { type: 'store-error'; message: string; retryMs: number }
  /** Reached again after store errors. */
  | { type: 'store-ok'; failures: number }
  /** At exit: runs left queued because they need a model this worker does not have. */
  | { type: 'left'; queued: number; message: string }
  | { type: 'lost'; session: string }
  | { type: 'draining'; holding: number }
  | { type: 'stopping'; holding: number };

export interface WorkerOptions {
  store: EventStore;
  queue: RunQueue;
  id: string;
  /** Runs driven at once (default 1). */
  concurrency?: number;
  /** How long a claim holds without a heartbeat; renewed every third of it. */
  leaseMs: number;
  /** Return once nothing is queued or held anywhere (instead of waiting for work). */
  exitWhenIdle?: boolean;
  /** Aborted: claim nothing more, let the runs held finish (or park), then return. */
  drain: AbortSignal;
  /** Aborted: abort the runs held and queue them again for another worker. */
  stop?: AbortSignal;
  onEvent?: (e: WorkerEvent) => void;
  /** OpenTelemetry: every run this worker drives is traced on this provider (docs/otel.md). */
  tracerProvider?: TracerProvider;
  traceContent?: boolean;
  /**
   * Whether the worker can talk to the model (default: credentials in the environment, as
   * `reloop run` checks them). Without, it claims only scripted runs: a run it cannot start
   * stays queued for a worker that can.
   */
  modelAvailable?: boolean;
  /** Backoff after store errors (claim, poll, release); clock and random injectable for tests. */
  retry?: Partial<LinkRetry>;
}

/** Claims of one run whose run failed while open, before the worker closes it instead of queueing it again. */
const OPEN_RUN_ATTEMPTS = 3;

const NO_MODEL =
  'no model credentials (ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN or ANTHROPIC_BASE_URL): only scripted runs are claimed';

interface Held {
  job: Job;
  controller: AbortController;
  lost: boolean;
  done: Promise<void>;
}

/**
 * A worker: claims queued runs from the store's queue and drives each with the same runtime as
 * `reloop run`. Its leases are renewed by a heartbeat; a run whose lease was lost (this worker
 * stalled past it and another took over) is aborted here and left to the new holder. A claim of
 * a run whose worker died resumes it exactly as after a crash: `Session.submit` closes the
 * interrupted run honestly and does not run again a tool that had started.
 */
export async function runWorker(opts: WorkerOptions): Promise<{ runs: number; left: number }> {
  const { store, queue, id, leaseMs } = opts;
  const concurrency = Math.max(1, opts.concurrency ?? 1);
  // The model is checked before anything is claimed: a run this worker could not start is never taken.
  const filter: ClaimFilter = (opts.modelAvailable ?? hasApiKey()) ? {} : { scriptedOnly: true };
  const retry: LinkRetry = { ...DEFAULT_LINK_RETRY, maxDelayMs: 5_000, ...opts.retry };
  // Handing a run back after a link error: tried until the lease would have lapsed anyway.
  const handBack = <T>(fn: () => Promise<T>) => withLinkRetry({ ...retry, forMs: leaseMs }, fn);
  const held = new Map<string, Held>();
  const emit = opts.onEvent ?? (() => undefined);
  let runs = 0;
  let finished: () => void = () => undefined;
  let anyFinished = new Promise<void>((r) => {
    finished = r;
  });

  // The heartbeat: every third of the lease, or sooner (with backoff) after a failed renewal.
  const period = Math.max(50, Math.floor(leaseMs / 3));
  let beating = true;
  let beatFailures = 0;
  let beatTimer: ReturnType<typeof setTimeout> | undefined;
  const schedule = (ms: number) => {
    if (beating) beatTimer = setTimeout(beat, ms);
  };
  function beat(): void {
    const sessions = [...held.keys()];
    queue.renew(id, sessions, leaseMs).then(
      (kept) => {
        if (beatFailures > 0) emit({ type: 'store-ok', failures: beatFailures });
        beatFailures = 0;
        const still = new Set(kept);
        for (const s of sessions) {
          const h = held.get(s);
          if (!h || still.has(s) || h.lost) continue;
          h.lost = true;
          emit({ type: 'lost', session: s });
          h.controller.abort(new Error('lease lost: another worker holds this session'));
        }
        schedule(period);
      },
      (e: unknown) => {
        const retryMs = Math.min(period, linkDelay(retry, beatFailures++));
        emit({ type: 'store-error', message: `heartbeat: ${messageOf(e)}`, retryMs });
        schedule(retryMs);
      },
    );
  }
  schedule(period);

  const onStop = () => {
    emit({ type: 'stopping', holding: held.size });
    for (const h of held.values()) h.controller.abort(new Error('the worker is stopping'));
  };
  opts.stop?.addEventListener('abort', onStop, { once: true });
  const onDrain = () => emit({ type: 'draining', holding: held.size });
  opts.drain.addEventListener('abort', onDrain, { once: true });

  function start(job: Job): void {
    const h: Held = { job, controller: new AbortController(), lost: false, done: Promise.resolve() };
    held.set(job.session, h);
    runs++;
    h.done = drive(h)
      .catch((e: unknown) => settleFailure(h, e))
      .catch(() => undefined)
      .finally(() => {
        held.delete(job.session);
        finished();
        anyFinished = new Promise<void>((r) => {
          finished = r;
        });
      });
  }

  /**
   * A run that threw. What the job becomes depends on the log: no run started since it was
   * queued — the run could not start (the job is done with the error, the prompt kept, and
   * `sessions` shows it); the run still open — it never ends in the log, so the job must not be
   * done: queued again (the next claim closes the run as interrupted and resumes), or, after
   * OPEN_RUN_ATTEMPTS claims, closed here; the run ended — done, failed.
   * The log unreadable (the database gone): the job stays claimed and its lease lapses.
   */
  async function settleFailure(h: Held, e: unknown): Promise<void> {
    const { job } = h;
    const message = messageOf(e);
    if (h.lost) return emit({ type: 'failed', session: job.session, message, started: true });
    const records = await loadRecords(store, job.session);
    const state = fold(records, emptySessionState());
    const started = records.some((r) => r.type === 'run.started' && r.seq > job.afterSeq);
    emit({ type: 'failed', session: job.session, message, started });
    if (!started) {
      await handBack(() => queue.failStart(job.session, id, message));
      return;
    }
    if (state.currentRun) {
      if (job.attempts < OPEN_RUN_ATTEMPTS) {
        emit({ type: 'requeued', session: job.session, attempt: job.attempts });
        await handBack(() =>
          queue.release(job.session, id, 'queued', { status: 'failed', error: message }, state.lastSeq),
        );
        return;
      }
      const spec = parseRunSpec(job.session, job.spec);
      const session = await Session.open(job.session, await sessionOptionsFor(spec, { store }));
      await session.closeOpenRun();
    }
    await handBack(() => queue.release(job.session, id, 'done', { status: 'failed', error: message }));
  }

  async function drive(h: Held): Promise<void> {
    const { job } = h;
    const spec = parseRunSpec(job.session, job.spec);
    const records = await loadRecords(store, job.session);
    const state = fold(records, emptySessionState());
    // A script goes on where the log says it got to; the prompt is given once, by the first
    // run that starts after it was queued.
    const answered = records.filter((r) => r.type === 'model.responded' || r.type === 'model.failed').length;
    const delivered = records.some((r) => r.type === 'run.started' && r.seq > job.afterSeq);
    emit({ type: 'claimed', session: job.session, attempt: job.attempts, resumed: delivered });
    // The run already ended (its worker died before handing the job back): nothing to run,
    // unless it parked and every call has been answered since.
    const last = state.runs.last();
    if (delivered && !state.currentRun && last) {
      const parked = parkedCalls(state);
      // (Its sub-agents' calls count too: a tree resumes when every call in it is answered.)
      if (parked.length === 0 || (await treeApprovals(store, job.session)).pending.length > 0) {
        const outcome = { runId: last.id, status: last.status, reason: last.reason };
        emit({ type: 'finished', session: job.session, status: last.status, reason: last.reason ?? '' });
        await handBack(() => queue.release(job.session, id, parked.length > 0 ? 'parked' : 'done', outcome));
        return;
      }
    }
    const options = await sessionOptionsFor(spec, { store, scriptStartAt: answered });
    if (opts.tracerProvider) {
      options.tracerProvider = opts.tracerProvider;
      options.traceContent = opts.traceContent;
    }
    const session = await Session.open(job.session, options);
    const result = await session
      .submit(job.prompt !== null && !delivered ? job.prompt : null, { signal: h.controller.signal })
      // Its MCP servers end with the run.
      .finally(() => session.close());
    if (h.lost) return;
    // The worker is done with this session object: its SessionEnd hooks run (hooks helper's hook-in).
    await session.end('other');
    emit({ type: 'finished', session: job.session, status: result.status, reason: result.reason });
    const stopped = opts.stop?.aborted && result.status === 'aborted';
    const next = stopped ? 'queued' : result.status === 'paused' ? 'parked' : 'done';
    // Queued again after a stop: the next worker continues the session (no prompt to give).
    const outcome = { runId: result.runId, status: result.status, reason: result.reason };
    await handBack(() =>
      queue.release(job.session, id, next, outcome, stopped ? session.state.lastSeq : undefined),
    );
  }

  const pollMs = Math.min(1000, Math.max(50, Math.floor(leaseMs / 2)));
  const told = Promise.race(
    [opts.drain, opts.stop].flatMap((s) =>
      s ? [new Promise<void>((r) => s.addEventListener('abort', () => r(), { once: true }))] : [],
    ),
  );
  if (filter.scriptedOnly) emit({ type: 'no-model', message: NO_MODEL });
  // Store errors of the loop (the database out of reach): the loop waits and tries again, the
  // process stays up, the runs it holds go on (their appends retry in the store).
  let failures = 0;
  try {
    while (!opts.drain.aborted && !opts.stop?.aborted) {
      const stopped = new AbortController();
      try {
        const free = concurrency - held.size;
        const claimed = free > 0 ? await queue.claim(id, free, leaseMs, filter) : [];
        for (const job of claimed) start(job);
        const idle = opts.exitWhenIdle && held.size === 0 && claimed.length === 0;
        if (idle && !(await queue.busy(filter))) break;
        if (failures > 0) emit({ type: 'store-ok', failures });
        failures = 0;
        if (claimed.length > 0 && held.size < concurrency) continue;
        const waits: Promise<unknown>[] = [anyFinished, told];
        // Lease expiries notify nobody: a worker with room polls for them.
        if (held.size < concurrency) waits.push(queue.nextChange(pollMs, stopped.signal));
        await Promise.race(waits);
      } catch (e) {
        const retryMs = linkDelay(retry, failures++);
        emit({ type: 'store-error', message: messageOf(e), retryMs });
        await Promise.race([retry.sleep(retryMs), told]);
      } finally {
        stopped.abort();
      }
    }
    await Promise.all([...held.values()].map((h) => h.done));
  } finally {
    beating = false;
    clearTimeout(beatTimer);
    opts.stop?.removeEventListener('abort', onStop);
    opts.drain.removeEventListener('abort', onDrain);
  }
  const left = await queue.excluded(filter).catch(() => 0);
  if (left > 0)
    emit({
      type: 'left',
      queued: left,
      message: `${left} queued run${left === 1 ? '' : 's'} need${left === 1 ? 's' : ''} a model: left queued for a worker with ANTHROPIC_API_KEY`,
    });
  return { runs, left };
}
