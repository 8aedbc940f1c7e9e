import { APIConnectionError, APIError, APIUserAbortError } from '@anthropic-ai/sdk';
import { abortedFailure, ModelCallError, type ModelFailure, parsePromptTooLong } from './types.ts';

/**
 * Turns whatever the SDK (or the socket under it) threw into the classification the
 * statechart routes on. The SDK runs with `maxRetries: 0`, so every transient failure
 * reaches us and must come out `retryable`, or the loop would give up on a blip.
 */

const RETRYABLE_STATUS = new Set([408, 409, 429]);

// Node / undici spellings of "the connection went away" (codes live on the error or its causes).
const CONNECTION_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ERR_STREAM_PREMATURE_CLOSE',
]);
const CONNECTION_MESSAGE =
  /terminated|premature close|socket hang up|other side closed|connection (?:error|reset|closed)|timed? ?out|fetch failed|stream ended without producing|request ended without sending/i;

type HeaderSource = { get(name: string): string | null } | Record<string, string | undefined>;

function header(headers: HeaderSource | undefined | null, name: string): string | undefined {
  if (!headers) return undefined;
  if (typeof headers.get === 'function')
    return (headers as { get(n: string): string | null }).get(name) ?? undefined;
  const record = headers as Record<string, string | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : record[key];
}

/**
 * Delay the server asked for: `retry-after-ms` (milliseconds) first, then `retry-after`
 * (seconds or an HTTP date). Anything unparseable is ignored rather than guessed at.
 */
