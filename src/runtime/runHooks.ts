import { afterCompactOutcome, preCompactOutcome, promptHooksOutcome } from '../hooks/folds.ts';
import type { HookRunner } from '../hooks/runner.ts';
import type { HookRecord } from '../hooks/types.ts';
import type { CompactRefused, PromptHooks } from '../machines/context.ts';
import type { StopAnswer } from '../machines/stopDecision.ts';

/**
 * The hooks one run fires outside its tool calls: SessionStart and UserPromptSubmit before its
 * first request, PreCompact before a compaction and SessionStart (source `compact`) after one,
 * Stop (SubagentStop in a sub-agent) when the model wants to finish. Each answer is logged
 * (`hook.decided`) before anything acts on it, and what the chart does next is decided from
 * those records alone (src/hooks/folds.ts): replay folds the same records the same way.
 */
export interface RunHooks {
  /**
   * At each build until it has run: SessionStart and UserPromptSubmit (not while the build
   * resumes a parked batch: the history must get its tool results first). Undefined when no
   * hook ran.
   */
  beforeFirstRequest(resumesBatch: boolean): Promise<PromptHooks | undefined>;
  preCompact(trigger: 'auto' | 'manual', instructions: string): Promise<CompactRefused | undefined>;
  afterCompact(): Promise<{ hookContext?: string; hookStopped?: string }>;
  stop(input: { stopHookActive: boolean; lastAssistantMessage: string }): Promise<StopAnswer[]>;
}

/** What a run owes its prompt hooks, decided when the run starts. */
export interface PendingPromptHooks {
  /** SessionStart's source, when this is the first run of the session object. */
  sessionStart: 'startup' | 'resume' | null;
  /** The run's new prompt (UserPromptSubmit); null for a run that continues the history. */
  prompt: string | null;
  model: string;
}

export interface RunHooksDeps {
  runner: HookRunner;
  rec: (record: HookRecord) => void;
  /** Write-ahead: the log is durable before a hook (an effect) runs. */
  commit: () => Promise<void>;
  signal: AbortSignal;
  pending: PendingPromptHooks;
  /** Inside a sub-agent: its agent name and log, for SubagentStop. */
  agent?: { id: string; type: string; transcriptPath: string };
}

export function runHooks(d: RunHooksDeps): RunHooks {
  const { runner, signal } = d;
  let pending: PendingPromptHooks | null = d.pending;
  const fire = async (event: Parameters<HookRunner['run']>[0], fields: Record<string, unknown>) => {
    if (!runner.has(event)) return [];
    await d.commit();
    const runs = await runner.run(event, fields, { signal });
    const records = runs.map((r) => r.record);
    for (const r of records) d.rec(r);
    return records;
  };
  return {
    async beforeFirstRequest(resumesBatch) {
      if (!pending || resumesBatch) return undefined;
      const { sessionStart, prompt, model } = pending;
      pending = null;
      const records: HookRecord[] = [];
      if (sessionStart) records.push(...(await fire('SessionStart', { source: sessionStart, model })));
      const started = promptHooksOutcome(records);
      if (prompt !== null && started.stopped === undefined)
        records.push(...(await fire('UserPromptSubmit', { prompt })));
      return records.length ? promptHooksOutcome(records) : undefined;
    },
    async preCompact(trigger, instructions) {
      const o = preCompactOutcome(await fire('PreCompact', { trigger, custom_instructions: instructions }));
      if (o.stopped !== undefined) return { refused: 'stopped', reason: o.stopped };
      if (o.blocked !== undefined) return { refused: 'blocked', reason: o.blocked };
      return undefined;
    },
    async afterCompact() {
      const o = afterCompactOutcome(
        await fire('SessionStart', { source: 'compact', model: d.pending.model }),
      );
      return {
        ...(o.context !== undefined ? { hookContext: o.context } : {}),
        ...(o.stopped !== undefined ? { hookStopped: o.stopped } : {}),
      };
    },
    async stop({ stopHookActive, lastAssistantMessage }) {
      const a = d.agent;
      const records = await fire(a ? 'SubagentStop' : 'Stop', {
        stop_hook_active: stopHookActive,
        last_assistant_message: lastAssistantMessage,
        ...(a ? { agent_id: a.id, agent_type: a.type, agent_transcript_path: a.transcriptPath } : {}),
      });
      return records.map((r) => ({
        hook: a ? ('SubagentStop' as const) : ('Stop' as const),
        decision: r.decision,
        ...(r.reason !== undefined ? { reason: r.reason } : {}),
      }));
    },
  };
}
