import type {
  ActorFailure,
  BackoffInput,
  BuildQueryInput,
  CallModelInput,
  CompactInput,
  CompactResult,
  RunToolsInput,
  StopChecksInput,
  StopDecision,
  ToolBatchResult,
} from '../machines/context.ts';
import type { EffectHandlers, EffectName } from '../machines/effects.ts';
import { decideStop, type StopAnswer } from '../machines/stopDecision.ts';
import { addUsage, estimateTokens, type ToolResultBlock, type Usage, ZERO_USAGE } from '../model/messages.ts';
import type { ModelRequest, ModelResponse } from '../model/types.ts';
import type { LogRecord } from '../store/records.ts';

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
}

const aborted: ActorFailure = { kind: 'aborted', message: 'aborted (recorded)' };

/** A promise that never settles: the log ended here, the replayer stops the run. */
function never<T>(src: FactSource): Promise<T> {
  src.endOfLog();
  return new Promise<T>(() => {});
}

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

  return {
    buildQuery: replayed(
      'buildQuery',
      async (input: BuildQueryInput, { i, slice }): Promise<ModelRequest> => {
        if (!slice) return never(src);
        if (src.abortedBy(i)) throw aborted;
        return {
          model: input.model,
          system: input.system,
          messages: input.messages,
          tools: [],
          maxTokens: input.maxTokens,
        };
      },
    ),

    callModel: replayed('callModel', async (_input: CallModelInput, { slice }): Promise<ModelResponse> => {
      const fact = slice?.find(
        (r) => (r.type === 'model.responded' || r.type === 'model.failed') && r.data.purpose === 'turn',
      );
      if (!fact) return never(src);
      if (fact.type === 'model.failed') throw fact.data.failure;
      return (fact as Extract<LogRecord, { type: 'model.responded' }>).data.response;
    }),

    runTools: replayed('runTools', async (input: RunToolsInput, { i, slice }): Promise<ToolBatchResult> => {
      if (!slice) return never(src);
      const byId = new Map<string, Extract<LogRecord, { type: 'tool.finished' }>>();
      for (const r of slice) if (r.type === 'tool.finished') byId.set(r.data.toolUseId, r);
      const results: ToolResultBlock[] = [];
      for (const use of input.toolUses) {
        const f = byId.get(use.id);
        if (!f) return never(src);
        results.push({
          type: 'tool_result',
          tool_use_id: use.id,
          content: f.data.result.content as ToolResultBlock['content'],
          ...(f.data.result.isError ? { is_error: true } : {}),
        });
      }
      const usage = childrenUsage(slice, byId);
      return {
        results,
        aborted: src.abortedBy(i),
        appendedTokens: estimateTokens(results),
        ...(usage ? { usage } : {}),
      };
    }),

    compact: replayed('compact', async (_input: CompactInput, { slice }): Promise<CompactResult> => {
      if (!slice) return never(src);
      const failed = slice.find((r) => r.type === 'model.failed' && r.data.purpose === 'compaction');
      if (failed?.type === 'model.failed' && failed.data.failure.kind === 'aborted') throw aborted;
      const done = slice.find((r) => r.type === 'compaction.finished');
      if (!done || done.type !== 'compaction.finished') return never(src);
      if (!done.data.ok) throw { kind: 'failed', message: done.data.error } satisfies ActorFailure;
      const res = slice.find((r) => r.type === 'model.responded' && r.data.purpose === 'compaction');
      const usage = res?.type === 'model.responded' ? res.data.response.usage : ZERO_USAGE;
      const { messages, summary, tokensBefore, tokensAfter } = done.data;
      return { messages, summary, tokensBefore, tokensAfter, usage };
    }),

    backoff: replayed('backoff', async (_input: BackoffInput, { i, slice }): Promise<{ delayMs: number }> => {
      const fact = slice?.find((r) => r.type === 'backoff.scheduled');
      if (!slice || !fact || fact.type !== 'backoff.scheduled') return never(src);
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
          if (r.type === 'hook.decided' && (r.data.hook === 'Stop' || r.data.hook === 'Budget')) {
            answers.push({ hook: r.data.hook, decision: r.data.decision, reason: r.data.reason });
          }
        }
        return decideStop(answers);
      },
    ),
  };
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
