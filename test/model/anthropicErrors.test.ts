import {
  AnthropicError,
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
} from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { classifyError, redactSecrets, retryAfterMsOf } from '../../src/model/anthropicErrors.ts';
import { ModelCallError } from '../../src/model/types.ts';

const body = (type: string, message: string) => ({ type: 'error', error: { type, message } });

/** An HTTP error as the SDK builds it from a response (picks the status's subclass). */
function httpError(status: number, type: string, message: string, headers: Record<string, string> = {}) {
  return APIError.generate(status, body(type, message), undefined, new Headers(headers));
}

describe('classifyError: HTTP statuses', () => {
  it.each([408, 409, 429, 500, 502, 503, 504])('%i is retryable and not overloaded', (status) => {
    const f = classifyError(httpError(status, 'api_error', 'boom'));
    expect(f).toMatchObject({ kind: 'retryable', overloaded: false, status, message: 'boom' });
  });

  it('529 is retryable and overloaded', () => {
    expect(classifyError(httpError(529, 'overloaded_error', 'Overloaded'))).toEqual({
      kind: 'retryable',
      overloaded: true,
      status: 529,
      errorType: 'overloaded_error',
      message: 'Overloaded',
    });
  });

  it('overloaded_error under another status still counts as overloaded', () => {
    expect(classifyError(httpError(503, 'overloaded_error', 'Overloaded'))).toMatchObject({
      kind: 'retryable',
      overloaded: true,
    });
  });

  it.each([401, 403, 404, 413, 422])('%i is fatal with the API message', (status) => {
    const f = classifyError(httpError(status, 'some_error', `the API says ${status}`));
    expect(f).toEqual({
      kind: 'fatal',
      overloaded: false,
      status,
      errorType: 'some_error',
      message: `the API says ${status}`,
    });
  });

  it('400 prompt too long parses N and M', () => {
    const f = classifyError(
      httpError(400, 'invalid_request_error', 'prompt is too long: 210000 tokens > 200000 maximum'),
    );
    expect(f).toMatchObject({ kind: 'prompt_too_long', promptTokens: 210000, maxPromptTokens: 200000 });
  });

  it('400 prompt too long without numbers is still prompt_too_long', () => {
    const f = classifyError(httpError(400, 'invalid_request_error', 'Prompt is too long'));
    expect(f.kind).toBe('prompt_too_long');
    expect(f.promptTokens).toBeUndefined();
  });

  it('a plain 400 is fatal', () => {
    expect(classifyError(httpError(400, 'invalid_request_error', 'bad tools')).kind).toBe('fatal');
  });

  it('falls back to the SDK message when the body has none', () => {
    const err = APIError.generate(502, undefined as unknown as object, 'Bad Gateway', new Headers());
    const f = classifyError(err);
    expect(f.kind).toBe('retryable');
    expect(f.message).toContain('Bad Gateway');
  });
});

describe('classifyError: mid-stream and connection failures', () => {
  it('event: error overloaded (APIError without status) is retryable overloaded', () => {
    const err = new APIError(
      undefined,
      body('overloaded_error', 'Overloaded'),
      undefined,
      new Headers(),
      'overloaded_error',
    );
    expect(classifyError(err)).toEqual({
      kind: 'retryable',
      overloaded: true,
      errorType: 'overloaded_error',
      message: 'Overloaded',
    });
  });

  it('any other event: error is retryable', () => {
    const err = new APIError(undefined, body('api_error', 'oops'), undefined, new Headers(), 'api_error');
    expect(classifyError(err)).toMatchObject({
      kind: 'retryable',
      overloaded: false,
      errorType: 'api_error',
    });
  });

  it.each([
    ['APIConnectionError', new APIConnectionError({ cause: new TypeError('fetch failed') })],
    ['APIConnectionTimeoutError', new APIConnectionTimeoutError()],
    ['ECONNRESET', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })],
    ['undici terminated', new TypeError('terminated', { cause: new Error('other side closed') })],
    ['wrapped by MessageStream', new AnthropicError('terminated')],
    ['premature close', Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' })],
    [
      'stream ended early',
      new AnthropicError('stream ended without producing a Message with role=assistant'),
    ],
  ])('%s is retryable', (_name, err) => {
    const f = classifyError(err);
    expect(f.kind).toBe('retryable');
    expect(f.overloaded).toBe(false);
    expect(f.message).toMatch(/^connection failed: /);
  });

  it('finds a connection code deep in the cause chain', () => {
    const socket = Object.assign(new Error('socket'), { code: 'UND_ERR_SOCKET' });
    const err = new AnthropicError('stream failed');
    Object.assign(err, { cause: new TypeError('x', { cause: socket }) });
    expect(classifyError(err).kind).toBe('retryable');
  });

  it('a host that does not resolve (ENOTFOUND) is fatal and says to check the base URL; EAI_AGAIN retries', () => {
    const dns = Object.assign(new Error('getaddrinfo ENOTFOUND api.antrhopic.com'), { code: 'ENOTFOUND' });
    const err = new AnthropicError('Connection error.');
    Object.assign(err, { cause: new TypeError('fetch failed', { cause: dns }) });
    const f = classifyError(err);
    expect(f.kind).toBe('fatal');
    expect(f.message).toMatch(
      /cannot resolve the API host \(check ANTHROPIC_BASE_URL\): .*ENOTFOUND api\.antrhopic\.com/,
    );
    const busy = Object.assign(new Error('getaddrinfo EAI_AGAIN api.anthropic.com'), { code: 'EAI_AGAIN' });
    expect(classifyError(busy).kind).toBe('retryable');
  });

  it.each([
    ['a port fetch refuses (Fetch "bad port")', new Error('bad port'), /API URL cannot be used/],
    ['a scheme fetch cannot speak', new Error('unknown scheme'), /API URL cannot be used/],
    [
      'a reply that is not HTTP',
      Object.assign(new Error('Response does not match the HTTP/1.1 protocol'), {
        code: 'HPE_INVALID_CONSTANT',
      }),
      /did not answer in HTTP/,
    ],
    [
      'a URL that does not parse',
      Object.assign(new TypeError('Invalid URL'), { code: 'ERR_INVALID_URL' }),
      /API URL is not valid/,
    ],
  ])('%s can never succeed: fatal at once, naming ANTHROPIC_BASE_URL', (_name, cause, message) => {
    // The SDK's shape: APIConnectionError → TypeError('fetch failed') → the cause.
    const err = new APIConnectionError({ cause: new TypeError('fetch failed', { cause }) });
    const f = classifyError(err);
    expect(f.kind).toBe('fatal');
    expect(f.message).toMatch(message);
    expect(f.message).toContain('ANTHROPIC_BASE_URL');
  });

  it('an unknown error (a bug) is fatal', () => {
    expect(classifyError(new RangeError('index out of range'))).toEqual({
      kind: 'fatal',
      overloaded: false,
      message: 'index out of range',
    });
    expect(classifyError('weird').kind).toBe('fatal');
  });
});

