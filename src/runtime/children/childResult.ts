import { textOf } from '../../model/messages.ts';
import type { RecordData, RunStatus } from '../../store/records.ts';
import type { SessionState } from '../../store/sessionState.ts';
import type { ToolOutput } from '../../tools/types.ts';

/** How a child's last run ended (from its RunResult, or from its log when it had already ended). */
export interface ChildEnd {
  status: RunStatus;
  reason: string;
  error?: string;
}

/** The child's last run as its log says it ended, or null when it never ended one. */
export function lastEnd(state: SessionState): ChildEnd | null {
  const run = state.runs.last();
  if (!run || run.status === 'running' || run.reason === null) return null;
  return { status: run.status, reason: run.reason };
}

/**
 * What the parent logs in `child.finished`: the end of the child's last run, the turns of all
 * its runs (a resumed child has an interrupted one before it) and every model call it made.
 */
export function childFinished(
  toolUseId: string,
  child: string,
  state: SessionState,
  end: ChildEnd,
): RecordData<'child.finished'> {
  let turns = 0;
  for (const r of state.runs.view()) turns += r.turns;
  return {
    toolUseId,
    child,
    status: end.status,
    reason: end.reason,
    turns,
    usage: state.usage,
    ...(end.error ? { error: end.error } : {}),
  };
}

/**
 * The `Task` result: the child's last assistant text. A child that did not complete is an
 * is_error result that says how it ended (and what it last said, if anything).
 */
export function taskOutput(agent: string, child: string, state: SessionState, end: ChildEnd): ToolOutput {
  const text = lastAssistantText(state);
  const usage = state.usage;
  if (end.status === 'completed') {
    return { content: text || `(the ${agent} agent finished without a final message)`, usage };
  }
  const head = `[sub-agent ${agent} ${end.status}: ${end.reason}] session ${child}${end.error ? `: ${end.error}` : ''}`;
  return {
    content: text ? `${head}\nIts last message:\n${text}` : head,
    isError: true,
    usage,
  };
}

function lastAssistantText(state: SessionState): string {
  const messages = state.messages.view();
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === 'assistant') {
      const t = textOf(m.content).trim();
      if (t) return t;
    }
  }
  return '';
}
