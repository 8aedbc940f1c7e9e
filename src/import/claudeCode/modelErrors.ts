import { type ModelFailure, parsePromptTooLong } from '../../model/types.ts';
import { done, failed } from '../chartWalk.ts';
import type { EventOf } from './events.ts';
import type { RunRecorder } from './runRecorder.ts';

/** How Claude Code's failed calls map onto the chart's error edges. */

const RETRYABLE_STATUS = (s: number | null) => s === null || s === 408 || s === 409 || s === 429 || s >= 500;

/** What the transcript says of an API error, as the failure the chart's guards read. */
function failureOf(e: EventOf<'apiError'>, kind: ModelFailure['kind']): ModelFailure {
  return {
    kind,
    overloaded: e.status === 529 || /overloaded/i.test(e.text),
    ...(e.status !== null ? { status: e.status } : {}),
    ...(e.errorType ? { errorType: e.errorType } : {}),
    message: e.text,
    ...(kind === 'prompt_too_long' ? parsePromptTooLong(e.text) : {}),
  };
}

export const isPromptTooLong = (e: EventOf<'apiError'>) => /prompt is too long/i.test(e.text);

/** `requesting → recovering → requesting`: the failure, the wait, then the same request again. */
export function recordRetry(out: RunRecorder, at: number, failure: ModelFailure, delayMs: number): void {
  out.rec('model.failed', at, { purpose: 'turn', failure });
  out.step(failed('callModel'), 'transport_retry', at);
  out.rec('backoff.scheduled', at, { attempt: out.open!.attempt, delayMs });
  out.step(done('backoff'), 'backoff_elapsed', at + delayMs);
  out.retried(at + delayMs);
}

/** An API error Claude Code tried again (another response or retry follows it). */
export function retriedApiError(out: RunRecorder, e: EventOf<'apiError'>, nextAt: number): void {
  recordRetry(out, e.at, failureOf(e, 'retryable'), Math.max(0, nextAt - e.at));
}

/** A retry line (`system` / `api_error`). */
export function retryLine(out: RunRecorder, e: EventOf<'apiRetry'>): void {
  const failure: ModelFailure = {
    kind: 'retryable',
    overloaded: e.status === 529 || /overload/i.test(e.message),
    ...(e.status !== null ? { status: e.status } : {}),
    message: e.message,
  };
  recordRetry(out, e.at, failure, e.retryInMs ?? 0);
}

/** A prompt-too-long error a compaction answered: reactive compaction. */
export function compactedApiError(out: RunRecorder, e: EventOf<'apiError'>): void {
  out.rec('model.failed', e.at, { purpose: 'turn', failure: failureOf(e, 'prompt_too_long') });
  out.step(failed('callModel'), 'compact_retry', e.at);
  out.open!.compactMode = 'reactive';
}

/** An API error nothing answered: the run ends failed, with the error's text. */
export function finalApiError(out: RunRecorder, e: EventOf<'apiError'>): void {
  const tooLong = isPromptTooLong(e);
  const kind = tooLong ? 'prompt_too_long' : RETRYABLE_STATUS(e.status) ? 'retryable' : 'fatal';
  out.rec('model.failed', e.at, { purpose: 'turn', failure: failureOf(e, kind) });
  const reason = tooLong ? 'prompt_too_long' : 'model_error';
  out.step(failed('callModel'), reason, e.at);
  out.endRun(e.at, 'failed', reason, e.text);
}
