import type { Command } from 'commander';
import { describeRecord, timeOf } from '../format.ts';
import { type GlobalOptions, intOption, openStore, out, withCommonOptions } from '../io.ts';

export function registerLog(program: Command): void {
  withCommonOptions(
    program
      .command('log <session>')
      .description('print the records of a session (one JSON record per line with --json)')
      .option('--from <seq>', 'first seq')
      .option('--to <seq>', 'last seq')
      .option('--type <type>', 'only records of this type (e.g. transition)'),
  ).action(async (session: string, opts: GlobalOptions & { from?: string; to?: string; type?: string }) => {
    const store = await openStore(opts);
    try {
      const range = { fromSeq: intOption('--from', opts.from), toSeq: intOption('--to', opts.to) };
      for await (const r of store.read(session, range)) {
        if (opts.type && r.type !== opts.type) continue;
        if (opts.json) out(JSON.stringify(r));
        else out(`${String(r.seq).padStart(5)}  ${timeOf(r.at)}  ${r.type.padEnd(18)} ${describeRecord(r)}`);
      }
    } finally {
      await store.close();
    }
  });
}
