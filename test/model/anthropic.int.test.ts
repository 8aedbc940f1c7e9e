import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  AnthropicModelClient,
  hasApiKey,
  MissingApiKeyError,
  normalizeHistory,
} from '../../src/model/anthropic.ts';
import type { Message } from '../../src/model/messages.ts';
import {
  ModelCallError,
  type ModelFailure,
  type ModelRequest,
  type ModelStreamEvent,
} from '../../src/model/types.ts';
import {
  httpError,
  type MessagesServer,
  startMessagesServer,
  textReply,
  toolUseReply,
} from '../support/messagesServer.ts';

const KEY = 'sk-test-SECRET';
const MODEL = 'claude-sonnet-4-6';

let server: MessagesServer;
let client: AnthropicModelClient;

beforeAll(async () => {
  server = await startMessagesServer({ apiKey: KEY });
  client = new AnthropicModelClient({ apiKey: KEY, baseURL: server.url });
});
afterAll(async () => {
  await server.close();
});
afterEach(() => {
  // A test that leaves replies queued would leak them into the next one.
  expect(server.pending()).toBe(0);
  server.requests.length = 0;
});

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: MODEL,
    system: 'You are terse.',
    messages: [{ role: 'user', content: 'hi' }],
    tools: [],
    maxTokens: 1024,
    ...overrides,
  };
}

