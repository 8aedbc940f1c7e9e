import { TASK_TOOL_NAME } from '../agents/definition.ts';
import { toolUsesOf } from '../model/messages.ts';
import type { RecordData } from '../store/records.ts';
import type { SessionState } from '../store/sessionState.ts';

export interface InterruptedRunPlan {
  runId: string;
  state: string;
  inFlight: string[];
  /** Synthetic results to log for tool_use blocks left without one. */
  finished: RecordData<'tool.finished'>[];
  /** Results already in the log whose history append was lost. */
  logged: { index: number; toolUseId: string; result: RecordData<'tool.finished'>['result'] }[];
  /** Read-only tools that were in flight: safe to run again instead of reporting "interrupted". */
  rerun: { toolUseId: string; name: string; input: unknown; index: number }[];
  /** `Task` calls that were in flight: their children are resumed from their own logs. */
  children: {
    toolUseId: string;
    input: unknown;
    index: number;
    child: { session: string; agent: string } | null;
  }[];
}

/**
 * What resume must do for a run whose process died: which effects may have happened (in
 * flight), and which tool_use blocks need a tool_result so the history is valid again.
 */
export function planInterruptedRun(
  state: SessionState,
  { subAgents = false }: { subAgents?: boolean } = {},
): InterruptedRunPlan | null {
  const run = state.currentRun;
  if (!run) return null;
  const inFlight: string[] = [];
  if (state.modelInFlight) inFlight.push('model request');
  const last = state.messages.last();
  const uses = last?.role === 'assistant' ? toolUsesOf(last.content) : [];
  const finished: InterruptedRunPlan['finished'] = [];
  const logged: InterruptedRunPlan['logged'] = [];
  const rerun: InterruptedRunPlan['rerun'] = [];
  const children: InterruptedRunPlan['children'] = [];
  uses.forEach((use, index) => {
    const done = state.unappendedResults.get(use.id);
    if (done) {
      // It finished and its result is in the log; only the history append was lost.
      logged.push({ index, toolUseId: use.id, result: done as RecordData<'tool.finished'>['result'] });
      return;
    }
    const flying = state.toolsInFlight.get(use.id);
    if (flying && subAgents && (flying.child || use.name === TASK_TOOL_NAME)) {
      inFlight.push(`sub-agent ${flying.child?.session ?? '(not started)'} (${use.id}): resumed`);
      children.push({ toolUseId: use.id, input: flying.input, index, child: flying.child ?? null });
      return;
    }
    if (flying) inFlight.push(`tool ${use.name} (${use.id})${flying.readOnly ? ', read-only: re-run' : ''}`);
    if (flying?.readOnly) {
      rerun.push({ toolUseId: use.id, name: use.name, input: flying.input, index });
      return;
    }
    finished.push({
      toolUseId: use.id,
      name: use.name,
      index,
      outcome: 'interrupted',
      result: {
        content: flying
          ? `[interrupted] ${use.name} was running when the process stopped; it may or may not have taken effect. Check before repeating it.`
          : `[interrupted] ${use.name} was not run: the process stopped first.`,
        isError: true,
      },
      durationMs: 0,
      synthetic: true,
    });
  });
  return { runId: run.id, state: run.state, inFlight, finished, logged, rerun, children };
}
