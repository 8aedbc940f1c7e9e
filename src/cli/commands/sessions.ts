import type { Command } from 'commander';
import {
  type GlobalOptions,
  LineWriter,
  openStore,
  out,
  printJson,
  timeOf,
  withCommonOptions,
} from '../io.ts';

export function registerSessions(program: Command): void {
  withCommonOptions(
    program.command('sessions').description('list the sessions of a store, newest first'),
  ).action(async (opts: GlobalOptions) => {
    const store = await openStore(opts);
    try {
      const rows = await store.list();
      if (opts.json) return printJson(rows);
      if (rows.length === 0) return out('no sessions');
      const w = new LineWriter();
      for (const s of rows) {
        const fork = s.forkedFrom ? `  fork of ${s.forkedFrom.session}@${s.forkedFrom.seq}` : '';
        w.line(
          `${s.id}  ${s.status.padEnd(11)} ${String(s.lastSeq).padStart(6)} ${s.lastSeq === 1 ? 'record ' : 'records'}  ${timeOf(s.updated)}  ${s.title}${fork}`,
        );
      }
      w.flush();
    } finally {
      await store.close();
    }
  });
}