/** Runs a call that must fail; returns the classification and checks the key leaked nowhere. */
async function failure(call: Promise<unknown>): Promise<ModelFailure> {
  const err = await call.then(
    () => {
      throw new Error('expected the model call to fail');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ModelCallError);
  const f = (err as ModelCallError).failure;
  expect((err as Error).message).not.toContain(KEY);
  expect(JSON.stringify(f)).not.toContain(KEY);
  return f;
}

const signal = () => new AbortController().signal;

describe('AnthropicModelClient against the loopback Messages server', () => {
  it('streams a text response and reports text deltas', async () => {
    server.enqueue(textReply('Hello there, streaming world!', { chunkSize: 4 }));
    const events: ModelStreamEvent[] = [];
    const res = await client.stream(request(), { signal: signal(), onEvent: (e) => events.push(e) });

    expect(res.content).toEqual([{ type: 'text', text: 'Hello there, streaming world!' }]);
    expect(res.stopReason).toBe('end_turn');
    expect(res.model).toBe(MODEL);
    const texts = events.filter((e) => e.type === 'text');
    expect(texts.length).toBeGreaterThan(3);
    expect(texts.map((e) => (e.type === 'text' ? e.text : '')).join('')).toBe(
      'Hello there, streaming world!',
    );
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(server.requests[0]?.body.stream).toBe(true);
  });

  it('assembles tool_use input from input_json_delta chunks', async () => {
    const input = { path: 'src/index.ts', options: { lines: [1, 20], follow: true }, note: 'ünïcode "q"' };
    server.enqueue(
      toolUseReply('read_file', input, { text: 'Reading.', toolUseId: 'toolu_01', chunkSize: 3 }),
    );
    const events: ModelStreamEvent[] = [];
    const res = await client.stream(request(), { signal: signal(), onEvent: (e) => events.push(e) });

    expect(res.stopReason).toBe('tool_use');
    expect(res.content).toEqual([
      { type: 'text', text: 'Reading.' },
      { type: 'tool_use', id: 'toolu_01', name: 'read_file', input },
    ]);
    expect(events).toContainEqual({ type: 'tool_use_start', name: 'read_file', id: 'toolu_01' });
  });

  it('passes thinking blocks through with their signature', async () => {
    server.enqueue({
      kind: 'message',
      content: [
        { type: 'thinking', thinking: 'Let me think about it.', signature: 'sig-abc' },
        { type: 'text', text: 'Done.' },
      ],
    });
    const events: ModelStreamEvent[] = [];
    const res = await client.stream(request(), { signal: signal(), onEvent: (e) => events.push(e) });
    expect(res.content[0]).toEqual({
      type: 'thinking',
      thinking: 'Let me think about it.',
      signature: 'sig-abc',
    });
    expect(events.filter((e) => e.type === 'thinking').length).toBeGreaterThan(1);
  });

  it.each([
    'max_tokens',
    'refusal',
    'pause_turn',
    'model_context_window_exceeded',
    'stop_sequence',
  ] as const)('passes stop reason %s through', async (stopReason) => {
    server.enqueue(textReply('partial', { stopReason }));
    const res = await client.stream(request(), { signal: signal() });
    expect(res.stopReason).toBe(stopReason);
  });

  it('keeps tool_use content authoritative when stop_reason says end_turn', async () => {
    server.enqueue(toolUseReply('grep', { q: 'x' }, { stopReason: 'end_turn' }));
    const res = await client.stream(request(), { signal: signal() });
    expect(res.stopReason).toBe('end_turn');
    expect(res.content.map((b) => b.type)).toEqual(['tool_use']);
  });

  it('reports usage with cache tokens and the cost from the price table', async () => {
    const usage = {
      input_tokens: 1000,
      output_tokens: 500,
      cache_read_input_tokens: 20_000,
      cache_creation_input_tokens: 4000,
    };
    server.enqueue(textReply('cached', { usage }));
    const res = await client.stream(request(), { signal: signal() });
    // Sonnet 4.x: $3 in, $15 out, $3.75 cache write, $0.30 cache read per MTok.
    const expected = (1000 * 3 + 500 * 15 + 4000 * 3.75 + 20_000 * 0.3) / 1e6;
    expect(res.usage).toEqual({
      inputTokens: 1000,
      outputTokens: 500,
      cacheReadInputTokens: 20_000,
      cacheCreationInputTokens: 4000,
      costUsd: expect.closeTo(expected, 9),
    });
    expect(res.usage.costUsd).toBeCloseTo(0.0315, 9);
  });

  it('prices an unknown model at 0 without failing', async () => {
    server.enqueue(textReply('ok', { usage: { input_tokens: 123, output_tokens: 45 } }));
    const res = await client.stream(request({ model: 'gpt-imaginary-9' }), { signal: signal() });
    expect(res.model).toBe('gpt-imaginary-9');
    expect(res.usage.inputTokens).toBe(123);
    expect(res.usage.outputTokens).toBe(45);
    expect(res.usage.costUsd).toBe(0);
  });

  it('sends max_tokens, system, tools and the normalised history', async () => {
    server.enqueue(textReply('ok'));
    const tools = [
      {
        name: 'read_file',
        description: 'Read a file',
        input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      },
    ];
    const history: Message[] = [
      { role: 'user', content: 'read it' },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'a' } }],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'A' }] },
      { role: 'user', content: 'continue where you stopped' },
      { role: 'assistant', content: [] },
      { role: 'user', content: 'and then?' },
    ];
    const snapshot = structuredClone(history);
    await client.stream(request({ messages: history, tools, maxTokens: 4096 }), { signal: signal() });

    const body = server.requests[0]?.body;
    expect(body?.model).toBe(MODEL);
    expect(body?.max_tokens).toBe(4096);
    expect(body?.system).toBe('You are terse.');
    expect(body?.tools).toEqual(tools);
    expect(body?.messages).toEqual([
      { role: 'user', content: 'read it' },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'a' } }],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: 'A' },
          { type: 'text', text: 'continue where you stopped' },
          { type: 'text', text: 'and then?' },
        ],
      },
    ]);
    // The live history is shared by reference with the loop: it must come back untouched.
    expect(history).toEqual(snapshot);
  });

  it('omits system and tools when there are none', async () => {
    server.enqueue(textReply('ok'));
    await client.stream(request({ system: undefined }), { signal: signal() });
    const body = server.requests[0]?.body ?? {};
    expect('system' in body).toBe(false);
    expect('tools' in body).toBe(false);
  });
});

