import { describe, expect, it } from 'vitest';
import { parseScript, parseScriptText, ScriptError } from '../../src/model/script.ts';
import { COMPACTION_MARKER, ScriptedModelClient } from '../../src/model/scripted.ts';
import { ModelCallError, type ModelRequest, type ModelStreamEvent } from '../../src/model/types.ts';

const request = (extra: Partial<ModelRequest> = {}): ModelRequest => ({
  model: 'req-model',
  messages: [{ role: 'user', content: 'hi' }],
  tools: [],
  maxTokens: 1_000,
  ...extra,
});
const compactionRequest = () => request({ system: `${COMPACTION_MARKER}\nsummarise` });
const live = () => ({ signal: new AbortController().signal });

function client(turns: unknown[], options: ConstructorParameters<typeof ScriptedModelClient>[1] = {}) {
  return new ScriptedModelClient(parseScript({ turns }), options);
}

async function failureOf(p: Promise<unknown>) {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected the call to fail');
}

describe('ScriptedModelClient', () => {
  it('answers each request with the next turn, text before content blocks, usage mapped', async () => {
    const c = client([
      {
        text: 'let me look',
        content: [{ type: 'tool_use', id: 't1', name: 'echo', input: { text: 'x' } }],
        stop_reason: 'tool_use',
        usage: { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 3 },
      },
      { text: 'done' },
    ]);
    const first = await c.stream(request(), live());
    expect(first).toEqual({
      id: 'msg_scripted_1',
      model: 'req-model',
      content: [
        { type: 'text', text: 'let me look' },
        { type: 'tool_use', id: 't1', name: 'echo', input: { text: 'x' } },
      ],
      stopReason: 'tool_use',
      usage: {
        inputTokens: 10,
        outputTokens: 5,
        cacheReadInputTokens: 3,
        cacheCreationInputTokens: 0,
        costUsd: 0,
      },
    });
    const second = await c.stream(request(), live());
    expect(second).toMatchObject({
      id: 'msg_scripted_2',
      stopReason: 'end_turn',
      content: [{ type: 'text', text: 'done' }],
    });
    expect(second.usage.inputTokens).toBe(0);
    expect(c.consumed).toBe(2);
    expect(c.requests).toHaveLength(2);
  });

  it('reports the script model and prices usage with costOf', async () => {
    const c = new ScriptedModelClient(
      parseScript({
        model: 'script-model',
        turns: [{ text: 'a', usage: { input_tokens: 100, output_tokens: 50 } }],
      }),
      { costOf: (model, u) => (model === 'script-model' ? (u.inputTokens + u.outputTokens) / 1_000 : null) },
    );
    const res = await c.stream(request(), live());
    expect(res.model).toBe('script-model');
    expect(res.usage.costUsd).toBe(0.15);
  });

  it('reports streaming events for text and tool_use blocks', async () => {
    const events: ModelStreamEvent[] = [];
    const c = client([
      {
        text: 'hello',
        content: [{ type: 'tool_use', id: 't1', name: 'echo', input: {} }],
        stop_reason: 'tool_use',
      },
    ]);
    await c.stream(request(), { ...live(), onEvent: (e) => events.push(e) });
    expect(events).toEqual([
      { type: 'text', text: 'hello' },
      { type: 'tool_use_start', name: 'echo', id: 't1' },
    ]);
  });

  it('scripted errors are classified the way the loop routes them', async () => {
    const c = client([
      { error: { status: 429, message: 'slow down', retry_after_ms: 700 } },
      { error: { status: 529, type: 'overloaded_error', message: 'overloaded' } },
      { error: { status: 400, message: 'prompt is too long: 210000 tokens > 200000 maximum' } },
      { error: { status: 401, message: 'bad key' } },
      { error: { message: 'ECONNRESET' } },
    ]);
    const failures = [];
    for (let i = 0; i < 5; i++) {
      const e = await failureOf(c.stream(request(), live()));
      expect(e).toBeInstanceOf(ModelCallError);
      failures.push((e as ModelCallError).failure);
    }
    expect(failures.map((f) => [f.kind, f.overloaded])).toEqual([
      ['retryable', false],
      ['retryable', true],
      ['prompt_too_long', false],
      ['fatal', false],
      ['retryable', false],
    ]);
    expect(failures[0]!.retryAfterMs).toBe(700);
    expect(failures[2]).toMatchObject({ promptTokens: 210_000, maxPromptTokens: 200_000 });
  });

  it('running out of script is a ScriptError naming the turn, never a made-up answer', async () => {
    const c = client([{ text: 'only one' }], { file: 'one.json' });
    await c.stream(request(), live());
    const e = await failureOf(c.stream(request(), live()));
    expect(e).toBeInstanceOf(ScriptError);
    expect((e as ScriptError).where).toEqual({ file: 'one.json', turn: 2 });
    expect((e as Error).message).toBe(
      'script (one.json, turn 2): the script has 1 turns and the loop asked for another one',
    );
  });

  it('`for` must match the purpose of the request', async () => {
    const c = client([
      { text: 'summary', for: 'compaction' },
      { text: 'answer', for: 'turn' },
    ]);
    await expect(c.stream(compactionRequest(), live())).resolves.toMatchObject({
      content: [{ text: 'summary' }],
    });
    const e = await failureOf(c.stream(compactionRequest(), live()));
    expect((e as Error).message).toBe(
      'script (turn 2): scripted for a turn request, but the loop sent a compaction request',
    );
  });

  it('an abort turn calls requestAbort and fails as aborted once the signal fires', async () => {
    const controller = new AbortController();
    let asked = 0;
    const c = client([{ abort: true }], {
      requestAbort: () => {
        asked++;
        controller.abort();
      },
    });
    const e = await failureOf(c.stream(request(), { signal: controller.signal }));
    expect(asked).toBe(1);
    expect((e as ModelCallError).failure).toMatchObject({
      kind: 'aborted',
      message: 'aborted while streaming',
    });
  });

  it('an abort turn without a session to abort is a ScriptError', async () => {
    const e = await failureOf(client([{ abort: true }]).stream(request(), live()));
    expect(e).toBeInstanceOf(ScriptError);
    expect((e as Error).message).toMatch(/turn 1.*needs a session to abort/);
  });

  it('a request made after the abort fails as aborted without using a turn', async () => {
    const controller = new AbortController();
    controller.abort();
    const c = client([{ text: 'unused' }]);
    const e = await failureOf(c.stream(request(), { signal: controller.signal }));
    expect((e as ModelCallError).failure.kind).toBe('aborted');
    expect(c.consumed).toBe(0);
  });
});

