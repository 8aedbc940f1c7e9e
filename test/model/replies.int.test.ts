import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AnthropicModelClient } from '../../src/model/anthropic.ts';
import { parseScript, ScriptError } from '../../src/model/script.ts';
import { ScriptedModelClient } from '../../src/model/scripted.ts';
import { verifyReplay } from '../../src/replay/verify.ts';
import { counterIds, seededRandom, VirtualClock } from '../../src/runtime/determinism.ts';
import { Session } from '../../src/runtime/session.ts';
import { MemoryEventStore } from '../../src/store/memoryStore.ts';
import type { LogRecord, RecordOf } from '../../src/store/records.ts';
import { echoTool } from '../support/harness.ts';
import { readLog } from '../support/logRecords.ts';
import {
  type MessagesServer,
  type Reply,
  startMessagesServer,
  textReply,
  toolUseReply,
} from '../support/messagesServer.ts';

/** `{ a: { a: … } }`, `depth` objects deep, built without recursion. */
function nested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

/** A raw event stream whose one tool_use input is `depth` objects deep (too deep for JSON.stringify). */
function deepToolStream(depth: number): Reply {
  const input = `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
  const usage = {
    input_tokens: 1,
    output_tokens: 1,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  };
  const event = (type: string, data: unknown) => `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
  const body = [
    event('message_start', {
      type: 'message_start',
      message: {
        id: 'msg_deep',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-6',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage,
      },
    }),
    event('content_block_start', {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'tool_use', id: 'toolu_deep', name: 'echo', input: {} },
    }),
    event('content_block_delta', {
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'input_json_delta', partial_json: input },
    }),
    event('content_block_stop', { type: 'content_block_stop', index: 0 }),
    event('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: { output_tokens: 1 },
    }),
    event('message_stop', { type: 'message_stop' }),
  ].join('');
  return { kind: 'raw', status: 200, contentType: 'text/event-stream', body };
}

/*
 * Replies the loop cannot act on: each one ends the run `model_error` at once (fatal, not retried:
 * the same server would answer the same way), with a message saying what was wrong, logged as
 * `model.failed` (errorType `invalid_reply`), and the log replays. Nothing of such a reply is run
 * or put into the history.
 */

let server: MessagesServer;
beforeAll(async () => {
  server = await startMessagesServer();
});
afterAll(async () => {
  await server.close();
});
afterEach(() => {
  expect(server.pending()).toBe(0);
  server.requests.length = 0;
});

async function runAgainst(...replies: Reply[]) {
  server.enqueue(...replies);
  const store = new MemoryEventStore();
  const session = await Session.create({
    store,
    model: new AnthropicModelClient({ apiKey: 'sk-test', baseURL: server.url }),
    clock: new VirtualClock(),
    random: seededRandom(1),
    ids: counterIds(),
    tools: [echoTool],
    cwd: process.cwd(),
  });
  const result = await session.submit('go');
  const records: LogRecord[] = [];
  for await (const r of store.read(session.id)) records.push(r);
  const failed = records.filter((r): r is RecordOf<'model.failed'> => r.type === 'model.failed');
  return { result, records, failed, session };
}

async function expectRefused(reply: Reply, message: RegExp) {
  const h = await runAgainst(reply);
  expect(h.result).toMatchObject({ status: 'failed', reason: 'model_error' });
  expect(h.result.error).toMatch(message);
  expect(server.requests).toHaveLength(1); // not retried
  expect(h.failed.map((r) => r.data.failure)).toEqual([
    { kind: 'fatal', overloaded: false, errorType: 'invalid_reply', message: expect.stringMatching(message) },
  ]);
  expect(h.records.some((r) => r.type === 'tool.started')).toBe(false);
  expect(h.session.state.messages.length).toBe(1); // only the prompt: nothing of the reply kept
  expect((await verifyReplay(h.records)).divergence).toBeNull();
}