describe('AnthropicModelClient failure classification (real SDK, maxRetries 0)', () => {
  it('529 → retryable overloaded after exactly one HTTP request', async () => {
    server.enqueue(httpError(529, 'overloaded_error', 'Overloaded'));
    const f = await failure(client.stream(request(), { signal: signal() }));
    expect(f).toMatchObject({
      kind: 'retryable',
      overloaded: true,
      status: 529,
      errorType: 'overloaded_error',
    });
    expect(server.requests).toHaveLength(1);
  });

  it('500 → retryable, not overloaded, one request', async () => {
    server.enqueue(httpError(500, 'api_error', 'Internal server error'));
    const f = await failure(client.stream(request(), { signal: signal() }));
    expect(f).toMatchObject({ kind: 'retryable', overloaded: false, status: 500 });
    expect(server.requests).toHaveLength(1);
  });

  it('429 with retry-after: 3 → retryAfterMs 3000', async () => {
    server.enqueue(httpError(429, 'rate_limit_error', 'Rate limited', { 'retry-after': '3' }));
    const f = await failure(client.stream(request(), { signal: signal() }));
    expect(f).toMatchObject({ kind: 'retryable', overloaded: false, status: 429, retryAfterMs: 3000 });
    expect(server.requests).toHaveLength(1);
  });

  it('429 with retry-after-ms wins over retry-after', async () => {
    server.enqueue(
      httpError(429, 'rate_limit_error', 'Rate limited', { 'retry-after-ms': '1500', 'retry-after': '9' }),
    );
    const f = await failure(client.stream(request(), { signal: signal() }));
    expect(f.retryAfterMs).toBe(1500);
  });

  it('event: error overloaded mid-stream → retryable overloaded', async () => {
    server.enqueue({
      kind: 'stream_error',
      afterEvents: 4,
      errorType: 'overloaded_error',
      message: 'Overloaded',
    });
    const events: ModelStreamEvent[] = [];
    const f = await failure(client.stream(request(), { signal: signal(), onEvent: (e) => events.push(e) }));
    expect(f).toMatchObject({ kind: 'retryable', overloaded: true, errorType: 'overloaded_error' });
    expect(f.status).toBeUndefined();
    expect(events.length).toBeGreaterThan(0);
  });

  it('any other event: error mid-stream → retryable, not overloaded', async () => {
    server.enqueue({ kind: 'stream_error', errorType: 'api_error', message: 'Internal error' });
    const f = await failure(client.stream(request(), { signal: signal() }));
    expect(f).toMatchObject({ kind: 'retryable', overloaded: false, errorType: 'api_error' });
  });

  it('connection dropped mid-stream → retryable', async () => {
    server.enqueue({ kind: 'drop', afterEvents: 5 });
    const f = await failure(client.stream(request(), { signal: signal() }));
    expect(f).toMatchObject({ kind: 'retryable', overloaded: false });
    expect(f.message).toMatch(/connection failed/);
    expect(server.requests).toHaveLength(1);
  });

  it('400 prompt too long → prompt_too_long with N and M', async () => {
    server.enqueue(
      httpError(400, 'invalid_request_error', 'prompt is too long: 210000 tokens > 200000 maximum'),
    );
    const f = await failure(client.stream(request(), { signal: signal() }));
    expect(f).toMatchObject({
      kind: 'prompt_too_long',
      status: 400,
      promptTokens: 210_000,
      maxPromptTokens: 200_000,
    });
  });

  it('other 400 → fatal with the API message', async () => {
    server.enqueue(httpError(400, 'invalid_request_error', 'messages: roles must alternate'));
    const f = await failure(client.stream(request(), { signal: signal() }));
    expect(f).toMatchObject({ kind: 'fatal', status: 400, message: 'messages: roles must alternate' });
  });

  it('401 → fatal with the API message and never the key', async () => {
    const bad = new AnthropicModelClient({ apiKey: 'sk-test-WRONG-KEY', baseURL: server.url });
    const f = await failure(bad.stream(request(), { signal: signal() }));
    expect(f).toMatchObject({ kind: 'fatal', status: 401, errorType: 'authentication_error' });
    expect(f.message).toBe('invalid x-api-key');
    expect(f.message).not.toContain('sk-test-WRONG-KEY');
  });

  it('scrubs the key even when the server echoes it back', async () => {
    server.enqueue(httpError(403, 'permission_error', `key ${KEY} may not use this model`));
    const f = await failure(client.stream(request(), { signal: signal() }));
    expect(f).toMatchObject({ kind: 'fatal', status: 403 });
    expect(f.message).toContain('may not use this model');
  });

  it('abort mid-stream → aborted', async () => {
    server.enqueue({ kind: 'hold', afterEvents: 4 });
    const controller = new AbortController();
    const events: ModelStreamEvent[] = [];
    const call = client.stream(request(), {
      signal: controller.signal,
      onEvent: (e) => {
        events.push(e);
        controller.abort();
      },
    });
    const f = await failure(call);
    expect(f.kind).toBe('aborted');
    expect(events).toHaveLength(1);
  });

  it('an already aborted signal never reaches the server', async () => {
    const controller = new AbortController();
    controller.abort();
    const f = await failure(client.stream(request(), { signal: controller.signal }));
    expect(f.kind).toBe('aborted');
    expect(server.requests).toHaveLength(0);
  });

  it('a server that cannot be reached → retryable connection failure', async () => {
    const gone = await startMessagesServer();
    await gone.close();
    const orphan = new AnthropicModelClient({ apiKey: KEY, baseURL: gone.url });
    const f = await failure(orphan.stream(request(), { signal: signal() }));
    expect(f).toMatchObject({ kind: 'retryable', overloaded: false });
  });

  it('a throwing onEvent listener does not fail the call', async () => {
    server.enqueue(textReply('still fine'));
    const res = await client.stream(request(), {
      signal: signal(),
      onEvent: () => {
        throw new Error('renderer crashed');
      },
    });
    expect(res.content).toEqual([{ type: 'text', text: 'still fine' }]);
  });
});

