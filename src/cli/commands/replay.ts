import type { Command } from 'commander';
import type { TreeVerifyReport } from '../../replay/verifyTree.ts';
import { SessionNotFoundError } from '../../store/errors.ts';
import {
  CommandFailed,
  type GlobalOptions,
  intOption,
  openStore,
  out,
  plural,
  printJson,
  UsageError,
  withCommonOptions,
} from '../io.ts';
import { withRunFlags } from '../runFlags.ts';
import type { RunOptions } from './run.ts';

type ReplayOptions = GlobalOptions & {
  verify?: boolean;
  tree?: boolean;
  to?: string;
  rerun?: boolean;
  all?: boolean;
};

export function registerReplay(program: Command): void {
  withCommonOptions(
    withRunFlags(
      program
        .command('replay [sessions...]')
        .description(
          'rebuild a session from its log; --verify re-drives the machine and compares every transition',
        )
        .option('--verify', 're-drive the statechart with the recorded facts and report the first divergence')
        .option(
          '--tree',
          "with --verify: verify every sub-agent's log too, and how each child's end reached its parent",
        )
        .option('--to <seq>', 'stop at this seq (state as of that record)')
        .option(
          '--rerun',
          "drive the chart live with the current code (tools, rules, hooks, system prompt: as `reloop run` would now, with run's flags), the model answered from the log; report the first divergence. --tools recorded|live (live tools run in a scratch copy of the session's cwd or --cwd)",
        )
        .option('--all', 'with --verify or --rerun: every session of the store, one line each and a summary'),
    ),
  ).action(async (sessions: string[], opts: ReplayOptions) => {
    if (opts.all || sessions.length > 1) return replayMany(sessions, opts);
    const session = sessions[0];
    if (session === undefined) throw new UsageError('give a session (or --all with --verify or --rerun)');
    if (opts.rerun) return rerunOne(session, opts);
    const toSeq = intOption('--to', opts.to);
    if (opts.tree && !opts.verify) throw new UsageError('--tree goes with --verify');
    const store = await openStore(opts);
    try {
      if (!(await store.exists(session))) throw new SessionNotFoundError(session);
      if (toSeq !== undefined) {
        // A seq the log does not have is an error, not silently the end (as for fork --at).
        const last = await store.lastSeq(session);
        if (toSeq < 1 || toSeq > last)
          throw new CommandFailed(
            `cannot replay ${session} to seq ${toSeq}: the log has seqs 1..${last}`,
            1,
            'SEQ_RANGE',
          );
      }
      if (opts.verify && opts.tree) {
        const { verifyTree } = await import('../../replay/verifyTree.ts');
        const tree = await verifyTree(store, session, { toSeq });
        printTree(tree, opts.json === true);
        if (!tree.ok) throw new CommandFailed('', 1);
        return;
      }
      if (opts.verify) {
        // Loaded only here: the chart and its driver are for --verify alone.
        const [{ loadRecords }, { verifyReplay }] = await Promise.all([
          import('../../replay/loadSession.ts'),
          import('../../replay/verify.ts'),
        ]);
        // A store that reads synchronously (the file store) is read as the re-drive goes, never
        // held whole: for a long log, keeping every record costs more in GC than verifying it.
        const records = store.readSync
          ? store.readSync(session, toSeq !== undefined ? { toSeq } : {})
          : await loadRecords(store, session, toSeq);
        const report = await verifyReplay(records, { toSeq });
        const { ok, transitions, divergence } = report;
        if (opts.json)
          printJson({ ok, records: report.records, transitions, sealed: report.sealed, divergence });
        else if (ok)
          out(
            `ok: ${plural(report.records, 'record')}, ${plural(transitions, 'transition')} in ${plural(report.runs, 'run')} replay identically`,
          );
        else {
          out(`DIVERGED at seq ${divergence!.seq}: ${divergence!.detail}`);
          out(`  expected: ${JSON.stringify(divergence!.expected)}`);
          out(`  actual:   ${JSON.stringify(divergence!.actual)}`);
        }
        if (!ok) throw new CommandFailed('', 1);
        return;
      }
      const [{ stateAt }, { textOf }] = await Promise.all([
        import('../../replay/loadSession.ts'),
        import('../../model/messages.ts'),
      ]);
      const state = await stateAt(store, session, toSeq);
      const run = state.currentRun ?? state.runs.last() ?? null;
      if (opts.json) {
        printJson({
          session,
          seq: state.lastSeq,
          state: state.currentRun?.state ?? null,
          run,
          usage: state.usage,
          messages: state.messages.view(),
          denials: state.denials.view(),
          filesRead: Object.values(state.filesRead),
          compactions: state.compactions,
        });
        return;
      }
      out(`session ${session} as of seq ${state.lastSeq}`);
      if (run)
        out(
          `run ${run.id}: ${run.status}${run.reason ? ` (${run.reason})` : ''}, state ${run.state}, ${plural(run.turns, 'turn')}`,
        );
      out(
        `usage: ${state.usage.inputTokens} in / ${state.usage.outputTokens} out, $${state.usage.costUsd.toFixed(4)}`,
      );
      out(`messages (${state.messages.length}):`);
      state.messages.view().forEach((m, i) => {
        out(
          `  [${i}] ${m.role}: ${textOf(m.content).replace(/\s+/g, ' ').slice(0, 160) || summarize(m.content)}`,
        );
      });
      if (state.denials.length) out(`permission denials: ${state.denials.length}`);
    } finally {
      await store.close();
    }
  });
}

