import type { Command } from 'commander';
import type { LogRecord } from '../../store/records.ts';
import type { EventStore } from '../../store/types.ts';
import { describeRecord, timeOf } from '../format.ts';
import {
  CommandFailed,
  type GlobalOptions,
  intOption,
  openStore,
  out,
  UsageError,
  withCommonOptions,
} from '../io.ts';

type LogOptions = GlobalOptions & { from?: string; to?: string; type?: string; follow?: boolean };

export function registerLog(program: Command): void {
  withCommonOptions(
    program
      .command('log <session>')
      .description('print the records of a session (one JSON record per line with --json)')
      .option('--from <seq>', 'first seq')
      .option('--to <seq>', 'last seq')
      .option('--type <type>', 'only records of this type (e.g. transition)')
      .option('--follow', 'keep printing records as they land; exit when the run in progress ends'),
  ).action(async (session: string, opts: LogOptions) => {
    if (opts.follow && opts.to !== undefined) throw new UsageError('--follow cannot be combined with --to');
    const store: EventStore = await openStore(opts);
    const print = (r: LogRecord) => {
      if (opts.type && r.type !== opts.type) return;
      if (opts.json) out(JSON.stringify(r));
      else out(`${String(r.seq).padStart(5)}  ${timeOf(r.at)}  ${r.type.padEnd(18)} ${describeRecord(r)}`);
    };
    try {
      const range = { fromSeq: intOption('--from', opts.from), toSeq: intOption('--to', opts.to) };
      if (!opts.follow) {
        for await (const r of store.read(session, range)) print(r);
        return;
      }
      // What is there first (the run in progress is the last run.started with no run.ended after it).
      let last = 0;
      let open = false;
      for await (const r of store.read(session)) {
        if (r.seq >= (range.fromSeq ?? 1)) print(r);
        last = r.seq;
        if (r.type === 'run.started') open = true;
        else if (r.type === 'run.ended') open = false;
      }
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
        for await (const r of store.follow(session, { afterSeq: last, signal: stop.signal })) {
          if (r.seq >= (range.fromSeq ?? 1)) print(r);
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
