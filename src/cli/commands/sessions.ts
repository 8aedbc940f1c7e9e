import type { Command } from 'commander';
import type { SessionInfo } from '../../store/types.ts';
import {
  type GlobalOptions,
  LineWriter,
  openStore,
  out,
  printJson,
  selfCommand,
  timeOf,
  withCommonOptions,
} from '../io.ts';

export function registerSessions(program: Command): void {
  withCommonOptions(
    program
      .command('sessions')
      .description(
        'list the sessions of a store, newest first, each sub-agent under the session that started it',
      ),
  ).action(async (opts: GlobalOptions) => {
    const store = await openStore(opts);
    try {
      const rows = await store.list();
      if (opts.json) return printJson(rows);
      if (rows.length === 0) return out('no sessions');
      const w = new LineWriter();
      for (const { row, depth } of asTree(rows)) {
        const fork = row.forkedFrom ? `  fork of ${row.forkedFrom.session}@${row.forkedFrom.seq}` : '';
        const agent = row.parent ? `[${row.parent.agent}] ` : '';
        const indent = depth > 0 ? `${'  '.repeat(depth - 1)}└ ` : '';
        const job =
          row.job?.state === 'claimed' || row.job?.state === 'held'
            ? `  [held by ${row.job.worker}]`
            : row.job?.state === 'queued'
              ? '  [queued]'
              : row.job?.state === 'parked'
                ? `  [parked: ${selfCommand()} approvals]`
                : row.job?.startError
                  ? `  [failed to start: ${row.job.startError}]`
                  : '';
        const records = row.lastSeq === 1 ? 'record ' : 'records';
        w.line(
          `${indent}${row.id}  ${row.status.padEnd(11)} ${String(row.lastSeq).padStart(6)} ${records}  ${timeOf(row.updated)}  ${agent}${row.title}${fork}${job}`,
        );
      }
      w.flush();
    } finally {
      await store.close();
    }
  });
}

/**
 * The rows in list order, each child right under its parent (children in the order they were
 * created). A child whose parent is not in the store is shown as a root.
 */
export function asTree(rows: readonly SessionInfo[]): { row: SessionInfo; depth: number }[] {
  const ids = new Set(rows.map((r) => r.id));
  const children = new Map<string, SessionInfo[]>();
  for (const r of rows) {
    if (!r.parent || !ids.has(r.parent.session)) continue;
    const list = children.get(r.parent.session) ?? [];
    list.push(r);
    children.set(r.parent.session, list);
  }
  const out: { row: SessionInfo; depth: number }[] = [];
  const visit = (row: SessionInfo, depth: number) => {
    out.push({ row, depth });
    const kids = (children.get(row.id) ?? []).sort((a, b) => a.created - b.created);
    for (const k of kids) visit(k, depth + 1);
  };
  for (const r of rows) if (!r.parent || !ids.has(r.parent.session)) visit(r, 0);
  return out;
}
