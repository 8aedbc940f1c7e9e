import { toolCallNotes } from '../hooks/folds.ts';
import type { CompactInput, CompactResult } from '../machines/context.ts';
import { compactedMessages, summaryText } from '../model/compaction.ts';
import type { Message, ToolUseBlock } from '../model/messages.ts';
import { estimateHistoryTokens, keptTail } from '../runtime/compactor.ts';
import type { LogRecord, RecordOf } from '../store/records.ts';

/*
 * What the live effects derive from their input and the facts they record, computed again from the
 * log alone. Verify compares these with the derived records the log holds.
 */

export interface Mismatch {
  seq: number;
  expected: unknown;
  actual: unknown;
  detail: string;
}

/** The `model.requested` the machine's request makes (null: not derivable, not compared). */
export function expectedRequest(
  purpose: 'turn' | 'compaction',
  model: string,
  maxTokens: number | null,
  messageCount: number,
  attempt: number,
) {
  return { purpose, model, maxTokens, messageCount, attempt };
}

const EMPTY_SUMMARY = 'the model returned an empty summary';

type Derived =
  | { ok: true; result: CompactResult }
  | { ok: false; error: string }
  | { mismatch: Omit<Mismatch, 'seq'> };

/** The same fields with the same values (in any order; values compared as JSON). */
function same(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const keys = Object.keys(a).filter((k) => a[k] !== undefined);
  if (keys.length !== Object.keys(b).filter((k) => b[k] !== undefined).length) return false;
  return keys.every((k) => JSON.stringify(a[k]) === JSON.stringify(b[k]));
}

/**
 * The compaction a slice's facts make: its failure, or the summary read from the compaction
 * response and the history cut the way the compactor cuts it. `done` is the logged
 * `compaction.finished`, compared field by field (v1 holds the summary and messages, v2 refers to
 * the response and the number of messages kept).
 */
export function expectedCompaction(
  input: CompactInput,
  failed: RecordOf<'model.failed'> | undefined,
  response: RecordOf<'model.responded'> | undefined,
  done: RecordOf<'compaction.finished'>,
): Derived {
  const logged = done.data;
  const failure = failed
    ? failed.data.failure.message
    : response && !summaryText(response.data.response.content)
      ? EMPTY_SUMMARY
      : undefined;
  if (failure !== undefined || (!response && !logged.ok)) {
    // Without a response or a failure record the request never went out (the log could not be
    // written first): the error is then the fact itself.
    const expected = { ok: false, mode: input.mode, error: failure ?? (logged.ok ? '' : logged.error) };
    if (!same(expected, logged))
      return {
        mismatch: {
          expected,
          actual: logged,
          detail: 'the compaction logged is not what its response gives',
        },
      };
    return { ok: false, error: expected.error };
  }
  if (!response || !logged.ok) {
    return {
      mismatch: {
        expected: { ok: false },
        actual: logged,
        detail: 'a compaction logged as done without its response',
      },
    };
  }
  const summary = summaryText(response.data.response.content);
  const history = input.messages;
  let kept: number;
  let problem: string | null = null;
  if (logged.messages) {
    kept = logged.messages.length - 1;
    const start = history.length - kept;
    if (kept < 0 || start < 0 || (kept > 0 && history[start]?.role !== 'assistant')) {
      problem =
        'the history kept after the summary is not a tail of the history starting at an assistant message';
    }
  } else {
    kept = logged.tailTokens !== undefined ? keptTail(history, logged.tailTokens) : (logged.kept ?? -1);
    if (kept < 0 || kept > history.length) problem = `keeps ${logged.kept} messages of ${history.length}`;
  }
  const messages: Message[] = problem ? [] : compactedMessages(history, summary, kept);
  // Sizes as the compactor measures them: the context's size when the machine knew it, the
  // history's estimate where it explains less (earlier versions measured the history alone).
  const historyBefore = estimateHistoryTokens(history);
  const historyAfter = estimateHistoryTokens(messages);
  const measured = Math.max(input.contextTokens ?? 0, historyBefore);
  const asMeasured = logged.tokensBefore === measured;
  const tokensBefore = asMeasured ? measured : historyBefore;
  const tokensAfter = asMeasured ? measured - historyBefore + historyAfter : historyAfter;
  const expected = logged.messages
    ? { ok: true, mode: input.mode, summary, messages, tokensBefore, tokensAfter }
    : {
        ok: true,
        mode: input.mode,
        response: response.seq,
        kept,
        ...(logged.tailTokens !== undefined ? { tailTokens: logged.tailTokens } : {}),
        tokensBefore,
        tokensAfter,
      };
  if (problem || !same(expected, logged)) {
    return {
      mismatch: {
        expected,
        actual: logged,
        detail: problem ?? 'the compaction logged is not what its response gives',
      },
    };
  }
  return {
    ok: true,
    result: { messages, summary, tokensBefore, tokensAfter, usage: response.data.response.usage },
  };
}

/**
 * The first record of a tool batch's slice that does not fit the batch the response asked for:
 * a record for a tool call the response did not make, a name or index that is not the call's, a
 * second result for one call, a denial whose call was not reported denied (or the reverse), a
 * result of a tool that ran without its `tool.started`.
 */
