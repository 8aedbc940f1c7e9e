import type { Command } from 'commander';
import { type GlobalOptions, openStore, out, printJson, selfCommand, withCommonOptions } from '../io.ts';

interface DecideFlags extends GlobalOptions {
  by?: string;
  message?: string;
}

/** `reloop approvals`, `reloop approve`, `reloop deny`: the durable approvals of a store. */
export function registerApprovals(program: Command): void {
  withCommonOptions(
    program
      .command('approvals')
      .description('list the tool calls parked runs wait to have approved, oldest first'),
  ).action(async (opts: GlobalOptions) => {
    const store = await openStore(opts);
    try {
      const { pendingApprovals } = await import('../../runtime/approvals.ts');
      const { stateAt } = await import('../../replay/loadSession.ts');
      const now = Date.now();
      const sessions = await store.list();
      // A sub-agent's call is answered in its own session, and resumed with its tree's root.
      const parents = new Map(sessions.map((s) => [s.id, s.parent?.session ?? null]));
      const rootOf = (id: string): string => {
        let at = id;
        for (let up = parents.get(at); up && up !== id; up = parents.get(at)) at = up;
        return at;
      };
      const rows: {
        session: string;
        /** The session whose `Task` call started this one (null: a top-level session). */
        parent: string | null;
        /** The top-level session of its tree: the one to resume. */
        root: string;
        toolUseId: string;
        tool: string;
        input: unknown;
        message?: string;
        requestedAt: number;
        ageMs: number;
      }[] = [];
      for (const s of sessions) {
        if (s.status !== 'paused') continue;
        for (const a of pendingApprovals(await stateAt(store, s.id))) {
          rows.push({
            session: s.id,
            parent: s.parent?.session ?? null,
            root: rootOf(s.id),
            toolUseId: a.toolUseId,
            tool: a.tool,
            input: a.input,
            ...(a.message ? { message: a.message } : {}),
            requestedAt: a.at,
            ageMs: Math.max(0, now - a.at),
          });
        }
      }
      rows.sort((a, b) => a.requestedAt - b.requestedAt);
      if (opts.json) return printJson(rows);
      if (rows.length === 0) return out('nothing waits for approval');
      for (const r of rows) {
        out(
          `${r.session}  ${r.toolUseId}  ${age(r.ageMs).padStart(5)}  ${r.tool} ${JSON.stringify(r.input).slice(0, 100)}${r.message ? `  — ${r.message}` : ''}${r.parent ? `  (sub-agent of ${r.parent}, root ${r.root})` : ''}`,
        );
      }
    } finally {
      await store.close();
    }
  });

  for (const verb of ['approve', 'deny'] as const) {
    const cmd = program
      .command(`${verb} <session> <toolUseId>`)
      .description(
        verb === 'approve'
          ? 'approve a parked tool call: it runs when the session resumes (a worker resumes it by itself)'
          : 'deny a parked tool call: the model gets an error result with the message, and the loop goes on',
      )
      .option('--by <name>', 'who decides (default: $USER)');
    if (verb === 'deny') cmd.option('--message <text>', 'what the model is told');
    withCommonOptions(cmd).action(async (session: string, toolUseId: string, opts: DecideFlags) => {
      const store = await openStore(opts);
      try {
        const { decideApproval, rootOf, treeApprovals } = await import('../../runtime/approvals.ts');
        const { runQueueOf } = await import('../../store/runQueue.ts');
        const by = opts.by ?? process.env.USER ?? 'cli';
        // The answer is written under the session's lease (PostgreSQL): never into a run another
        // process is driving. A worker that has just parked the run gets a moment to let it go.
        const { leaseSession } = await import('../sessionLease.ts');
        const lease = await leaseSession(store, session, { as: verb, waitMs: 5_000 });
        const { state, pending } = await decideApproval(store, session, toolUseId, {
          allow: verb === 'approve',
          by,
          ...(opts.message ? { message: opts.message } : {}),
        }).finally(() => lease?.release('restore'));
        // Every call of the tree answered: its root (the session a worker runs, which resumes
        // its sub-agents) goes back to the workers.
        const { root, parent } = await rootOf(store, session);
        const tree =
          root === session
            ? { parked: true, pending: [], lastSeq: state.lastSeq }
            : await treeApprovals(store, root);
        const waiting = [
          ...pending.map((p) => ({ session, toolUseId: p.toolUseId })),
          ...tree.pending.map((w) => ({ session: w.session, toolUseId: w.entry.toolUseId })),
        ];
        const queue = runQueueOf(store);
        const queued =
          waiting.length === 0 && tree.parked && queue ? await queue.resume(root, tree.lastSeq) : false;
        if (opts.json) {
          return printJson({
            sessionId: session,
            toolUseId,
            decision: verb === 'approve' ? 'allow' : 'deny',
            by,
            pending: pending.map((p) => p.toolUseId),
            queued,
            parent,
            root,
            /** Every call of the tree still waiting, in this session or another. */
            treePending: waiting,
          });
        }
        out(`${verb === 'approve' ? 'approved' : 'denied'} ${toolUseId} of ${session}`);
        if (waiting.length > 0)
          out(
            `still waiting: ${waiting.map((w) => (w.session === session ? w.toolUseId : `${w.toolUseId} of ${w.session}`)).join(', ')}`,
          );
        else if (queued)
          out(`queued again: a worker resumes ${root === session ? 'it' : `its tree's root ${root}`}`);
        else if (!tree.parked)
          out(`session ${root}, the root of its tree, is not parked on it: nothing to resume`);
        else
          out(
            `resume it: ${selfCommand()} run --resume ${root} [the run flags]${root === session ? '' : ` (the root of its tree: it resumes ${session})`}`,
          );
      } finally {
        await store.close();
      }
    });
  }
}

function age(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.round(s / 60)}m`;
  if (s < 86_400) return `${Math.round(s / 3600)}h`;
  return `${Math.round(s / 86_400)}d`;
}
