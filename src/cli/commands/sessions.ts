import type { Command } from 'commander';
import { timeOf } from '../format.ts';
import { type GlobalOptions, openStore, out, printJson, withCommonOptions } from '../io.ts';

export function registerSessions(program: Command): void {
  withCommonOptions(
    program.command('sessions').description('list the sessions of a store, newest first'),
  ).action(async (opts: GlobalOptions) => {
    const store = await openStore(opts);
    try {
      const rows = await store.list();
      if (opts.json) return printJson(rows);
      if (rows.length === 0) return out('no sessions');
      for (const s of rows) {
        const fork = s.forkedFrom ? `  fork of ${s.forkedFrom.session}@${s.forkedFrom.seq}` : '';
        out(
          `${s.id}  ${s.status.padEnd(11)} ${String(s.lastSeq).padStart(6)} records  ${timeOf(s.updated)}  ${s.title}${fork}`,
        );
      }
    } finally {
      await store.close();
    }
  });
}
