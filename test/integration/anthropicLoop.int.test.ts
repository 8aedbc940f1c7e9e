/**
 * The real SDK through the real runtime: a Session whose model is the AnthropicModelClient
 * (streaming, maxRetries 0) pointed at the loopback Messages server, a virtual clock (backoffs
 * take no time but are remembered), a memory store and real tools. Each test scripts the
 * server, runs one `submit`, then checks what went over the wire (request bodies) and what
 * the log says (the transition reasons, the facts).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MAX_TOKENS_CONTINUE_TEXT } from '../../src/machines/loopMessages.ts';
import { AnthropicModelClient } from '../../src/model/anthropic.ts';
import { COMPACTION_MARKER } from '../../src/model/scripted.ts';
import { COMPACTION_SYSTEM, SUMMARY_PREFIX } from '../../src/runtime/compactor.ts';
import { DEFAULT_SYSTEM_PROMPT } from '../../src/runtime/config.ts';
import { counterIds, seededRandom, VirtualClock } from '../../src/runtime/determinism.ts';
import { Session, type SessionOptions } from '../../src/runtime/session.ts';
import { MemoryEventStore } from '../../src/store/memoryStore.ts';
import type { LogRecord, RecordOf } from '../../src/store/records.ts';
import { builtinTools } from '../../src/tools/builtin/index.ts';
import { echoTool, fixedStopHook } from '../support/harness.ts';
import { readLog } from '../support/logRecords.ts';
import {
  httpError,
  type MessagesServer,
  type RecordedRequest,
  startMessagesServer,
  textReply,
  toolUseReply,
} from '../support/messagesServer.ts';

const KEY = 'sk-ant-test-LOOPBACK-KEY-0123456789';
const MODEL = 'claude-sonnet-4-6';

let server: MessagesServer;
let workdir: string;

beforeAll(async () => {
  server = await startMessagesServer({ apiKey: KEY });
});
afterAll(async () => {
  await server.close();
});
beforeEach(async () => {
  workdir = await mkdtemp(path.join(tmpdir(), 'reloop-anthropic-loop-'));
});
afterEach(async () => {
  // Every scripted reply must have been asked for: an under-consuming loop is a failure too.
  const left = server.pending();
  server.requests.length = 0;
  await rm(workdir, { recursive: true, force: true });
  expect(left, 'replies left unconsumed on the server').toBe(0);
});

/** A live session on the real SDK against the loopback server. */
async function liveSession(extra: Partial<SessionOptions> & { apiKey?: string } = {}) {
  const { apiKey = KEY, ...options } = extra;
  const store = new MemoryEventStore();
  const clock = new VirtualClock();
  const model = new AnthropicModelClient({ apiKey, baseURL: server.url });
  const session = await Session.create({
    store,
    model,
    clock,
    random: seededRandom(7),
    ids: counterIds(),
    cwd: workdir,
    tools: [echoTool, ...builtinTools()],
    settings: { model: MODEL },
    ...options,
  });
  const records = (): Promise<LogRecord[]> => readLog(store, session.id);
  const reasons = async () =>
    (await records())
      .filter((r) => r.type === 'transition')
      .map((r) => (r.data as { reason: string }).reason);
  const ofType = async <T extends LogRecord['type']>(type: T) =>
    (await records()).filter((r): r is RecordOf<T> => r.type === type);
  return { session, store, clock, records, reasons, ofType };
}

const bodyOf = (i: number): RecordedRequest['body'] => {
  const r = server.requests[i];
  if (!r) throw new Error(`no request #${i} (only ${server.requests.length} were sent)`);
  return r.body;
};