describe('classifyError: aborts', () => {
  it('APIUserAbortError is aborted', () => {
    expect(classifyError(new APIUserAbortError()).kind).toBe('aborted');
  });

  it('an aborted signal wins over whatever was thrown', () => {
    const controller = new AbortController();
    controller.abort();
    expect(classifyError(httpError(529, 'overloaded_error', 'x'), controller.signal).kind).toBe('aborted');
    expect(classifyError(new TypeError('terminated'), controller.signal).kind).toBe('aborted');
  });

  it('a DOM AbortError is aborted', () => {
    expect(classifyError(new DOMException('This operation was aborted', 'AbortError')).kind).toBe('aborted');
  });

  it('a live signal does not make an error an abort', () => {
    expect(classifyError(httpError(500, 'api_error', 'x'), new AbortController().signal).kind).toBe(
      'retryable',
    );
  });
});

describe('classifyError: misc', () => {
  it('passes a ModelCallError through unchanged', () => {
    const failure = { kind: 'fatal' as const, overloaded: false, message: 'already classified' };
    expect(classifyError(new ModelCallError(failure))).toBe(failure);
  });

  it('never lets the key through', () => {
    const key = 'sk-ant-api03-abcdefGHIJKL_123';
    const f = classifyError(httpError(401, 'authentication_error', `invalid key ${key}`), undefined, [key]);
    expect(f.message).not.toContain(key);
    expect(f.message).toContain('invalid key');
    const custom = classifyError(new Error('header Bearer hunter2hunter2'), undefined, ['hunter2hunter2']);
    expect(custom.message).not.toContain('hunter2');
  });
});

describe('retryAfterMsOf', () => {
  const now = Date.parse('2030-01-01T00:00:00Z');

  it('reads retry-after in seconds', () => {
    expect(retryAfterMsOf(new Headers({ 'retry-after': '3' }))).toBe(3000);
    expect(retryAfterMsOf(new Headers({ 'retry-after': '0.5' }))).toBe(500);
  });

  it('prefers retry-after-ms', () => {
    expect(retryAfterMsOf(new Headers({ 'retry-after-ms': '250', 'retry-after': '3' }))).toBe(250);
  });

  it('reads an HTTP date relative to now, and a past date as 0', () => {
    const headers = new Headers({ 'retry-after': 'Tue, 01 Jan 2030 00:00:07 GMT' });
    expect(retryAfterMsOf(headers, now)).toBe(7000);
    expect(retryAfterMsOf(new Headers({ 'retry-after': 'Mon, 31 Dec 2029 23:59:00 GMT' }), now)).toBe(0);
  });

  it('ignores garbage, and falls back from bad retry-after-ms to retry-after', () => {
    expect(retryAfterMsOf(new Headers({ 'retry-after': 'soon' }))).toBeUndefined();
    expect(retryAfterMsOf(new Headers({ 'retry-after': '5 apples' }))).toBeUndefined();
    expect(retryAfterMsOf(new Headers({ 'retry-after': '-3' }))).toBeUndefined();
    expect(retryAfterMsOf(new Headers({ 'retry-after-ms': 'NaN', 'retry-after': '2' }))).toBe(2000);
    expect(retryAfterMsOf(new Headers())).toBeUndefined();
    expect(retryAfterMsOf(undefined)).toBeUndefined();
  });

  it('accepts a plain header record with any casing', () => {
    expect(retryAfterMsOf({ 'Retry-After': '4' })).toBe(4000);
  });

  it('reaches the failure of a retryable HTTP error', () => {
    const f = classifyError(httpError(429, 'rate_limit_error', 'slow down', { 'retry-after': '3' }));
    expect(f.retryAfterMs).toBe(3000);
  });
});

describe('redactSecrets', () => {
  it('scrubs key-shaped strings and bearer tokens without being told', () => {
    expect(redactSecrets('bad key sk-test-SECRET here')).toBe('bad key [REDACTED] here');
    expect(redactSecrets('Authorization: Bearer abc.def')).toBe('Authorization: Bearer [REDACTED]');
  });

  it('leaves ordinary text alone', () => {
    expect(redactSecrets('task-list and risk-free are fine')).toBe('task-list and risk-free are fine');
  });
});