async function rerunOne(session: string, opts: ReplayOptions): Promise<void> {
  if (opts.verify || opts.tree || opts.to)
    throw new UsageError('--rerun goes without --verify, --tree and --to');
  const store = await openStore(opts);
  try {
    if (!(await store.exists(session))) throw new SessionNotFoundError(session);
    const { rerunStored, printRerun } = await import('../rerunCommand.ts');
    const report = await rerunStored(store, session, opts as unknown as RunOptions);
    if (opts.json)
      printJson({ identical: report.identical, divergence: report.divergence, turns: report.turns });
    else printRerun(session, report, false);
    if (!report.identical) throw new CommandFailed('', 1);
  } finally {
    await store.close();
  }
}

/** `--verify` or `--rerun` over many sessions (`--all`: every root session of the store; or a list). */
async function replayMany(given: string[], opts: ReplayOptions): Promise<void> {
  if (!opts.verify && !opts.rerun)
    throw new UsageError('--all and a list of sessions go with --verify or --rerun');
  if (opts.verify && opts.rerun) throw new UsageError('--verify or --rerun, not both');
  if (opts.all && given.length > 0) throw new UsageError('--all or a list of sessions, not both');
  const store = await openStore(opts);
  try {
    const ids = opts.all
      ? (await store.list()).filter((s) => !opts.rerun || s.parent === null).map((s) => s.id)
      : given;
    const lines: { session: string; ok: boolean; seq: number | null; kind?: string; error?: string }[] = [];
    for (const session of ids) {
      if (!(await store.exists(session))) throw new SessionNotFoundError(session);
      if (opts.rerun) {
        const { rerunStored, printRerun } = await import('../rerunCommand.ts');
        let report: Awaited<ReturnType<typeof rerunStored>>;
        try {
          report = await rerunStored(store, session, opts as unknown as RunOptions);
        } catch (e) {
          // One session that cannot be rerun (its cwd is gone, an imported transcript's machine)
          // is a failed line of the suite, not the end of it.
          const error = (e as Error).message;
          lines.push({ session, ok: false, seq: null, error });
          if (!opts.json) out(`${session}: cannot rerun: ${error}`);
          continue;
        }
        const d = report.divergence;
        lines.push({ session, ok: report.identical, seq: d?.seq ?? null, ...(d ? { kind: d.kind } : {}) });
        if (!opts.json) printRerun(session, report, true);
      } else {
        const [{ loadRecords }, { verifyReplay }] = await Promise.all([
          import('../../replay/loadSession.ts'),
          import('../../replay/verify.ts'),
        ]);
        const records = store.readSync ? store.readSync(session, {}) : await loadRecords(store, session);
        const report = await verifyReplay(records);
        const d = report.divergence;
        lines.push({ session, ok: report.ok, seq: d?.seq ?? null });
        if (!opts.json)
          out(
            `${session}: ${report.ok ? 'ok' : `DIVERGED at seq ${d!.seq}: ${d!.detail}`}, ${plural(report.records, 'record')}`,
          );
      }
    }
    const failed = lines.filter((l) => !l.ok).length;
    if (opts.json) printJson({ ok: failed === 0, sessions: lines, diverged: failed });
    else
      out(
        failed === 0
          ? `ok: ${plural(lines.length, 'session')} ${opts.rerun ? 'rerun identically' : 'replay identically'}`
          : `DIVERGED: ${failed} of ${plural(lines.length, 'session')}`,
      );
    if (failed > 0) throw new CommandFailed('', 1);
  } finally {
    await store.close();
  }
}

function summarize(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return content
    .map((b: { type?: string; name?: string }) => `[${b.type}${b.name ? ` ${b.name}` : ''}]`)
    .join(' ');
}

function printTree(tree: TreeVerifyReport, json: boolean): void {
  if (json) {
    printJson({
      ok: tree.ok,
      sessions: tree.sessions.map((s) => ({
        session: s.session,
        parent: s.parent,
        ok: s.report.ok,
        records: s.report.records,
        transitions: s.report.transitions,
      })),
      divergence: tree.divergence,
    });
    return;
  }
  for (const s of tree.sessions) {
    const who = s.parent ? `  child ${s.session}` : `session ${s.session}`;
    out(
      `${who}: ${s.report.ok ? 'ok' : 'DIVERGED'}, ${plural(s.report.records, 'record')}, ${plural(s.report.transitions, 'transition')} in ${plural(s.report.runs, 'run')}`,
    );
  }
  const d = tree.divergence;
  if (!d) {
    out(`ok: ${plural(tree.sessions.length, 'session')} replay identically`);
    return;
  }
  out(`DIVERGED in session ${d.session} at seq ${d.seq}: ${d.detail}`);
  out(`  expected: ${JSON.stringify(d.expected)}`);
  out(`  actual:   ${JSON.stringify(d.actual)}`);
}
