import { toolCallNotes } from '../hooks/folds.ts';
import { type ChildEnd, childFinished, lastEnd, taskOutput } from '../runtime/children/childResult.ts';
import { fold } from '../store/evolve.ts';
import type { LogRecord, RecordOf } from '../store/records.ts';
import { emptySessionState } from '../store/sessionState.ts';
import type { EventStore } from '../store/types.ts';
import { appendText } from '../tools/admission.ts';
import { loadRecords } from './loadSession.ts';
import { sessionTree } from './sessionTree.ts';
import { type Divergence, type VerifyOptions, type VerifyReport, verifyReplay } from './verify.ts';

export interface TreeSessionReport {
  session: string;
  /** The session whose `Task` call started it; null for the root. */
  parent: string | null;
  report: VerifyReport;
}

export interface TreeVerifyReport {
  ok: boolean;
  /** The root first, then each child in the order its parent started it. */
  sessions: TreeSessionReport[];
  /** The first divergence in that order, with the session it is in. */
  divergence: (Divergence & { session: string }) | null;
}

/**
 * Verify replay of a session and of every sub-agent it started (by `child.started`, or by the
 * child's own `parent` link: an imported sub-agent), each log against the chart,
 * plus what ties them: each `child.finished` must say what the child's own log says (how its
 * last run ended, its turns, its usage) and the `Task` result must be the child's last text.
 * `toSeq` cuts the root's log only.
 */
export async function verifyTree(
  store: EventStore,
  root: string,
  options: VerifyOptions = {},
): Promise<TreeVerifyReport> {
  const sessions: TreeSessionReport[] = [];
  let divergence: TreeVerifyReport['divergence'] = null;
  const tree = await sessionTree(store, root, await loadRecords(store, root, options.toSeq));
  for (const { session, parent, records } of tree) {
    const toSeq = parent === null ? options.toSeq : undefined;
    const report = await verifyReplay(records, { machine: options.machine, toSeq });
    if (!report.divergence) {
      const link = await checkChildren(store, records);
      if (link) {
        report.ok = false;
        report.divergence = link;
      }
    }
    sessions.push({ session, parent, report });
    if (report.divergence && !divergence) divergence = { ...report.divergence, session };
  }
  return { ok: divergence === null, sessions, divergence };
}

/** The first `child.finished` (or `Task` result) that its child's log does not bear out. */
async function checkChildren(store: EventStore, records: readonly LogRecord[]): Promise<Divergence | null> {
  const results = new Map<string, RecordOf<'tool.finished'>>();
  for (const r of records) if (r.type === 'tool.finished') results.set(r.data.toolUseId, r);
  // What the Task call's own hooks (PreToolUse, PostToolUse, …) added to its result for the model.
  const hooks = new Map<string, RecordOf<'hook.decided'>['data'][]>();
  for (const r of records) {
    const id = r.type === 'hook.decided' && r.data.hook !== 'SubagentStart' ? r.data.toolUseId : undefined;
    if (id !== undefined) hooks.set(id, [...(hooks.get(id) ?? []), (r as RecordOf<'hook.decided'>).data]);
  }
  const agents = new Map<string, string>();
  for (const r of records) {
    if (r.type === 'child.started') agents.set(r.data.child, r.data.agent);
    if (r.type !== 'child.finished') continue;
    if (!(await store.exists(r.data.child))) {
      return diverged(
        r,
        r.data,
        null,
        `child.finished names session ${r.data.child}, which is not in the store`,
      );
    }
    const state = fold(await loadRecords(store, r.data.child), emptySessionState());
    const end = lastEnd(state);
    if (!end) {
      return diverged(r, r.data, null, `child.finished, but the last run of ${r.data.child} never ended`);
    }
    const logged: ChildEnd = {
      status: r.data.status,
      reason: r.data.reason,
      ...(r.data.error ? { error: r.data.error } : {}),
    };
    // The error text is the run's, kept only by the parent; the rest must match the child's log.
    const derived = childFinished(r.data.toolUseId, r.data.child, state, {
      ...end,
      ...(logged.error ? { error: logged.error } : {}),
    });
    if (JSON.stringify(derived) !== JSON.stringify(r.data)) {
      return diverged(
        r,
        r.data,
        derived,
        `child.finished says ${r.data.status} (${r.data.reason}) after ${r.data.turns} turns; the log of ${r.data.child} says ${derived.status} (${derived.reason}) after ${derived.turns}`,
      );
    }
    const result = results.get(r.data.toolUseId);
    if (result && (result.data.outcome === 'ok' || result.data.outcome === 'error')) {
      const out = taskOutput(agents.get(r.data.child) ?? '?', r.data.child, state, logged);
      const notes = toolCallNotes(hooks.get(r.data.toolUseId) ?? []);
      const content = notes === undefined ? out.content : appendText(out.content, notes);
      const expected = { content, isError: out.isError ?? false };
      if (JSON.stringify(expected) !== JSON.stringify(result.data.result)) {
        return diverged(
          result,
          result.data.result,
          expected,
          `the Task result is not the last text of ${r.data.child}`,
        );
      }
    }
  }
  return null;
}

function diverged(r: LogRecord, expected: unknown, actual: unknown, detail: string): Divergence {
  return { seq: r.seq, expected, actual, detail };
}
