import type { Command } from 'commander';
import { terminalJson } from '../../lib/printable.ts';
import { SessionNotFoundError } from '../../store/errors.ts';
import type { LogRecord } from '../../store/records.ts';
import type { EventStore } from '../../store/types.ts';
import {
  CommandFailed,
  err,
  type GlobalOptions,
  intOption,
  LineWriter,
  openStore,
  out,
  timeOf,
  UsageError,
  withCommonOptions,
} from '../io.ts';

interface LogOptions extends GlobalOptions {
  from?: string;
  to?: string;
  type?: string;
  follow?: boolean;
}

export function registerLog(program: Command): void {
  withCommonOptions(
    program
      .command('log <session>')
      .description('print the records of a session (one JSON record per line with --json)')
      .option('--from <seq>', 'first seq (≥ 1)')
      .option('--to <seq>', 'last seq (≥ --from)')
      .option('--type <type>', 'only records of this type (e.g. transition)')
      .option('--follow', 'keep printing records as they land; exit when the run in progress ends'),
  ).action(async (session: string, opts: LogOptions) => {
    if (opts.follow && opts.to !== undefined) throw new UsageError('--follow cannot be combined with --to');
    const fromSeq = intOption('--from', opts.from);
    const toSeq = intOption('--to', opts.to);
    // A range or a type that can match nothing is a mistake, not an empty answer.
    if (fromSeq === 0 || toSeq === 0) throw new UsageError('--from and --to are seqs: they start at 1');
    if (fromSeq !== undefined && toSeq !== undefined && fromSeq > toSeq)
      throw new UsageError(`--from ${fromSeq} is after --to ${toSeq}: nothing can match`);
    const [{ RECORD_TYPES }, { describeRecord }] = await Promise.all([
      import('../../store/records.ts'),
      import('../format.ts'),
    ]);
    if (opts.type !== undefined && !(RECORD_TYPES as readonly string[]).includes(opts.type))
      throw new UsageError(
        `--type ${JSON.stringify(opts.type)} is not a record type; one of: ${RECORD_TYPES.join(', ')}`,
      );
    const store: EventStore = await openStore(opts);
    const line = (r: LogRecord) =>
      opts.json
        ? terminalJson(r)
        : `${String(r.seq).padStart(5)}  ${timeOf(r.at)}  ${r.type.padEnd(18)} ${describeRecord(r)}`;
    try {
      if (!(await store.exists(session))) throw new SessionNotFoundError(session);
      const last = await store.lastSeq(session);
      // Following, a --from past the end waits for that record; otherwise it can match nothing.
      if (!opts.follow && fromSeq !== undefined && fromSeq > last)
        throw new CommandFailed(
          `--from ${fromSeq} is past the end of ${session}: the log has seqs 1..${last}`,
          1,
          'SEQ_RANGE',
        );
      // What is there first, in blocks (the run in progress is the last run.started with no run.ended after it).
      const w = new LineWriter();
      let seen = 0;
      let sawTodos = false;
      let open = false;
      let lastEnded = 0;
      try {
        for await (const r of store.read(session, opts.follow ? {} : { fromSeq, toSeq })) {
          seen = r.seq;
          if (r.type === 'run.started') open = true;
          else if (r.type === 'run.ended') {
            open = false;
            lastEnded = r.seq;
          }
          if (r.seq < (fromSeq ?? 1) || (opts.type && r.type !== opts.type)) continue;
          if (r.type === 'tool.finished' && r.data.name === 'TodoWrite') sawTodos = true;
          w.line(line(r));
        }
      } finally {
        // What was read before a bad line is still printed, then the error.
        w.flush();
      }
      // The todo list is session state: the fold of the whole log up to the last record shown.
      if (sawTodos && !opts.json) await printTodos(store, session, toSeq);
      await printStartFailure(store, session, opts.json === true);
      if (!opts.follow) return;
      // A run queued for a worker (`reloop submit`, an approved parked run) is the run to follow
      // too: it has not started yet, or not ended since it was queued.
      if (!open) open = await queuedRunPending(store, session, lastEnded);
      if (!open) return;
      if (!store.follow) throw new CommandFailed('this store cannot follow a session (no EventStore.follow)');
      // Interrupted, it stops following and exits as a shell expects of a signal (128 + signal number).
      const stop = new AbortController();
      const interrupt = (signal: NodeJS.Signals) => {
        process.exitCode = signal === 'SIGINT' ? 130 : 143;
        stop.abort();
      };
      process.once('SIGINT', interrupt);
      process.once('SIGTERM', interrupt);
      try {
        // Live: one write a record, as it lands.
        for await (const r of store.follow(session, { afterSeq: seen, signal: stop.signal })) {
          if (r.seq >= (fromSeq ?? 1) && !(opts.type && r.type !== opts.type)) out(line(r));
          if (r.type === 'run.ended') return;
        }
      } finally {
        process.off('SIGINT', interrupt);
        process.off('SIGTERM', interrupt);
      }
    } finally {
      await store.close();
    }
  });
}

async function printTodos(store: EventStore, session: string, toSeq: number | undefined): Promise<void> {
  const [{ evolve }, { emptySessionState }, { todoLines }] = await Promise.all([
    import('../../store/evolve.ts'),
    import('../../store/sessionState.ts'),
    import('../../lib/todos.ts'),
  ]);
  let state = emptySessionState();
  for await (const r of store.read(session, { toSeq })) state = evolve(state, r);
  if (!state.todos) return;
  out(`todos (TodoWrite at seq ${state.todos.seq}):`);
  for (const l of todoLines(state.todos.items)) out(`  ${l}`);
}

/**
 * A queued run that could not start leaves no record (nothing ran): the queue row says why, and
 * holds the prompt that was never given. Printed after the records (on stderr under --json).
 */
async function printStartFailure(store: EventStore, session: string, json: boolean): Promise<void> {
  const { runQueueOf } = await import('../../store/runQueue.ts');
  const job = await runQueueOf(store)?.get(session);
  if (job?.state !== 'done' || !job.startError) return;
  const line = `the queued run could not start: ${job.startError}${job.prompt !== null ? `; its prompt was never given: ${JSON.stringify(job.prompt)}` : ''}`;
  if (json) err(line);
  else out(line);
}

/** Whether the session has a run queued or held by a worker that has not ended in the log yet. */
async function queuedRunPending(store: EventStore, session: string, lastEnded: number): Promise<boolean> {
  const { runQueueOf } = await import('../../store/runQueue.ts');
  const job = await runQueueOf(store)?.get(session);
  return (
    job !== undefined && (job.state === 'queued' || job.state === 'claimed') && lastEnded <= job.afterSeq
  );
}
