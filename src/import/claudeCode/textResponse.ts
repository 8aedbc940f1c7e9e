import type { Message } from '../../model/messages.ts';
import { done, failed } from '../chartWalk.ts';
import type { EventOf, TranscriptEvent } from './events.ts';
import type { Round } from './round.ts';
import type { RunRecorder } from './runRecorder.ts';

/**
 * A response without tool_use, read with the line after it: interrupted while it streamed, or
 * what its stop reason says (older versions wrote it on the last chunk; newer ones write null,
 * and then it asks for the stop checks). Returns whether `next` was used up here (an interrupt).
 */
export function recordTextResponse(
  out: RunRecorder,
  round: Round,
  next: TranscriptEvent | null,
  compactionFollows: boolean,
): boolean {
  const response = round.response();
  const assistant: Message = { role: 'assistant', content: response.content };
  const at = round.lastAt;
  if (next?.kind === 'interrupt' && response.stopReason === null) {
    // Interrupted while it streamed: the call failed as aborted; Claude Code keeps the part it had.
    out.rec('abort.requested', next.at, { reason: 'interrupted by the user' });
    out.rec('model.failed', next.at, {
      purpose: 'turn',
      failure: {
        kind: 'aborted',
        overloaded: false,
        message: 'interrupted by the user while the response streamed',
      },
    });
    out.step(failed('callModel'), 'aborted', next.at);
    out.append(assistant, 'assistant', at);
    out.append(next.message, 'interrupted', next.at);
    out.endRun(next.at, 'aborted', 'aborted');
    return true;
  }
  out.rec('model.responded', at, { purpose: 'turn', response });
  out.responded(response.usage);
  const run = out.open!;
  switch (response.stopReason) {
    case 'refusal':
      out.step(done('callModel'), 'refused', at);
      out.append(assistant, 'assistant', at);
      out.endRun(at, 'failed', 'refused', 'the model refused');
      return false;
    case 'max_tokens':
      if (next?.kind === 'assistant' && !round.deferred.some((d) => d.kind === 'userMeta')) {
        out.step(done('callModel'), 'max_tokens_escalation', at);
        run.maxTokens = 64_000;
      } else if (next?.kind === 'assistant' && round.deferred.some((d) => d.kind === 'userMeta')) {
        // Claude Code's "resume where you stopped" message came between the two responses.
        const meta = round.deferred.find((d) => d.kind === 'userMeta') as EventOf<'userMeta'>;
        out.step(done('callModel'), 'max_tokens_recovery', at);
        out.append(assistant, 'assistant', at);
        out.append(meta.message, 'max_tokens_continue', meta.at);
        round.deferred.splice(round.deferred.indexOf(meta), 1);
      } else {
        out.step(done('callModel'), 'max_tokens_exhausted', at);
        out.append(assistant, 'assistant', at);
        out.endRun(at, 'failed', 'max_tokens_exhausted', 'the output was cut at max_tokens');
      }
      return false;
    case 'pause_turn':
      out.step(done('callModel'), 'pause_turn_continuation', at);
      out.append(assistant, 'assistant', at);
      return false;
    case 'model_context_window_exceeded':
      if (compactionFollows) {
        out.step(done('callModel'), 'compact_retry', at);
        run.compactMode = 'reactive';
      } else {
        out.step(done('callModel'), 'prompt_too_long', at);
        out.endRun(at, 'failed', 'prompt_too_long', 'the context window was exceeded');
      }
      return false;
    default:
      out.step(done('callModel'), 'finish_requested', at);
      out.append(assistant, 'assistant', at);
      run.stop = { summaries: [] };
      return false;
  }
}