export function toolBatchProblem(
  uses: readonly ToolUseBlock[],
  slice: readonly LogRecord[],
  /** The sub-agent a call of a resumed batch was already parked on (announced in an earlier run). */
  parkedChild: (toolUseId: string) => string | undefined = () => undefined,
): Mismatch | null {
  const byId = new Map<string, { name: string; index: number }>();
  uses.forEach((u, index) => {
    if (!byId.has(u.id)) byId.set(u.id, { name: u.name, index });
  });
  const denied = new Set<string>();
  /** Calls a PreToolUse hook blocked (outcome hook_blocked; `denied` in logs before it existed). */
  const blocked = new Set<string>();
  const started = new Set<string>();
  const finished = new Set<string>();
  const children = new Map<string, string>();
  /** What each call's hooks said for the model: its result must carry it. */
  const notes = new Map<string, RecordOf<'hook.decided'>['data'][]>();
  const problem = (r: LogRecord, expected: unknown, actual: unknown, detail: string): Mismatch => ({
    seq: r.seq,
    expected,
    actual,
    detail,
  });
  for (const r of slice) {
    if (r.type === 'permission.decided' || r.type === 'tool.started' || r.type === 'tool.finished') {
      const call = byId.get(r.data.toolUseId);
      if (!call)
        return problem(r, null, r.data.toolUseId, `a ${r.type} for a tool call the response did not make`);
      if (r.data.name !== call.name)
        return problem(r, call.name, r.data.name, `the ${r.type} names another tool than its call`);
      if (r.type !== 'permission.decided' && r.data.index !== call.index) {
        return problem(r, call.index, r.data.index, `the ${r.type} has another index than its call`);
      }
    }
    switch (r.type) {
      case 'permission.decided':
        if (r.data.resolved === 'deny') denied.add(r.data.toolUseId);
        break;
      case 'hook.decided':
        if (r.data.toolUseId !== undefined && !byId.has(r.data.toolUseId)) {
          return problem(
            r,
            null,
            r.data.toolUseId,
            'a hook decision for a tool call the response did not make',
          );
        }
        if (
          r.data.hook === 'PreToolUse' &&
          (r.data.decision === 'deny' || r.data.decision === 'prevent') &&
          r.data.toolUseId
        )
          blocked.add(r.data.toolUseId);
        if (r.data.toolUseId !== undefined && r.data.hook !== 'SubagentStart')
          notes.set(r.data.toolUseId, [...(notes.get(r.data.toolUseId) ?? []), r.data]);
        break;
      case 'child.started':
        children.set(r.data.toolUseId, r.data.child);
        break;
      case 'approval.requested': {
        // A Task call parked on its sub-agent: started in this batch, and on the child it announced.
        const id = r.data.toolUseId;
        if (r.data.child === undefined) break;
        const child = children.get(id) ?? parkedChild(id);
        if (!byId.has(id) || !started.has(id) || child !== r.data.child)
          return problem(r, child ?? null, r.data.child, 'a call parked on a sub-agent it did not start');
        break;
      }
      case 'tool.started':
        if (started.has(r.data.toolUseId))
          return problem(r, null, r.data.toolUseId, 'a tool call started twice');
        started.add(r.data.toolUseId);
        break;
      case 'tool.finished': {
        const id = r.data.toolUseId;
        const outcome = r.data.outcome;
        if (finished.has(id)) return problem(r, null, id, 'a second result for one tool call');
        finished.add(id);
        const expected = blocked.has(id) ? 'hook_blocked' : denied.has(id) ? 'denied' : 'neither';
        const fits =
          expected === 'hook_blocked'
            ? outcome === 'hook_blocked' || outcome === 'denied'
            : expected === 'denied'
              ? outcome === 'denied'
              : outcome !== 'denied' && outcome !== 'hook_blocked';
        if (!fits) {
          return problem(
            r,
            expected === 'neither' ? 'not denied' : expected,
            outcome,
            'the outcome does not match the permission and hook decisions logged for the call',
          );
        }
        if ((outcome === 'ok' || outcome === 'error' || outcome === 'timeout') && !started.has(id)) {
          return problem(r, 'tool.started first', outcome, 'a result of a tool that never started');
        }
        const missing = missingNotes(r.data.result.content, notes.get(id) ?? []);
        if (missing)
          return problem(
            r,
            missing,
            r.data.result.content,
            "the result does not carry what the call's hooks said for the model",
          );
        break;
      }
      default:
        break;
    }
  }
  return null;
}

/** The first of the hooks' feedback and context lines that a tool result does not contain. */
function missingNotes(content: unknown, records: readonly RecordOf<'hook.decided'>['data'][]): string | null {
  if (records.length === 0) return null;
  const text =
    typeof content === 'string'
      ? content
      : Array.isArray(content)
        ? content.map((b) => (b && typeof b === 'object' && 'text' in b ? String(b.text) : '')).join('\n\n')
        : '';
  for (const r of records) {
    const line = toolCallNotes([r]);
    if (line !== undefined && !text.includes(line)) return line;
  }
  return null;
}