describe('the query loop on the real Anthropic SDK (loopback Messages API)', () => {
  it('streams a tool_use (input_json_delta), runs the tool, and sends its tool_result in the next request', async () => {
    await mkdir(path.join(workdir, 'src'));
    await writeFile(path.join(workdir, 'src', 'answer.txt'), 'the answer is 42\n');
    const h = await liveSession();
    // chunkSize 3: the tool input arrives as many input_json_delta fragments the SDK must join.
    server.enqueue(
      toolUseReply(
        'Read',
        { file_path: 'src/answer.txt' },
        { toolUseId: 'toolu_read_1', text: 'Reading it.', chunkSize: 3 },
      ),
      textReply('The file says the answer is 42.'),
    );

    const res = await h.session.submit('What does src/answer.txt say?');

    expect(res).toMatchObject({ status: 'completed', reason: 'completed', turns: 2 });
    expect(await h.reasons()).toEqual([
      'query_built',
      'tool_use_requested',
      'tool_result_continuation',
      'query_built',
      'finish_requested',
      'completed',
    ]);
    expect(server.requests).toHaveLength(2);

    const first = bodyOf(0);
    expect(first).toMatchObject({
      model: MODEL,
      stream: true,
      max_tokens: 8192,
      system: DEFAULT_SYSTEM_PROMPT,
    });
    expect(first.messages).toEqual([{ role: 'user', content: 'What does src/answer.txt say?' }]);
    expect(first.tools?.map((t) => t.name)).toEqual([
      'echo',
      'Read',
      'Write',
      'Edit',
      'Bash',
      'BashOutput',
      'KillShell',
      'Glob',
      'Grep',
      'TodoWrite',
      'WebFetch',
    ]);
    expect(first.tools?.find((t) => t.name === 'Read')?.input_schema).toMatchObject({ type: 'object' });

    // The tool ran with the input the deltas spelled out: the response holds it, and tool.started
    // (schema v2) refers to it instead of copying it.
    const started = await h.ofType('tool.started');
    expect(started.map((r) => r.data)).toEqual([
      expect.objectContaining({ name: 'Read', toolUseId: 'toolu_read_1' }),
    ]);
    expect(started[0]?.data).not.toHaveProperty('input');
    expect(h.session.state.messages.at(1)?.content).toContainEqual(
      expect.objectContaining({
        type: 'tool_use',
        id: 'toolu_read_1',
        input: { file_path: 'src/answer.txt' },
      }),
    );

    const second = bodyOf(1);
    expect(second.messages).toHaveLength(3);
    expect(second.messages?.[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Reading it.' },
        { type: 'tool_use', id: 'toolu_read_1', name: 'Read', input: { file_path: 'src/answer.txt' } },
      ],
    });
    const resultMsg = second.messages?.[2] as { role: string; content: Record<string, unknown>[] };
    expect(resultMsg.role).toBe('user');
    expect(resultMsg.content).toHaveLength(1);
    expect(resultMsg.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_read_1' });
    expect(resultMsg.content[0]?.is_error).toBeUndefined();
    expect(JSON.stringify(resultMsg.content[0]?.content)).toContain('the answer is 42');
  });

  it('529 twice then success: two transport_retry edges, three HTTP requests (the SDK retries nothing)', async () => {
    const h = await liveSession();
    server.enqueue(
      httpError(529, 'overloaded_error', 'Overloaded'),
      httpError(529, 'overloaded_error', 'Overloaded'),
      textReply('Finally.'),
    );

    const res = await h.session.submit('hi');

    expect(res).toMatchObject({ status: 'completed', reason: 'completed' });
    expect(server.requests).toHaveLength(3);
    expect(await h.reasons()).toEqual([
      'query_built',
      'transport_retry',
      'backoff_elapsed',
      'transport_retry',
      'backoff_elapsed',
      'finish_requested',
      'completed',
    ]);
    const failed = await h.ofType('model.failed');
    expect(failed.map((r) => r.data.failure)).toEqual([
      expect.objectContaining({
        kind: 'retryable',
        status: 529,
        overloaded: true,
        errorType: 'overloaded_error',
      }),
      expect.objectContaining({
        kind: 'retryable',
        status: 529,
        overloaded: true,
        errorType: 'overloaded_error',
      }),
    ]);
    expect((await h.ofType('model.requested')).map((r) => r.data.attempt)).toEqual([1, 2, 3]);
    // 500 ms · 2^(n−1) ± 25 %, slept on the virtual clock.
    expect(h.clock.sleeps).toHaveLength(2);
    expect(h.clock.sleeps[0]).toBeGreaterThanOrEqual(375);
    expect(h.clock.sleeps[0]).toBeLessThanOrEqual(625);
    expect(h.clock.sleeps[1]).toBeGreaterThanOrEqual(750);
    expect(h.clock.sleeps[1]).toBeLessThanOrEqual(1250);
    expect((await h.ofType('backoff.scheduled')).map((r) => r.data.delayMs)).toEqual(h.clock.sleeps);
    // The same request went out three times.
    expect(bodyOf(1)).toEqual(bodyOf(0));
    expect(bodyOf(2)).toEqual(bodyOf(0));
  });

  it('429 with retry-after: 2 sleeps exactly 2000 ms on the clock', async () => {
    const h = await liveSession();
    server.enqueue(
      httpError(429, 'rate_limit_error', 'Number of request tokens has exceeded your rate limit', {
        'retry-after': '2',
      }),
      textReply('ok'),
    );

    const res = await h.session.submit('hi');

    expect(res.status).toBe('completed');
    expect(server.requests).toHaveLength(2);
    expect(h.clock.sleeps).toEqual([2000]);
    expect((await h.ofType('backoff.scheduled')).map((r) => r.data)).toEqual([
      { attempt: 1, delayMs: 2000, retryAfterMs: 2000 },
    ]);
    expect((await h.ofType('model.failed'))[0]?.data.failure).toMatchObject({
      kind: 'retryable',
      status: 429,
      retryAfterMs: 2000,
    });
    expect(await h.reasons()).toEqual([
      'query_built',
      'transport_retry',
      'backoff_elapsed',
      'finish_requested',
      'completed',
    ]);
  });

  it('a connection dropped mid-stream is retried; the partial answer never reaches the history', async () => {
    const h = await liveSession();
    server.enqueue(
      { kind: 'drop', afterEvents: 4, partial: textReply('This half-sentence is lost', { chunkSize: 4 }) },
      textReply('Whole answer.'),
    );

    const res = await h.session.submit('hi');

    expect(res).toMatchObject({ status: 'completed', reason: 'completed' });
    expect(server.requests).toHaveLength(2);
    expect(await h.reasons()).toEqual([
      'query_built',
      'transport_retry',
      'backoff_elapsed',
      'finish_requested',
      'completed',
    ]);
    const failure = (await h.ofType('model.failed'))[0]?.data.failure;
    expect(failure).toMatchObject({ kind: 'retryable', overloaded: false });
    expect(failure?.status).toBeUndefined();
    expect(h.session.state.messages.view()).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: [{ type: 'text', text: 'Whole answer.' }] },
    ]);
    expect(bodyOf(1).messages).toEqual([{ role: 'user', content: 'hi' }]);
  });

  it('an overloaded error event inside a 200 stream is a transport_retry too', async () => {
    const h = await liveSession();
    server.enqueue({ kind: 'stream_error', afterEvents: 3 }, textReply('ok'));

    const res = await h.session.submit('hi');

    expect(res.status).toBe('completed');
    expect(server.requests).toHaveLength(2);
    expect((await h.ofType('model.failed'))[0]?.data.failure).toMatchObject({
      kind: 'retryable',
      overloaded: true,
      errorType: 'overloaded_error',
    });
    expect((await h.reasons()).slice(0, 3)).toEqual(['query_built', 'transport_retry', 'backoff_elapsed']);
  });

  it('400 prompt is too long → a compaction request → the same turn retried on the compacted history', async () => {
    const h = await liveSession();
    const summary = '1. Goal — echo hi. 2. Done so far — echoed once. 6. Next step — answer.';
    server.enqueue(
      toolUseReply('echo', { text: 'hi' }, { toolUseId: 'toolu_echo_1' }),
      httpError(400, 'invalid_request_error', 'prompt is too long: 210000 tokens > 200000 maximum'),
      textReply(summary),
      textReply('Done: echoed hi.'),
    );

    const res = await h.session.submit('Echo hi, then tell me.');

    expect(res).toMatchObject({ status: 'completed', reason: 'completed', turns: 2 });
    expect(server.requests).toHaveLength(4);
    expect(await h.reasons()).toEqual([
      'query_built',
      'tool_use_requested',
      'tool_result_continuation',
      'query_built',
      'compact_retry',
      'compacted',
      'query_built',
      'finish_requested',
      'completed',
    ]);
    expect((await h.ofType('model.failed'))[0]?.data.failure).toMatchObject({
      kind: 'prompt_too_long',
      status: 400,
      promptTokens: 210_000,
      maxPromptTokens: 200_000,
    });

    const tooLong = bodyOf(1);
    const assistantToolUse = {
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'toolu_echo_1', name: 'echo', input: { text: 'hi' } }],
    };
    const toolResult = {
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_echo_1', content: 'echo: hi' }],
    };
    expect(tooLong.messages).toEqual([
      { role: 'user', content: 'Echo hi, then tell me.' },
      assistantToolUse,
      toolResult,
    ]);

    // The compaction request: the summariser's system prompt, the history plus one instruction; the
    // session's tools stay declared because the history holds tool_use / tool_result blocks.
    const compaction = bodyOf(2);
    expect(compaction.system).toBe(COMPACTION_SYSTEM);
    expect(String(compaction.system)).toContain(COMPACTION_MARKER);
    expect(String(compaction.system)).toMatch(
      /Goal[\s\S]*Files[\s\S]*Commands[\s\S]*Open errors[\s\S]*Next step/,
    );
    expect((compaction.tools as { name: string }[]).map((t) => t.name)).toContain('echo');
    expect(compaction.max_tokens).toBe(16_000);
    // The instruction follows the tool_result user turn, so the client merges the two (roles alternate).
    expect(compaction.messages).toEqual([
      { role: 'user', content: 'Echo hi, then tell me.' },
      assistantToolUse,
      {
        role: 'user',
        content: [
          ...toolResult.content,
          { type: 'text', text: 'Summarise the conversation above as instructed.' },
        ],
      },
    ]);

    // The retry: the summary first, then the recent tail kept verbatim (tool_use with its result).
    const retry = bodyOf(3);
    expect(retry.system).toBe(DEFAULT_SYSTEM_PROMPT);
    expect(retry.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: SUMMARY_PREFIX + summary }] },
      assistantToolUse,
      toolResult,
    ]);
    const compacted = await h.ofType('compaction.finished');
    expect(compacted).toHaveLength(1);
    // Schema v2: the summary is the compaction response's text, referred to, not copied.
    const response = (await h.ofType('model.responded')).find((r) => r.data.purpose === 'compaction')!;
    expect(compacted[0]?.data).toMatchObject({ ok: true, mode: 'reactive', response: response.seq, kept: 2 });
  });

  it('refusal ends the run at once: failed / refused, no retry, no stop hooks', async () => {
    const hook = fixedStopHook([{ decision: 'block', reason: 'keep going' }]);
    const h = await liveSession({ stopHooks: [hook] });
    server.enqueue(textReply("I can't help with that.", { stopReason: 'refusal' }));

    const res = await h.session.submit('do something bad');

    expect(res).toMatchObject({ status: 'failed', reason: 'refused', turns: 1 });
    expect(await h.reasons()).toEqual(['query_built', 'refused']);
    expect(server.requests).toHaveLength(1);
    expect(hook.inputs).toEqual([]);
    const ended = (await h.ofType('run.ended'))[0];
    expect(ended?.data).toMatchObject({ status: 'failed', reason: 'refused' });
  });

  it('pause_turn sends the paused turn back: the next request ends with that assistant content', async () => {
    const h = await liveSession();
    const paused = [{ type: 'text' as const, text: 'Still searching the web for sources…' }];
    server.enqueue(
      { kind: 'message', content: paused, stopReason: 'pause_turn' },
      textReply('Here is what I found.'),
    );

    const res = await h.session.submit('research this');

    expect(res).toMatchObject({ status: 'completed', reason: 'completed' });
    expect(await h.reasons()).toEqual([
      'query_built',
      'pause_turn_continuation',
      'query_built',
      'finish_requested',
      'completed',
    ]);
    expect(server.requests).toHaveLength(2);
    const next = bodyOf(1).messages ?? [];
    expect(next).toEqual([
      { role: 'user', content: 'research this' },
      { role: 'assistant', content: paused },
    ]);
    expect(next.at(-1)).toEqual({ role: 'assistant', content: paused });
  });

  it('max_tokens: escalation (next request has the higher max_tokens), then recovery (continue message sent)', async () => {
    const h = await liveSession();
    server.enqueue(
      textReply('First attempt, cut off at the default ca', { stopReason: 'max_tokens' }),
      textReply('Second attempt, longer, still cut o', { stopReason: 'max_tokens' }),
      textReply('ff — and here is the rest.'),
    );

    const res = await h.session.submit('write a lot');

    expect(res).toMatchObject({ status: 'completed', reason: 'completed', turns: 1 });
    expect(await h.reasons()).toEqual([
      'query_built',
      'max_tokens_escalation',
      'query_built',
      'max_tokens_recovery',
      'query_built',
      'finish_requested',
      'completed',
    ]);
    expect(server.requests.map((r) => r.body.max_tokens)).toEqual([8192, 64_000, 64_000]);
    // Escalation: the very same request, only max_tokens differs; the cut output is dropped.
    expect(bodyOf(1).messages).toEqual(bodyOf(0).messages);
    expect(bodyOf(1).messages).toEqual([{ role: 'user', content: 'write a lot' }]);
    // Recovery: the partial output and the continue message are appended.
    expect(bodyOf(2).messages).toEqual([
      { role: 'user', content: 'write a lot' },
      { role: 'assistant', content: [{ type: 'text', text: 'Second attempt, longer, still cut o' }] },
      { role: 'user', content: [{ type: 'text', text: MAX_TOKENS_CONTINUE_TEXT }] },
    ]);
  });

  it('401: model_error with the API message in the result; the API key is nowhere in the records', async () => {
    const wrongKey = 'sk-ant-api03-WRONG-KEY-abcdefghijklmnop';
    const h = await liveSession({ apiKey: wrongKey });

    const res = await h.session.submit('hi');

    expect(res).toMatchObject({ status: 'failed', reason: 'model_error', turns: 1 });
    expect(res.error).toContain('invalid x-api-key');
    expect(await h.reasons()).toEqual(['query_built', 'model_error']);
    // Not retried, and the key really went out (so not finding it below means something).
    expect(server.requests).toHaveLength(1);
    const sent = JSON.stringify(server.requests[0]?.headers);
    expect(sent).toContain(wrongKey);
    expect((await h.ofType('model.failed'))[0]?.data.failure).toMatchObject({
      kind: 'fatal',
      status: 401,
      errorType: 'authentication_error',
    });
    const all = JSON.stringify(await h.records());
    expect(all).toContain('invalid x-api-key');
    expect(all).not.toContain(wrongKey);
    expect(all).not.toContain('WRONG-KEY');
    expect(JSON.stringify(res)).not.toContain(wrongKey);
  });

  it('a 401 whose body echoes the key back (a proxy): the key is scrubbed from the result and the records', async () => {
    const h = await liveSession();
    server.enqueue((req) =>
      httpError(401, 'authentication_error', `key rejected: ${String(req.headers.authorization)}`),
    );

    const res = await h.session.submit('hi');

    expect(res).toMatchObject({ status: 'failed', reason: 'model_error' });
    expect(res.error).toContain('key rejected: Bearer [REDACTED]');
    expect(await h.reasons()).toEqual(['query_built', 'model_error']);
    const all = JSON.stringify(await h.records());
    expect(all).toContain('key rejected');
    expect(all).not.toContain(KEY);
    expect(JSON.stringify(res)).not.toContain(KEY);
  });
});
