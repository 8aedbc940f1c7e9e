import type { ModelFailure } from './types.ts';
import { parsePromptTooLong } from './types.ts';

export interface HttpErrorFacts {
  status?: number;
  errorType?: string;
  message: string;
  retryAfterMs?: number;
}

/**
 * Classifies an API error by status and error type, the way the loop needs it: retryable
 * (408, 409, 429, 5xx, 529 / overloaded_error, or no status at all: a transport failure),
 * prompt too long (400 `prompt is too long: N tokens > M maximum`), or fatal.
 */
export function classifyHttpError(f: HttpErrorFacts): ModelFailure {
  const overloaded = f.status === 529 || f.errorType === 'overloaded_error';
  const base = {
    status: f.status,
    errorType: f.errorType,
    message: f.message,
    ...(f.retryAfterMs !== undefined ? { retryAfterMs: f.retryAfterMs } : {}),
  };
  const ptl = parsePromptTooLong(f.message);
  if (ptl && (f.status === 400 || f.status === undefined || f.errorType === 'invalid_request_error')) {
    return { ...base, kind: 'prompt_too_long', overloaded: false, ...ptl };
  }
  const s = f.status;
  const retryable =
    overloaded ||
    s === undefined ||
    s === 408 ||
    s === 409 ||
    s === 429 ||
    s >= 500 ||
    f.errorType === 'api_error' ||
    f.errorType === 'rate_limit_error';
  return { ...base, kind: retryable ? 'retryable' : 'fatal', overloaded };
}
