import {
  afterCompactOutcome,
  PROMPT_EVENTS,
  preCompactOutcome,
  promptHooksOutcome,
  stopReasonOf,
} from '../hooks/folds.ts';
import type {
  ActorFailure,
  BackoffInput,
  BuildQueryInput,
  BuiltQuery,
  CallModelInput,
  CompactInput,
  CompactOutput,
  RunToolsInput,
  StopChecksInput,
  StopDecision,
  ToolBatchResult,
} from '../machines/context.ts';
import type { EffectHandlers, EffectName } from '../machines/effects.ts';
import { userText } from '../machines/loopMessages.ts';
import { decideStop, type StopAnswer } from '../machines/stopDecision.ts';
import { addUsage, estimateTokens, type ToolResultBlock, type Usage } from '../model/messages.ts';
import type { ModelRequest, ModelResponse } from '../model/types.ts';
import type { LogRecord, RecordOf } from '../store/records.ts';
import { toolResultBlock } from '../store/refs.ts';
import type { SessionState } from '../store/sessionState.ts';
import { expectedCompaction, expectedRequest, toolBatchProblem } from './derivedFacts.ts';

/**
 * Where recorded facts come from during replay. Invocation k of any actor (k = number of
 * transitions taken so far in the run) is answered from the records logged between
 * transition k−1 and transition k: live, an actor's facts always land in exactly that slice.
 */
export interface FactSource {
  /** Records of the slice for the actor started after `index` transitions; null past the log's end. */
  slice(index: number): LogRecord[] | null;
  /** Whether an abort was requested in the run before the end of that slice. */
  abortedBy(index: number): boolean;
  /** The machine has taken this many transitions (set by the replayer as they happen). */
  readonly taken: number;
  /** Called when the log has no more facts for a run that never ended (a crash). */
  endOfLog(): void;
  /** A record of the slice is not what the live effect would have logged given the others. */
  mismatch(seq: number, expected: unknown, actual: unknown, detail: string): void;
  /**
   * What the session knew when the run started: the results a parked run logged for calls that
   * ran beside a parked sub-agent (carried into the resumed batch, not run again), and the
   * sub-agent each parked `Task` call waits for.
   */
  readonly before?: Pick<SessionState, 'unappendedResults' | 'approvals'>;
}

const aborted: ActorFailure = { kind: 'aborted', message: 'aborted (recorded)' };

/** A promise that never settles: the log ended here, the replayer stops the run. */
function never<T>(src: FactSource): Promise<T> {
  src.endOfLog();
  return new Promise<T>(() => {});
}

/** A fact disagrees with what derives it: reported, and the run stops here. */
function halt<T>(
  src: FactSource,
  seq: number,
  expected: unknown,
  actual: unknown,
  detail: string,
): Promise<T> {
  src.mismatch(seq, expected, actual, detail);
  return new Promise<T>(() => {});
}

function find<T extends LogRecord['type']>(
  slice: readonly LogRecord[],
  type: T,
  where: (r: RecordOf<T>) => boolean = () => true,
): RecordOf<T> | undefined {
  for (const r of slice) if (r.type === type && where(r as RecordOf<T>)) return r as RecordOf<T>;
  return undefined;
}

/**
 * The effects of a run answered from its log. Each answer comes from the facts the live effect
 * recorded (a response, tool results, hook decisions, a backoff draw); every record the live effect
 * derived from its input and those facts (the request's shape, the ids of the tool records, the
 * compacted history) is re-derived here and compared, so a log whose derived records disagree with
 * its facts diverges at the first such record.
 */