describe('model replies the loop cannot act on (real SDK, loopback Messages API)', () => {
  it('an unknown stop_reason: not stored as null and completed', () =>
    expectRefused(
      textReply('done?', { stopReason: 'something_new' }),
      /stop_reason "something_new" is not one reloop knows .*cannot tell whether the turn is complete/,
    ));

  it('a reply that ends without a stop_reason', () =>
    expectRefused(textReply('done?', { stopReason: null }), /ended without a stop_reason/));

  it('a content block of an unknown type: not dropped from the history silently', () =>
    expectRefused(
      {
        kind: 'message',
        content: [
          { type: 'text', text: 'see' },
          { type: 'hologram', frames: 3 },
        ],
      },
      /content block of type "hologram" \(block 1\), which this version of reloop does not know; it is not dropped silently/,
    ));

  it('a reply without usage: a clear message, not "Cannot read properties of undefined"', () =>
    expectRefused(
      textReply('hi', { usage: null }),
      /the reply has no usage \(message_start\.message\.usage\)/,
    ));

  it('an HTML page with status 200: fatal at once, not retried ten times as a dropped stream', () =>
    expectRefused(
      {
        kind: 'raw',
        status: 200,
        contentType: 'text/html; charset=utf-8',
        body: '<html><body>Welcome</body></html>',
      },
      /answered 200 with content-type text\/html; charset=utf-8, not an event stream: .*\(check ANTHROPIC_BASE_URL\)/,
    ));

  it('duplicate tool_use ids: neither call is run', () =>
    expectRefused(
      {
        kind: 'message',
        content: [
          { type: 'tool_use', id: 'toolu_1', name: 'echo', input: { text: 'a' } },
          { type: 'tool_use', id: 'toolu_1', name: 'echo', input: { text: 'b' } },
        ],
      },
      /two tool_use blocks with id "toolu_1" \(echo and echo\): their results could not be told apart/,
    ));

  it('a tool input nested 3 800 deep (issue 18, item 7): refused, not run, the log whole', () =>
    expectRefused(
      toolUseReply('echo', { text: 'a', deep: nested(3_800) }, { chunkSize: 1 << 20 }),
      /the reply's content block 0 \("tool_use"\) is nested deeper than 512 levels/,
    ));

  it('a tool input nested 6 000 deep (past JSON.stringify): refused the same way', () =>
    expectRefused(
      // The test server cannot JSON.stringify it either: the stream is written by hand.
      deepToolStream(6_000),
      /the reply's content block 0 \("tool_use"\) is nested deeper than 512 levels/,
    ));

  it('a dropped stream is still retried (the checks do not swallow transport failures)', async () => {
    const h = await runAgainst({ kind: 'drop' }, textReply('fine'));
    expect(h.result).toMatchObject({ status: 'completed' });
    expect(h.failed[0]?.data.failure.kind).toBe('retryable');
    expect(server.requests).toHaveLength(2);
  });
});

describe('the same replies from the scripted model', () => {
  it('a script with duplicate tool_use ids is refused when loaded, naming the turn', () => {
    const raw = {
      turns: [
        { text: 'fine' },
        {
          content: [
            { type: 'tool_use', id: 'x', name: 'echo', input: {} },
            { type: 'tool_use', id: 'x', name: 'echo', input: {} },
          ],
        },
      ],
    };
    expect(() => parseScript(raw, 's.json')).toThrow(ScriptError);
    expect(() => parseScript(raw, 's.json')).toThrow(
      /script \(s\.json, turn 2\): content: the reply has two tool_use blocks with id "x"/,
    );
  });

  it('a script with an unknown stop_reason or block type is refused when loaded, naming the turn', () => {
    expect(() => parseScript({ turns: [{ text: 'a', stop_reason: 'something_new' }] }, 's.json')).toThrow(
      /script \(s\.json, turn 1\): stop_reason/,
    );
    expect(() => parseScript({ turns: [{ content: [{ type: 'hologram' }] }] }, 's.json')).toThrow(
      /script \(s\.json, turn 1\): content\.0/,
    );
  });

  it('a script whose tool input is nested past the limit is refused when loaded, naming the turn and block', () => {
    const raw = JSON.parse(
      `{"turns":[{"text":"a"},{"content":[{"type":"tool_use","id":"t","name":"echo","input":${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}}],"stop_reason":"tool_use"}]}`,
    );
    expect(() => parseScript(raw, 's.json')).toThrow(
      /script \(s\.json, turn 2\): content\.0: the reply's content block 0 \("tool_use"\) is nested deeper than 512 levels/,
    );
  });

  it('a script built in code with a deep input ends the run model_error, like the server', async () => {
    const { result, store, session } = await runScriptInCode([
      { type: 'tool_use' as const, id: 'x', name: 'echo', input: nested(6_000) },
    ]);
    expect(result).toMatchObject({ status: 'failed', reason: 'model_error' });
    expect(result.error).toMatch(/nested deeper than 512 levels/);
    expect((await verifyReplay(await readLog(store, session.id))).divergence).toBeNull();
  });

  it('a script built in code with duplicate ids ends the run model_error, like the server', async () => {
    const { result } = await runScriptInCode([
      { type: 'tool_use' as const, id: 'x', name: 'echo', input: {} },
      { type: 'tool_use' as const, id: 'x', name: 'echo', input: {} },
    ]);
    expect(result).toMatchObject({ status: 'failed', reason: 'model_error' });
    expect(result.error).toMatch(/two tool_use blocks with id "x"/);
  });
});

/** One run of a script built in code (no parseScript) whose one turn holds these blocks. */
async function runScriptInCode(content: { type: 'tool_use'; id: string; name: string; input: unknown }[]) {
  const store = new MemoryEventStore();
  const session = await Session.create({
    store,
    model: new ScriptedModelClient({ turns: [{ content, stop_reason: 'tool_use' as const }] }),
    tools: [echoTool],
    ids: counterIds(),
  });
  return { result: await session.submit('go'), store, session };
}
