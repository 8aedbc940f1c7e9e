import type { ContentBlock, Message, ToolResultBlock, ToolUseBlock } from '../../model/messages.ts';
import { done } from '../chartWalk.ts';
import type { Round } from './round.ts';
import type { PendingTools, RunRecorder } from './runRecorder.ts';
import { isReadOnlyTool, isRejection, outcomeOf, rejectionMessage } from './toolOutcome.ts';

/**
 * The records of a tool batch: which calls ran (or were refused) and what they returned. The
 * mapper decides how the batch ends; these write it.
 */

/** tool.started (or permission.decided for a call the person refused), then tool.finished for every result. */
export function recordToolCalls(
  out: RunRecorder,
  round: Round,
  uses: ToolUseBlock[],
): { index: number; block: ToolResultBlock }[] {
  const answered: { index: number; block: ToolResultBlock }[] = [];
  uses.forEach((use, index) => {
    const result = round.results.get(use.id);
    if (result && isRejection(result.block)) {
      out.rec('permission.decided', result.at, {
        toolUseId: use.id,
        name: use.name,
        decision: 'ask',
        resolved: 'deny',
        by: 'user',
        message: rejectionMessage(result.block),
      });
      return;
    }
    out.rec('tool.started', round.toolAt.get(use.id) ?? round.at, {
      toolUseId: use.id,
      name: use.name,
      input: use.input,
      index,
      readOnly: isReadOnlyTool(use.name),
    });
  });
  uses.forEach((use, index) => {
    const result = round.results.get(use.id);
    if (!result) return;
    const started = round.toolAt.get(use.id) ?? round.at;
    out.rec('tool.finished', result.at, {
      toolUseId: use.id,
      name: use.name,
      index,
      outcome: outcomeOf(result.block),
      result: { content: result.block.content, isError: result.block.is_error === true },
      durationMs: Math.max(0, result.at - started),
    });
    answered.push({ index, block: result.block });
  });
  return answered;
}

/** A call the transcript has no result for: marked synthetic, as resume marks one. */
function syntheticResult(out: RunRecorder, use: ToolUseBlock, index: number, at: number): ToolResultBlock {
  const result = { content: `[interrupted] ${use.name} has no result in the transcript.`, isError: true };
  out.rec('tool.finished', at, {
    toolUseId: use.id,
    name: use.name,
    index,
    outcome: 'interrupted',
    result,
    durationMs: 0,
    synthetic: true,
  });
  return { type: 'tool_result', tool_use_id: use.id, content: result.content, is_error: true };
}

/** Results in call order: the ones logged, an "interrupted" one for each call without, then the other blocks. */
export function resultBlocks(out: RunRecorder, pending: PendingTools, at: number): ContentBlock[] {
  const answered = new Set(pending.answered.map((a) => a.block.tool_use_id));
  const blocks = [...pending.answered];
  pending.uses.forEach((use, index) => {
    if (!answered.has(use.id)) blocks.push({ index, block: syntheticResult(out, use, index, at) });
  });
  blocks.sort((a, b) => a.index - b.index);
  return [...blocks.map((b) => b.block), ...pending.extra];
}

/** The edge out of dispatchingTools, then the results appended (the order the runtime logs them in). */
export function endToolBatch(
  out: RunRecorder,
  pending: PendingTools,
  at: number,
  reason: 'aborted' | 'auto_compact' | 'tool_result_continuation',
): void {
  const run = out.open!;
  run.pendingTools = null;
  const message: Message = { role: 'user', content: resultBlocks(out, pending, at) };
  out.step(done('runTools'), reason, at);
  out.append(message, 'tool_results', at);
  if (reason === 'auto_compact') run.compactMode = 'auto';
}