export function recordedEffects(src: FactSource): EffectHandlers {
  /**
   * The recorded answer of one effect. Invocation k is answered from the slice after k
   * transitions; an `actor.failed` logged there means the live effect failed, so the replayed
   * one fails the same way before looking at any other fact (as `guarded` logs it live).
   */
  const replayed =
    <I, O>(
      actor: EffectName,
      answer: (input: I, at: { i: number; slice: LogRecord[] | null }) => Promise<O>,
    ) =>
    async (input: I): Promise<O> => {
      const i = src.taken;
      const slice = src.slice(i);
      const f = slice?.find((r) => r.type === 'actor.failed' && r.data.actor === actor);
      if (f?.type === 'actor.failed')
        throw { kind: 'failed', message: f.data.message } satisfies ActorFailure;
      return answer(input, { i, slice });
    };

  /** The request record of a model call, checked against what the machine asked for. */
  function checkRequest(
    slice: readonly LogRecord[],
    expected: ReturnType<typeof expectedRequest>,
    answerSeq: number,
  ): string | null {
    const requested = find(slice, 'model.requested', (r) => r.data.purpose === expected.purpose);
    if (!requested) {
      src.mismatch(answerSeq, expected, null, `a ${expected.purpose} response without its model.requested`);
      return 'mismatch';
    }
    const d = requested.data;
    if (
      d.model !== expected.model ||
      d.messageCount !== expected.messageCount ||
      d.attempt !== expected.attempt ||
      (expected.maxTokens !== null && d.maxTokens !== expected.maxTokens)
    ) {
      src.mismatch(
        requested.seq,
        expected,
        d,
        `the ${expected.purpose} request logged is not the one the machine made`,
      );
      return 'mismatch';
    }
    return null;
  }

  return {
    buildQuery: replayed('buildQuery', async (input: BuildQueryInput, { i, slice }): Promise<BuiltQuery> => {
      if (!slice) return never(src);
      if (src.abortedBy(i)) throw aborted;
      const request: ModelRequest = {
        model: input.model,
        system: input.system,
        messages: input.messages,
        tools: [],
        maxTokens: input.maxTokens,
      };
      // A manual compaction run says so in its config (run.started), which the chart's input is.
      const compact = input.compact ? { compact: true as const } : {};
      // The run's prompt hooks answered in this build: what they decided is folded from their records.
      const records = hookRecords(slice).filter((r) => PROMPT_EVENTS.includes(r.hook as never));
      if (records.length === 0) return { ...request, ...compact };
      const hooks = promptHooksOutcome(records);
      const messages =
        hooks.context !== undefined ? [...input.messages, userText(hooks.context)] : input.messages;
      return { ...request, messages, hooks, ...compact };
    }),

    callModel: replayed('callModel', async (input: CallModelInput, { slice }): Promise<ModelResponse> => {
      const fact = slice?.find(
        (r) => (r.type === 'model.responded' || r.type === 'model.failed') && r.data.purpose === 'turn',
      );
      if (!slice || !fact) return never(src);
      const expected = expectedRequest(
        'turn',
        input.request.model,
        input.request.maxTokens,
        input.request.messages.length,
        input.attempt,
      );
      if (checkRequest(slice, expected, fact.seq)) return new Promise(() => {});
      if (fact.type === 'model.failed') throw fact.data.failure;
      return (fact as RecordOf<'model.responded'>).data.response;
    }),

    runTools: replayed('runTools', async (input: RunToolsInput, { i, slice }): Promise<ToolBatchResult> => {
      if (!slice) return never(src);
      // Checked first: a batch the log cuts short (a crash) still has its records checked.
      const problem = toolBatchProblem(input.toolUses, slice, (id) => src.before?.approvals.get(id)?.child);
      if (problem) return halt(src, problem.seq, problem.expected, problem.actual, problem.detail);
      const parked = slice.flatMap((r) => (r.type === 'approval.requested' ? [r.data] : []));
      if (parked.length > 0) return { results: [], aborted: false, appendedTokens: 0, parked };
      const byId = new Map<string, RecordOf<'tool.finished'>>();
      for (const r of slice)
        if (r.type === 'tool.finished' && !byId.has(r.data.toolUseId)) byId.set(r.data.toolUseId, r);
      const results: ToolResultBlock[] = [];
      for (const use of input.toolUses) {
        const f = byId.get(use.id);
        if (!f) {
          // A parked batch resumed: a call that ran before it parked keeps its logged result.
          const carried = src.before?.unappendedResults.get(use.id);
          if (!carried) return never(src);
          results.push(toolResultBlock(use.id, carried));
          continue;
        }
        results.push({
          type: 'tool_result',
          tool_use_id: use.id,
          content: f.data.result.content as ToolResultBlock['content'],
          ...(f.data.result.isError ? { is_error: true } : {}),
        });
      }
      const usage = childrenUsage(slice, byId);
      const stopped = stopReasonOf(hookRecords(slice));
      return {
        results,
        aborted: src.abortedBy(i),
        appendedTokens: estimateTokens(results),
        ...(usage ? { usage } : {}),
        ...(stopped !== undefined ? { stopped } : {}),
      };
    }),

    compact: replayed('compact', async (input: CompactInput, { i, slice }): Promise<CompactOutput> => {
      if (!slice) return never(src);
      // PreCompact hooks refused it: no request was made, nothing was compacted.
      const pre = preCompactOutcome(hookRecords(slice));
      if (pre.stopped !== undefined) return { refused: 'stopped', reason: pre.stopped };
      if (pre.blocked !== undefined) return { refused: 'blocked', reason: pre.blocked };
      // Aborted while the PreCompact hooks ran: the request never went out.
      if (src.abortedBy(i) && !find(slice, 'model.requested')) throw aborted;
      const failed = find(slice, 'model.failed', (r) => r.data.purpose === 'compaction');
      if (failed?.data.failure.kind === 'aborted') throw aborted;
      const response = find(slice, 'model.responded', (r) => r.data.purpose === 'compaction');
      const done = find(slice, 'compaction.finished');
      if (!done) return never(src);
      const answer = failed ?? response;
      if (answer) {
        const expected = expectedRequest('compaction', input.model, null, input.messages.length + 1, 1);
        if (checkRequest(slice, expected, answer.seq)) return new Promise(() => {});
      }
      const derived = expectedCompaction(input, failed, response, done);
      if ('mismatch' in derived) {
        const m = derived.mismatch;
        return halt(src, done.seq, m.expected, m.actual, m.detail);
      }
      if (!derived.ok)
        throw { kind: 'failed', message: `compaction failed: ${derived.error}` } satisfies ActorFailure;
      const after = afterCompactOutcome(hookRecords(slice));
      return {
        ...derived.result,
        ...(after.context !== undefined ? { hookContext: after.context } : {}),
        ...(after.stopped !== undefined ? { hookStopped: after.stopped } : {}),
      };
    }),

    backoff: replayed('backoff', async (input: BackoffInput, { i, slice }): Promise<{ delayMs: number }> => {
      const fact = slice ? find(slice, 'backoff.scheduled') : undefined;
      if (!slice || !fact) return never(src);
      const expected = { attempt: input.attempt, retryAfterMs: input.retryAfterMs };
      if (fact.data.attempt !== expected.attempt || fact.data.retryAfterMs !== expected.retryAfterMs) {
        const actual = { attempt: fact.data.attempt, retryAfterMs: fact.data.retryAfterMs };
        return halt(
          src,
          fact.seq,
          expected,
          actual,
          'the backoff logged is not for the attempt the machine retries',
        );
      }
      if (src.abortedBy(i)) throw aborted;
      return { delayMs: fact.data.delayMs };
    }),

    stopChecks: replayed(
      'stopChecks',
      async (_input: StopChecksInput, { i, slice }): Promise<StopDecision> => {
        if (!slice) return never(src);
        if (src.abortedBy(i)) throw aborted;
        const answers: StopAnswer[] = [];
        for (const r of slice) {
          const hook = r.type === 'hook.decided' ? r.data.hook : null;
          if (
            r.type === 'hook.decided' &&
            (hook === 'Stop' || hook === 'SubagentStop' || hook === 'Budget')
          ) {
            answers.push({ hook, decision: r.data.decision, reason: r.data.reason });
          }
        }
        return decideStop(answers);
      },
    ),
  };
}

/** The hook answers a slice recorded. */
function hookRecords(slice: readonly LogRecord[]): RecordOf<'hook.decided'>['data'][] {
  return slice.flatMap((r) => (r.type === 'hook.decided' ? [r.data] : []));
}

/**
 * `Task` calls are answered from `child.finished`: a child that finished on its own (its call's
 * outcome ok or error, not cut short by an abort or a timeout) brought its usage back with its
 * result, as live.
 */
function childrenUsage(
  slice: readonly LogRecord[],
  finished: ReadonlyMap<string, Extract<LogRecord, { type: 'tool.finished' }>>,
): Usage | undefined {
  let total: Usage | undefined;
  for (const r of slice) {
    if (r.type !== 'child.finished') continue;
    const outcome = finished.get(r.data.toolUseId)?.data.outcome;
    if (outcome !== 'ok' && outcome !== 'error') continue;
    total = total ? addUsage(total, r.data.usage) : r.data.usage;
  }
  return total;
}
