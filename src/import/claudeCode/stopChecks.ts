import { done, failed } from '../chartWalk.ts';
import type { TranscriptEvent } from './events.ts';
import type { RunRecorder } from './runRecorder.ts';

/**
 * The stop checks after a response without tool_use, decided by the line that comes next:
 * a `stop_hook_summary` is collected (or, if it prevented continuation, ends the run), a
 * block's feedback sends the run back to building, an interrupt aborts it; anything else means
 * every hook allowed the finish (or none ran). Returns whether the line was used up here.
 */
export function decideStop(out: RunRecorder, e: TranscriptEvent | null, fallbackAt: number): boolean {
  const run = out.open;
  if (!run?.stop) return false;
  const pending = run.stop;
  if (e?.kind === 'stopHookSummary') {
    pending.summaries.push({ commands: e.commands, durationMs: e.durationMs });
    if (!e.prevented) return true;
    run.stop = null;
    out.rec('hook.decided', e.at, {
      hook: 'Stop',
      decision: 'prevent',
      ...(e.stopReason ? { reason: e.stopReason } : {}),
      ...(e.commands.length ? { command: e.commands.join(' && ') } : {}),
      durationMs: e.durationMs,
    });
    out.step(done('stopChecks'), 'stop_hook_prevented', e.at);
    out.endRun(e.at, 'failed', 'stop_hook_prevented', e.stopReason ?? 'a stop hook prevented continuation');
    return true;
  }
  run.stop = null;
  const commands = pending.summaries.flatMap((s) => s.commands).join(' && ');
  const hook = (decision: 'allow' | 'block', at: number, reason?: string) =>
    out.rec('hook.decided', at, {
      hook: 'Stop',
      decision,
      ...(reason ? { reason } : {}),
      ...(commands ? { command: commands } : {}),
      durationMs: pending.summaries.reduce((n, s) => n + s.durationMs, 0),
    });
  if (e?.kind === 'stopFeedback') {
    hook('block', e.at, e.reason);
    out.step(done('stopChecks'), 'stop_hook_continuation', e.at);
    out.append(e.message, 'stop_hook_feedback', e.at);
    return true;
  }
  if (e?.kind === 'interrupt') {
    out.rec('abort.requested', e.at, { reason: 'interrupted by the user' });
    out.step(failed('stopChecks'), 'aborted', e.at);
    out.append(e.message, 'interrupted', e.at);
    out.endRun(e.at, 'aborted', 'aborted');
    return true;
  }
  const at = e?.at ?? fallbackAt;
  if (pending.summaries.length) hook('allow', at);
  out.step(done('stopChecks'), 'completed', at);
  out.endRun(at, 'completed', 'completed');
  return false;
}