describe('construction and the API key', () => {
  it('reads ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL from the environment', async () => {
    const saved = { key: process.env.ANTHROPIC_API_KEY, url: process.env.ANTHROPIC_BASE_URL };
    try {
      process.env.ANTHROPIC_API_KEY = KEY;
      process.env.ANTHROPIC_BASE_URL = server.url;
      expect(hasApiKey()).toBe(true);
      server.enqueue(textReply('from env'));
      const res = await new AnthropicModelClient().stream(request(), { signal: signal() });
      expect(res.content).toEqual([{ type: 'text', text: 'from env' }]);
    } finally {
      restore('ANTHROPIC_API_KEY', saved.key);
      restore('ANTHROPIC_BASE_URL', saved.url);
    }
  });

  it('refuses to start without a key', () => {
    const saved = process.env.ANTHROPIC_API_KEY;
    try {
      delete process.env.ANTHROPIC_API_KEY;
      expect(hasApiKey()).toBe(false);
      expect(hasApiKey({ ANTHROPIC_API_KEY: '  ' })).toBe(false);
      expect(() => new AnthropicModelClient()).toThrow(MissingApiKeyError);
    } finally {
      restore('ANTHROPIC_API_KEY', saved);
    }
  });
});

function restore(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}

describe('normalizeHistory', () => {
  it('leaves an alternating history as the same objects', () => {
    const history: Message[] = [
      { role: 'user', content: 'a' },
      { role: 'assistant', content: 'b' },
    ];
    const out = normalizeHistory(history);
    expect(out).toEqual(history);
    expect(out[0]).toBe(history[0]);
  });

  it('merges consecutive assistant turns and drops empty text blocks', () => {
    const out = normalizeHistory([
      { role: 'user', content: 'a' },
      { role: 'assistant', content: [{ type: 'text', text: 'one' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: '' },
          { type: 'text', text: 'two' },
        ],
      },
    ]);
    expect(out).toEqual([
      { role: 'user', content: 'a' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'one' },
          { type: 'text', text: 'two' },
        ],
      },
    ]);
  });

  it('puts tool_result blocks first when a text turn precedes them', () => {
    const out = normalizeHistory([
      { role: 'user', content: 'note' },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'r' }] },
    ]);
    expect(out).toEqual([
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't1', content: 'r' },
          { type: 'text', text: 'note' },
        ],
      },
    ]);
  });

  it('drops empty assistant turns, string or blocks', () => {
    const out = normalizeHistory([
      { role: 'user', content: 'a' },
      { role: 'assistant', content: '' },
      { role: 'assistant', content: [{ type: 'text', text: '' }] },
    ]);
    expect(out).toEqual([{ role: 'user', content: 'a' }]);
  });
});