export function retryAfterMsOf(
  headers: HeaderSource | undefined | null,
  now = Date.now(),
): number | undefined {
  const ms = header(headers, 'retry-after-ms')?.trim();
  if (ms && /^\d+(?:\.\d+)?$/.test(ms)) return Number(ms);
  const after = header(headers, 'retry-after')?.trim();
  if (!after) return undefined;
  if (/^\d+(?:\.\d+)?$/.test(after)) return Number(after) * 1000;
  // Only real HTTP dates: Date.parse also accepts fragments like "5 apples" → some year 2001.
  if (!/^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(after)) return undefined;
  const at = Date.parse(after);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

// Keys must never reach a log, even when a proxy echoes them back in an error body.
const KEY_PATTERN = /\b(?:sk-ant-|sk-)[A-Za-z0-9_-]{4,}/g;

export function redactSecrets(message: string, secrets: readonly (string | undefined)[] = []): string {
  let out = message;
  for (const secret of secrets) if (secret && secret.length >= 4) out = out.split(secret).join('[REDACTED]');
  return out.replace(KEY_PATTERN, '[REDACTED]').replace(/(Bearer\s+)\S+/gi, '$1[REDACTED]');
}

function causes(err: unknown): unknown[] {
  const chain: unknown[] = [];
  let cur: unknown = err;
  while (cur && chain.length < 8 && !chain.includes(cur)) {
    chain.push(cur);
    cur = typeof cur === 'object' ? (cur as { cause?: unknown }).cause : undefined;
  }
  return chain;
}

function describe(err: unknown): string {
  return causes(err)
    .map((e) => (e instanceof Error ? e.message : typeof e === 'string' ? e : ''))
    .filter((m, i, all) => m !== '' && all.indexOf(m) === i)
    .join(': ');
}

function isConnectionFailure(err: unknown): boolean {
  return causes(err).some((e) => {
    if (e instanceof APIConnectionError) return true;
    const code = typeof e === 'object' && e !== null ? (e as { code?: unknown }).code : undefined;
    if (typeof code === 'string' && CONNECTION_CODES.has(code)) return true;
    return e instanceof Error && CONNECTION_MESSAGE.test(e.message);
  });
}

/**
 * Failures no retry can fix: a URL that does not parse or has a scheme fetch cannot speak, a
 * port fetch refuses to use (the "bad ports" of the Fetch standard), a reply that is not HTTP.
 * Retrying them with backoff would only hide the cause for minutes.
 */
const HOPELESS_MESSAGE = /^(?:bad port|unknown scheme|invalid url)$/i;

function hopeless(err: unknown): string | undefined {
  for (const e of causes(err)) {
    if (typeof e !== 'object' || e === null) continue;
    const code = (e as { code?: unknown }).code;
    if (code === 'ERR_INVALID_URL') return 'the API URL is not valid (check ANTHROPIC_BASE_URL)';
    if (typeof code === 'string' && code.startsWith('HPE_'))
      return 'the server did not answer in HTTP (check ANTHROPIC_BASE_URL)';
    if (e instanceof Error && HOPELESS_MESSAGE.test(e.message.trim()))
      return `the API URL cannot be used (check ANTHROPIC_BASE_URL)`;
  }
  return undefined;
}

function unknownHost(err: unknown): boolean {
  return causes(err).some(
    (e) => typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 'ENOTFOUND',
  );
}

function isAbort(err: unknown, signal: AbortSignal | undefined): boolean {
  if (signal?.aborted) return true;
  return causes(err).some(
    (e) => e instanceof APIUserAbortError || (e instanceof Error && e.name === 'AbortError'),
  );
}

function fromApiError(err: APIError): ModelFailure {
  const body = err.error as { error?: { message?: unknown; type?: unknown } } | undefined;
  const apiMessage = err.apiMessage ?? (typeof body?.error?.message === 'string' ? body.error.message : null);
  const errorType = err.type ?? (typeof body?.error?.type === 'string' ? body.error.type : undefined);
  const status = err.status;
  const overloaded = status === 529 || errorType === 'overloaded_error';
  const message = apiMessage ?? err.message;
  const base = {
    overloaded,
    message,
    ...(status !== undefined ? { status } : {}),
    ...(errorType ? { errorType } : {}),
  };
  const retryAfterMs = retryAfterMsOf(err.headers);
  const retry = retryAfterMs === undefined ? {} : { retryAfterMs };

  // No status on an APIError that is not a connection error = an `event: error` inside a
  // 200 stream: the server failed mid-answer, which is as transient as a 5xx.
  if (status === undefined) return { kind: 'retryable', ...base, ...retry };
  if (status === 400) {
    const tooLong = parsePromptTooLong(message);
    if (tooLong) return { kind: 'prompt_too_long', ...base, ...tooLong };
  }
  if (overloaded || RETRYABLE_STATUS.has(status) || status >= 500) {
    return { kind: 'retryable', ...base, ...retry };
  }
  return { kind: 'fatal', ...base };
}

/**
 * Classifies a failed model call. `secrets` (the API key) are scrubbed from the message;
 * well-known key shapes are scrubbed even when not passed.
 */
export function classifyError(
  err: unknown,
  signal?: AbortSignal,
  secrets: readonly (string | undefined)[] = [],
): ModelFailure {
  if (err instanceof ModelCallError) return err.failure;
  let failure: ModelFailure;
  if (isAbort(err, signal)) {
    failure = abortedFailure();
  } else if (err instanceof APIError && !(err instanceof APIConnectionError)) {
    failure = fromApiError(err);
  } else if (hopeless(err)) {
    failure = { kind: 'fatal', overloaded: false, message: `${hopeless(err)}: ${describe(err)}` };
  } else if (unknownHost(err)) {
    // The name does not resolve: a wrong ANTHROPIC_BASE_URL, not a blip. Retrying it ten times
    // with backoff (minutes) would only hide the cause. EAI_AGAIN (resolver busy) stays retryable.
    failure = {
      kind: 'fatal',
      overloaded: false,
      message: `cannot resolve the API host (check ANTHROPIC_BASE_URL): ${describe(err)}`,
    };
  } else if (isConnectionFailure(err)) {
    failure = { kind: 'retryable', overloaded: false, message: `connection failed: ${describe(err)}` };
  } else {
    failure = { kind: 'fatal', overloaded: false, message: describe(err) || String(err) };
  }
  return { ...failure, message: redactSecrets(failure.message, secrets) };
}
