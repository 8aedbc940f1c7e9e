import type { Command } from 'commander';
import { SessionNotFoundError } from '../../store/errors.ts';
import {
  CommandFailed,
  type GlobalOptions,
  intOption,
  LineWriter,
  openStore,
  timeOf,
  UsageError,
  withCommonOptions,
} from '../io.ts';

interface LogOptions extends GlobalOptions {
  from?: string;
  to?: string;
  type?: string;
}

export function registerLog(program: Command): void {
  withCommonOptions(
    program
      .command('log <session>')
      .description('print the records of a session (one JSON record per line with --json)')
      .option('--from <seq>', 'first seq (≥ 1)')
      .option('--to <seq>', 'last seq (≥ --from)')
      .option('--type <type>', 'only records of this type (e.g. transition)'),
  ).action(async (session: string, opts: LogOptions) => {
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
    const store = await openStore(opts);
    try {
      if (!(await store.exists(session))) throw new SessionNotFoundError(session);
      const last = await store.lastSeq(session);
      if (fromSeq !== undefined && fromSeq > last)
        throw new CommandFailed(
          `--from ${fromSeq} is past the end of ${session}: the log has seqs 1..${last}`,
          1,
          'SEQ_RANGE',
        );
      const w = new LineWriter();
      try {
        for await (const r of store.read(session, { fromSeq, toSeq })) {
          if (opts.type && r.type !== opts.type) continue;
          if (opts.json) w.line(JSON.stringify(r));
          else
            w.line(
              `${String(r.seq).padStart(5)}  ${timeOf(r.at)}  ${r.type.padEnd(18)} ${describeRecord(r)}`,
            );
        }
      } finally {
        // What was read before a bad line is still printed, then the error.
        w.flush();
      }
    } finally {
      await store.close();
    }
  });
}