describe('messagesServer (the test double itself)', () => {
  it('answers non-streaming requests with a JSON message the SDK accepts', async () => {
    const { default: Anthropic } = await import('@anthropic-ai/sdk');
    const sdk = new Anthropic({ apiKey: KEY, baseURL: server.url, maxRetries: 0 });
    server.enqueue(toolUseReply('grep', { q: 'x' }, { text: 'Searching.', usage: { input_tokens: 7 } }));
    const msg = await sdk.messages.create({
      model: MODEL,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(msg.stop_reason).toBe('tool_use');
    expect(msg.content).toEqual([
      { type: 'text', text: 'Searching.' },
      { type: 'tool_use', id: 'toolu_grep_1', name: 'grep', input: { q: 'x' } },
    ]);
    expect(msg.usage.input_tokens).toBe(7);
    expect(server.requests[0]?.body.stream).toBeUndefined();
  });

  it('accepts x-api-key, rejects a missing key, 404s other routes, records them all', async () => {
    const post = (path: string, headers: Record<string, string>) =>
      fetch(`${server.url}${path}`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: 'm', stream: false }),
      });
    server.enqueue(textReply('via x-api-key'));
    const ok = await post('/v1/messages', { 'x-api-key': KEY });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { content: unknown }).content).toEqual([
      { type: 'text', text: 'via x-api-key' },
    ]);
    const anonymous = await post('/v1/messages', {});
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toEqual({
      type: 'error',
      error: { type: 'authentication_error', message: 'invalid x-api-key' },
    });
    expect((await post('/v1/other', { 'x-api-key': KEY })).status).toBe(404);
    expect(server.requests.map((r) => r.path)).toEqual(['/v1/messages', '/v1/messages', '/v1/other']);
    expect(server.requests[0]?.headers['x-api-key']).toBe(KEY);
  });

  it('builds a reply from the request when given a function', async () => {
    server.enqueue((req) => textReply(`you said ${JSON.stringify(req.body.messages?.at(-1)?.content)}`));
    const res = await client.stream(request({ messages: [{ role: 'user', content: 'ping' }] }), {
      signal: signal(),
    });
    expect(res.content).toEqual([{ type: 'text', text: 'you said "ping"' }]);
  });

  it('uses the fallback reply when the queue is empty, and 418s when there is none', async () => {
    const looping = await startMessagesServer({ fallback: textReply('again') });
    try {
      const c = new AnthropicModelClient({ apiKey: KEY, baseURL: looping.url });
      for (let i = 0; i < 3; i++) {
        const res = await c.stream(request(), { signal: signal() });
        expect(res.content).toEqual([{ type: 'text', text: 'again' }]);
      }
      expect(looping.requests).toHaveLength(3);
    } finally {
      await looping.close();
    }
    const f = await failure(client.stream(request(), { signal: signal() }));
    expect(f).toMatchObject({ kind: 'fatal', status: 418 });
    expect(f.message).toMatch(/no scripted reply left/);
  });

  it('close() returns even while a stream is held open', async () => {
    const holding = await startMessagesServer();
    holding.enqueue({ kind: 'hold' });
    const c = new AnthropicModelClient({ apiKey: KEY, baseURL: holding.url });
    const call = c.stream(request(), { signal: signal() }).catch((e: unknown) => e);
    await waitFor(() => holding.requests.length === 1);
    await holding.close();
    const err = await call;
    expect(err).toBeInstanceOf(ModelCallError);
    expect((err as ModelCallError).failure.kind).toBe('retryable');
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(condition()).toBe(true);
}

describe('the history sent, request after request', () => {
  it('a history that grew is sent exactly as normalizeHistory of all of it, merges included', async () => {
    const history: Message[] = [{ role: 'user', content: 'go' }];
    const c = new AnthropicModelClient({ apiKey: KEY, baseURL: server.url });
    const send = async (messages: readonly Message[]) => {
      server.enqueue(textReply('ok'));
      await c.stream(request({ messages }), { signal: new AbortController().signal });
      return server.requests.at(-1)!.body.messages;
    };
    expect(await send(history)).toEqual(normalizeHistory(history));
    history.push(
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'r1' }] },
    );
    expect(await send(history)).toEqual(normalizeHistory(history));
    // A user message right after the tool results merges into the last sent turn.
    history.push({ role: 'user', content: 'Continue where you left off.' });
    const merged = await send(history);
    expect(merged).toEqual(normalizeHistory(history));
    expect(merged).toHaveLength(3);
    history.push(
      { role: 'assistant', content: [{ type: 'text', text: '' }] },
      { role: 'assistant', content: 'b' },
    );
    expect(await send(history)).toEqual(normalizeHistory(history));
    // A new history (a compaction) is normalized from its start, whatever was sent before.
    const compacted: Message[] = [{ role: 'user', content: 'summary' }, history.at(-1)!];
    expect(await send(compacted)).toEqual(normalizeHistory(compacted));
    // The same array rewritten in place (not the loop's way, but a caller's right) is not trusted.
    compacted[1] = { role: 'assistant', content: 'changed' };
    expect(await send(compacted)).toEqual(normalizeHistory(compacted));
  });
});
