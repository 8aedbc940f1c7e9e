import { stopReasonOf } from '../hooks/folds.ts';
import type { StopHook, StopHookResult } from '../hooks/types.ts';
import { messageOf } from '../lib/errors.ts';
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
import type { EffectHandlers } from '../machines/effects.ts';
import { userText } from '../machines/loopMessages.ts';
import { decideStop, type StopAnswer } from '../machines/stopDecision.ts';
import { withMemory } from '../memory/context.ts';
import { compactedMessages } from '../model/compaction.ts';
import { addUsage, estimateTokens, textOf, toolUsesOf, type Usage } from '../model/messages.ts';
import {
  ModelCallError,
  type ModelClient,
  type ModelFailure,
  type ModelRequest,
  type ModelResponse,
  type ModelStreamEvent,
} from '../model/types.ts';
import type { DraftRecord, RecordData, RecordType } from '../store/records.ts';
import { startedData } from '../store/refs.ts';
import { runToolBatch, type ToolCallReport } from '../tools/orchestrator.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { AskUser, CanUseTool, RunScope, ToolHooks } from '../tools/types.ts';
import { type BackoffPolicy, backoffDelay, DEFAULT_BACKOFF } from './backoff.ts';
import type { BudgetPolicy } from './budget.ts';
import { compactionRequest, estimateHistoryTokens, keptTail, summaryText } from './compactor.ts';
import type { Clock, Random } from './determinism.ts';
import type { RunHooks } from './runHooks.ts';
import type { SessionWriter } from './sessionWriter.ts';

export interface LiveDeps {
  writer: SessionWriter;
  runId: string;
  client: ModelClient;
  registry: ToolRegistry;
  canUseTool: CanUseTool;
  askUser?: AskUser;
  /** An `ask` nobody is attached to answer parks the run (durable approval) instead of denying. */
  parkOnAsk: boolean;
  toolHooks?: ToolHooks;
  /** The first hook API's stop hooks: run one after the other before `hooks`' Stop hooks. */
  stopHooks: readonly StopHook[];
  /** The session's hooks outside tool calls (src/runtime/runHooks.ts); absent: none configured. */
  hooks?: RunHooks;
  budgetPolicy?: BudgetPolicy;
  clock: Clock;
  random: Random;
  cwd: string;
  signal: AbortSignal;
  /** What the run's tools start beyond a call (background shells) belongs to it. */
  run?: RunScope;
  backoff?: BackoffPolicy;
  compactionMaxTokens?: number;
  /** Recent history kept verbatim after compaction, in estimated tokens. */
  compactTailTokens?: number;
  toolTimeoutMs?: number;
  /** Cap on one tool call's input in JSON bytes (default 1 MiB): larger calls get an is_error result. */
  maxToolInputBytes?: number;
  onStreamEvent?: (e: ModelStreamEvent) => void;
  /** The run's CLAUDE.md memory as the model gets it (from its `memory.loaded` record), or none. */
  memory?: string | null;
}

const aborted = (message = 'aborted'): ActorFailure => ({ kind: 'aborted', message });

/**
 * The side effects of a live run, performed by the chart's effects actor. Each writes its
 * facts to the log before the machine sees them, and commits before any effect leaves the
 * process (write-ahead): a request goes out, a tool runs, a hook runs.
 */
