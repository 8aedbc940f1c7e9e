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
      const rows: {
        session: string;
        toolUseId: string;
        tool: string;
        input: unknown;
        message?: string;
        requestedAt: number;
        ageMs: number;
      }[] = [];
      for (const s of await store.list()) {
        if (s.status !== 'paused') continue;
        for (const a of pendingApprovals(await stateAt(store, s.id))) {
          rows.push({
            session: s.id,
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
          `${r.session}  ${r.toolUseId}  ${age(r.ageMs).padStart(5)}  ${r.tool} ${JSON.stringify(r.input).slice(0, 100)}${r.message ? `  — ${r.message}` : ''}`,
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
        const { decideApproval } = await import('../../runtime/approvals.ts');
        const { runQueueOf } = await import('../../store/runQueue.ts');
        const by = opts.by ?? process.env.USER ?? 'cli';
        const { state, pending } = await decideApproval(store, session, toolUseId, {
          allow: verb === 'approve',
          by,
          ...(opts.message ? { message: opts.message } : {}),
        });
        // Every call of the batch answered: a queued session goes back to the workers.
        const queue = runQueueOf(store);
        const queued = pending.length === 0 && queue ? await queue.resume(session, state.lastSeq) : false;
        if (opts.json) {
          return printJson({
            sessionId: session,
            toolUseId,
            decision: verb === 'approve' ? 'allow' : 'deny',
            by,
            pending: pending.map((p) => p.toolUseId),
            queued,
          });
        }
        out(`${verb === 'approve' ? 'approved' : 'denied'} ${toolUseId} of ${session}`);
        if (pending.length > 0) out(`still waiting: ${pending.map((p) => p.toolUseId).join(', ')}`);
        else if (queued) out('queued again: a worker resumes it');
        else out(`resume it: ${selfCommand()} run --resume ${session} [the run flags]`);
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