describe('parseScript', () => {
  it('names the turn (1-based) and the field of the first problem', () => {
    const cases: [unknown, string][] = [
      [{ turns: [{ text: 'a' }, { text: 'b', stop_reason: 'done' }] }, 'script (turn 2): stop_reason: '],
      [{ turns: [{ text: 'a', usage: { output_tokens: 1.5 } }] }, 'script (turn 1): usage.output_tokens: '],
      [{ turns: [{ error: { status: 700 } }] }, 'script (turn 1): error.status: '],
      [
        { turns: [{ error: { status: 500 }, text: 'x' }] },
        'script (turn 1): (root): Unrecognized key: "text"',
      ],
      [{ turns: [{}] }, 'script (turn 1): (root): a response needs `content` or `text`'],
      [{ turn: [] }, 'script: turns: '],
    ];
    for (const [raw, prefix] of cases) {
      expect(() => parseScript(raw), JSON.stringify(raw)).toThrow(ScriptError);
      try {
        parseScript(raw);
      } catch (e) {
        expect((e as Error).message.startsWith(prefix), `${(e as Error).message} ← ${prefix}`).toBe(true);
      }
    }
  });

  it('parseScriptText: invalid JSON names the file', () => {
    expect(() => parseScriptText('{"turns": [', 'broken.json')).toThrow(
      /^script \(broken\.json\): not valid JSON/,
    );
  });

  it('fills the defaults: stop_reason end_turn, usage zero', () => {
    const s = parseScript({ turns: [{ text: 'a', usage: {} }] });
    expect(s.turns[0]).toEqual({
      text: 'a',
      stop_reason: 'end_turn',
      usage: {
        input_tokens: 0,
        output_tokens: 0,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
      },
    });
  });
});