export function liveEffects(d: LiveDeps): EffectHandlers {
  const rec = <T extends RecordType>(type: T, data: RecordData<T>) =>
    d.writer.add({ type, run: d.runId, at: d.clock.now(), data } as DraftRecord);
  // Durations come from the injected clock too, so a virtual clock logs the same records every run.
  const elapsed = d.clock.monotonicNow ? d.clock.monotonicNow.bind(d.clock) : () => performance.now();

  /** One model request; the answer comes with the seq of its `model.responded` record. */
  async function call(
    request: ModelRequest,
    purpose: 'turn' | 'compaction',
    attempt: number,
  ): Promise<{ response: ModelResponse; seq: number }> {
    rec('model.requested', {
      purpose,
      model: request.model,
      maxTokens: request.maxTokens,
      messageCount: request.messages.length,
      attempt,
    });
    try {
      await d.writer.commit();
    } catch (e) {
      // Write-ahead: no request leaves before its log is durable. The records stay pending
      // (the next commit retries them); the run fails as a runtime error, not a model error.
      const message = `the log could not be written before the request: ${messageOf(e)}`;
      if (purpose === 'compaction')
        throw { kind: 'fatal', overloaded: false, message } satisfies ModelFailure;
      rec('actor.failed', { actor: 'callModel', message });
      throw { kind: 'failed', message } satisfies ActorFailure;
    }
    try {
      const response = await d.client.stream(request, { signal: d.signal, onEvent: d.onStreamEvent });
      const { seq } = rec('model.responded', { purpose, response });
      return { response, seq };
    } catch (e) {
      const failure = toFailure(e, d.signal);
      rec('model.failed', { purpose, failure });
      throw failure;
    }
  }

  /**
   * An effect whose unexpected failure (not an abort) is logged as `actor.failed` before the
   * machine sees it: runtime_error is then a recorded fact, and replay takes the same edge.
   */
  function guarded<O, I>(actor: string, run: (input: I) => Promise<O>) {
    return async (input: I): Promise<O> => {
      try {
        return await run(input);
      } catch (e) {
        if ((e as ActorFailure | undefined)?.kind === 'aborted') throw e;
        const message =
          e instanceof Error ? e.message : ((e as ActorFailure | undefined)?.message ?? String(e));
        rec('actor.failed', { actor, message });
        throw { kind: 'failed', message } satisfies ActorFailure;
      }
    };
  }

  return {
    buildQuery: guarded<BuiltQuery, BuildQueryInput>('buildQuery', async (input) => {
      if (d.signal.aborted) throw aborted();
      const request: ModelRequest = {
        model: input.model,
        system: input.system,
        messages: withMemory(input.messages, d.memory ?? null),
        tools: d.registry.specs(),
        maxTokens: input.maxTokens,
      };
      const last = input.messages.at(-1);
      const resumesBatch = last?.role === 'assistant' && toolUsesOf(last.content).length > 0;
      const compact = input.compact ? { compact: true as const } : {};
      const hooks = await d.hooks?.beforeFirstRequest(resumesBatch);
      if (!hooks) return { ...request, ...compact };
      if (d.signal.aborted) throw aborted('aborted during the prompt hooks');
      // Context goes into the history (the chart appends it) and so into this request.
      const messages =
        hooks.context !== undefined ? [...request.messages, userText(hooks.context)] : request.messages;
      return { ...request, messages, hooks, ...compact };
    }),

    callModel: async (input: CallModelInput) => (await call(input.request, 'turn', input.attempt)).response,

    runTools: guarded<ToolBatchResult, RunToolsInput>('runTools', async (input) => {
      // PreToolUse hooks and prompts are effects too: the response that asked for them is made durable first.
      if (d.toolHooks || d.askUser) await d.writer.commit();
      // The stop reason is read from the records as logged (redacted), as replay reads it.
      const stops: RecordData<'hook.decided'>[] = [];
      const unlisten = d.writer.onRecord((r) => {
        if (r.type === 'hook.decided' && r.data.decision === 'prevent' && r.run === d.runId)
          stops.push(r.data);
      });
      let batch: Awaited<ReturnType<typeof runToolBatch>>;
      try {
        batch = await runToolBatch(
          {
            registry: d.registry,
            toolUses: input.toolUses,
            signal: d.signal,
            cwd: d.cwd,
            run: d.run,
            session: {
              sessionId: d.writer.sessionId,
              fileRead: (path) => d.writer.state.filesRead[path],
            },
            canUseTool: d.canUseTool,
            askUser: d.askUser,
            approvals: {
              park: d.parkOnAsk,
              decision: (toolUseId) => {
                const answer = d.writer.state.approvals.get(toolUseId)?.decision;
                return answer ? { allow: answer.allow, by: answer.by, message: answer.message } : undefined;
              },
            },
            hooks: d.toolHooks,
            defaultTimeoutMs: d.toolTimeoutMs,
            maxInputBytes: d.maxToolInputBytes,
            now: elapsed,
            // A parked batch resumed: the calls that ran before it parked keep their logged results.
            ...(d.writer.state.unappendedResults.size > 0
              ? { answered: d.writer.state.unappendedResults }
              : {}),
          },
          {
            onPermission: (p) => rec('permission.decided', p),
            onHook: (h) => rec('hook.decided', h as RecordData<'hook.decided'>),
            beforeRun: async (calls) => {
              for (const c of calls) rec('tool.started', startedData(d.writer.state, c));
              // Write-ahead is for effects: the log must say which ones may have happened. Read-only
              // calls have none, so their batch is appended (a reader of the log sees it start) but
              // not waited for on disk — a crash while they run may leave a log ending at the
              // request, and resume asks the model again. One fdatasync a round instead of two.
              await d.writer.commit({ durable: calls.some((c) => !c.readOnly) });
            },
            onFinished: (r) =>
              rec('tool.finished', {
                toolUseId: r.toolUseId,
                name: r.name,
                index: r.index,
                outcome: r.outcome,
                result: r.result as RecordData<'tool.finished'>['result'],
                durationMs: Math.round(r.durationMs * 1000) / 1000,
                ...(r.filesRead ? { filesRead: r.filesRead } : {}),
                ...(r.synthetic ? { synthetic: true } : {}),
              }),
          },
        );
      } finally {
        unlisten();
      }
      const stopped = batch.stopped !== undefined ? (stopReasonOf(stops) ?? batch.stopped) : undefined;
      for (const p of batch.parked) rec('approval.requested', p);
      if (batch.parked.length > 0)
        return { results: [], aborted: false, appendedTokens: 0, parked: batch.parked };
      const usage = spentByTools(batch.reports);
      return {
        results: batch.results,
        aborted: batch.aborted,
        appendedTokens: estimateTokens(batch.results),
        ...(usage ? { usage } : {}),
        ...(stopped !== undefined ? { stopped } : {}),
      };
    }),

    compact: async (input: CompactInput): Promise<CompactOutput> => {
      // PreCompact hooks may refuse it (then no request goes out and nothing is compacted).
      const refused = await d.hooks?.preCompact(input.mode === 'manual' ? 'manual' : 'auto', '');
      if (refused) return refused;
      if (d.signal.aborted) throw aborted('aborted during the PreCompact hooks');
      // Before and after are measured as the trigger measures: the usage-based size of the context.
      // What of it the history estimate does not explain (system prompt, tool definitions) stays
      // after compaction; the history part becomes the estimate of the compacted history.
      const historyBefore = estimateHistoryTokens(input.messages);
      const tokensBefore = Math.max(input.contextTokens ?? 0, historyBefore);
      const fail = (error: string): never => {
        rec('compaction.finished', { ok: false, mode: input.mode, error });
        throw { kind: 'failed', message: `compaction failed: ${error}` } satisfies ActorFailure;
      };
      let answer: { response: ModelResponse; seq: number };
      try {
        answer = await call(
          compactionRequest(input.messages, input.model, d.compactionMaxTokens ?? 16_000, d.registry.specs()),
          'compaction',
          1,
        );
      } catch (e) {
        const f = e as ModelFailure;
        if (f.kind === 'aborted') throw aborted(f.message);
        return fail(f.message);
      }
      const { response } = answer;
      const summary = summaryText(response.content);
      if (!summary) return fail('the model returned an empty summary');
      const tailTokens = d.compactTailTokens ?? 8_000;
      const kept = keptTail(input.messages, tailTokens);
      const messages = compactedMessages(input.messages, summary, kept);
      const tokensAfter = tokensBefore - historyBefore + estimateHistoryTokens(messages);
      // The summary is in the response and the kept messages in the history: only where they come from is logged.
      rec('compaction.finished', {
        ok: true,
        mode: input.mode,
        response: answer.seq,
        kept,
        tailTokens,
        tokensBefore,
        tokensAfter,
      });
      const after = (await d.hooks?.afterCompact()) ?? {};
      return { messages, summary, tokensBefore, tokensAfter, usage: response.usage, ...after };
    },

    backoff: guarded<{ delayMs: number }, BackoffInput>('backoff', async (input) => {
      const delayMs = backoffDelay(
        input.attempt,
        d.random(),
        input.retryAfterMs,
        d.backoff ?? DEFAULT_BACKOFF,
      );
      rec('backoff.scheduled', {
        attempt: input.attempt,
        delayMs,
        ...(input.retryAfterMs !== undefined ? { retryAfterMs: input.retryAfterMs } : {}),
      });
      try {
        await d.clock.sleep(delayMs, d.signal);
      } catch (e) {
        // Only an abort is an abort; a clock failing otherwise is a runtime error.
        if (d.signal.aborted) throw aborted('aborted during backoff');
        throw e;
      }
      return { delayMs };
    }),

    stopChecks: guarded<StopDecision, StopChecksInput>('stopChecks', async (input) => {
      if (d.signal.aborted) throw aborted();
      if (d.budgetPolicy) {
        const b = d.budgetPolicy({
          usage: input.usage,
          turn: input.turn,
          continuations: input.budgetContinuations,
        });
        rec('hook.decided', {
          hook: 'Budget',
          decision: b ? 'continue' : 'allow',
          ...(b ? { reason: b.message } : {}),
          durationMs: 0,
        });
        if (b) return decideStop([{ hook: 'Budget', decision: 'continue', reason: b.message }]);
      }
      if (d.stopHooks.length === 0 && !d.hooks) return { decision: 'allow' };
      await d.writer.commit();
      const lastAssistantMessage = textOf(input.lastAssistant.content);
      const payload = {
        session_id: d.writer.sessionId,
        hook_event_name: 'Stop' as const,
        stop_hook_active: input.stopHookActive,
        last_assistant_message: lastAssistantMessage,
        cwd: d.cwd,
      };
      const answers: StopAnswer[] = [];
      for (const hook of d.stopHooks) {
        const t0 = elapsed();
        let res: StopHookResult;
        try {
          res = await hook.run(payload, d.signal);
        } catch (e) {
          res = { decision: 'error', reason: (e as Error).message };
        }
        if (d.signal.aborted) throw aborted('aborted during stop hooks');
        const reason = 'reason' in res ? res.reason : undefined;
        rec('hook.decided', {
          hook: 'Stop',
          decision: res.decision,
          ...(reason !== undefined ? { reason } : {}),
          command: hook.name,
          durationMs: Math.round(elapsed() - t0),
        });
        answers.push({ hook: 'Stop', decision: res.decision, reason });
        if (res.decision === 'prevent') return decideStop(answers);
      }
      if (d.hooks) {
        answers.push(...(await d.hooks.stop({ stopHookActive: input.stopHookActive, lastAssistantMessage })));
        if (d.signal.aborted) throw aborted('aborted during stop hooks');
      }
      return decideStop(answers);
    }),
  };
}

/** Any failure of a model call, as the classified fact the machine routes on. */
export function toFailure(e: unknown, signal: AbortSignal): ModelFailure {
  if (e instanceof ModelCallError) return e.failure;
  if (signal.aborted) return { kind: 'aborted', overloaded: false, message: 'aborted' };
  const message = messageOf(e);
  return { kind: 'fatal', overloaded: false, message };
}

/** What the batch's tools spent on models (sub-agents), or undefined when none did. */
function spentByTools(reports: readonly ToolCallReport[]): Usage | undefined {
  let total: Usage | undefined;
  for (const r of reports) if (r.usage) total = total ? addUsage(total, r.usage) : r.usage;
  return total;
}
