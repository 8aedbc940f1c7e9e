import { describe, expect, it } from 'vitest';
import type { ToolResultBlock } from '../../../src/model/messages.ts';
import { parseScript, ScriptError } from '../../../src/model/script.ts';
import { ScriptedModelClient } from '../../../src/model/scripted.ts';
import { echoTool, scriptedSession } from '../../support/harness.ts';
import { reasonSpec, recordsOf, testTool, text, tools, toolUse, untilAborted } from './reasonSpec.ts';

const spec = reasonSpec('toolErrors');

const oneRound = [
  'query_built',
  'tool_use_requested',
  'tool_result_continuation',
  'query_built',
  'finish_requested',
  'completed',
] as const;

function resultsOf(h: Awaited<ReturnType<typeof scriptedSession>>, index = 2): ToolResultBlock[] {
  return h.session.state.messages.at(index)!.content as ToolResultBlock[];
}

describe('bad tool calls become is_error results and the loop goes on', () => {
  it('input failing the schema', async () => {
    let called = false;
    const strict = {
      ...echoTool,
      name: 'strict',
      call: async () => {
        called = true;
        return { content: 'ran' };
      },
    };
    const h = await scriptedSession([tools([toolUse('t1', 'strict', { text: 42 })]), text('sorry')], {
      tools: [strict],
    });
    const res = await h.session.submit('go');
    const records = await spec.expectRun(h, res, [...oneRound]);
    expect(called).toBe(false);
    const [r] = resultsOf(h);
    expect(r).toMatchObject({ tool_use_id: 't1', is_error: true });
    expect(r!.content).toMatch(/^Invalid input for strict: text: /);
    expect(recordsOf(records, 'tool.finished')[0]!.data.outcome).toBe('invalid_input');
    // A call refused before it runs is never logged as started.
    expect(recordsOf(records, 'tool.started')).toEqual([]);
  });

  it('an unknown tool name', async () => {
    const h = await scriptedSession([tools([toolUse('t1', 'nope', {})]), text('sorry')]);
    const res = await h.session.submit('go');
    const records = await spec.expectRun(h, res, [...oneRound]);
    const [r] = resultsOf(h);
    expect(r).toMatchObject({
      tool_use_id: 't1',
      is_error: true,
      content: 'No such tool: nope. Available tools: echo',
    });
    expect(recordsOf(records, 'tool.finished')[0]!.data.outcome).toBe('unknown_tool');
  });

  it('a tool that throws', async () => {
    const thrower = testTool('thrower', async () => {
      throw new Error('disk on fire');
    });
    const h = await scriptedSession(
      [tools([toolUse('t1', 'thrower', {}), toolUse('t2', 'echo', { text: 'ok' })]), text('hm')],
      {
        tools: [thrower, echoTool],
      },
    );
    const res = await h.session.submit('go');
    const records = await spec.expectRun(h, res, [...oneRound]);
    expect(resultsOf(h)).toEqual([
      { type: 'tool_result', tool_use_id: 't1', content: 'thrower failed: disk on fire', is_error: true },
      { type: 'tool_result', tool_use_id: 't2', content: 'echo: ok' },
    ]);
    expect(recordsOf(records, 'tool.finished').map((r) => r.data.outcome)).toEqual(['error', 'ok']);
  });

  it('a tool returning isError is reported as an error result', async () => {
    const failing = testTool('failing', async () => ({ content: 'exit code 1', isError: true }));
    const h = await scriptedSession([tools([toolUse('t1', 'failing', {})]), text('hm')], {
      tools: [failing],
    });
    const res = await h.session.submit('go');
    await spec.expectRun(h, res, [...oneRound]);
    expect(resultsOf(h)).toEqual([
      { type: 'tool_result', tool_use_id: 't1', content: 'exit code 1', is_error: true },
    ]);
  });

  it('a tool hanging past the session toolTimeoutMs: is_error timeout, its signal is aborted', async () => {
    let sawAbort = false;
    const hang = testTool('hang', async (_input, ctx) => {
      await untilAborted(ctx.signal);
      sawAbort = true;
      return { content: 'too late' };
    });
    const h = await scriptedSession([tools([toolUse('t1', 'hang', {})]), text('it timed out')], {
      tools: [hang],
      toolTimeoutMs: 50,
    });
    const res = await h.session.submit('go');
    const records = await spec.expectRun(h, res, [...oneRound]);
    expect(sawAbort).toBe(true);
    expect(resultsOf(h)).toEqual([
      { type: 'tool_result', tool_use_id: 't1', content: 'hang timed out after 50 ms', is_error: true },
    ]);
    expect(recordsOf(records, 'tool.finished')[0]!.data.outcome).toBe('timeout');
  });

  it("a tool's own timeoutMs wins over the session default, even if it ignores its signal", async () => {
    const hang = testTool('hang', () => new Promise(() => {}), { timeoutMs: 30 });
    const h = await scriptedSession([tools([toolUse('t1', 'hang', {})]), text('ok')], {
      tools: [hang],
      toolTimeoutMs: 60_000,
    });
    const res = await h.session.submit('go');
    await spec.expectRun(h, res, [...oneRound]);
    expect(resultsOf(h)[0]!.content).toBe('hang timed out after 30 ms');
  });
});

describe('broken plug-ins are runtime errors; the history stays valid', () => {
  it('a permission policy that throws is a broken plug-in: runtime_error, history still valid', async () => {
    const h = await scriptedSession([tools([toolUse('t1', 'echo', { text: 'x' })]), text('never sent')], {
      canUseTool: () => {
        throw new Error('policy file unreadable');
      },
    });
    const res = await h.session.submit('go');
    await spec.expectRun(h, res, ['query_built', 'tool_use_requested', 'runtime_error']);
    expect(res.error).toBe('policy file unreadable');
    expect(h.session.state.messages.last()!.content).toEqual([
      expect.objectContaining({ type: 'tool_result', tool_use_id: 't1', is_error: true }),
    ]);
  });

  it('a tool whose spec cannot be built fails the query: runtime_error before any request', async () => {
    const broken = {
      ...echoTool,
      name: 'broken',
      get description(): string {
        throw new Error('description unavailable');
      },
    };
    const h = await scriptedSession([text('never sent')], { tools: [broken] });
    const res = await h.session.submit('go');
    const records = await spec.expectRun(h, res, ['runtime_error']);
    expect(res.error).toBe('description unavailable');
    expect(recordsOf(records, 'transition')[0]!.data).toMatchObject({ from: 'building', to: 'failed' });
    expect(h.client.consumed).toBe(0);
  });
});

describe('bad scripts', () => {
  it('a malformed script is a ScriptError naming the turn and the field', () => {
    const cases: [unknown[], RegExp][] = [
      [[{ text: 'ok' }, { text: 'x', stop_reason: 'bogus' }], /^script \(turn 2\): stop_reason: /],
      [[{ text: 'ok', usage: { input_tokens: -1 } }], /^script \(turn 1\): usage\.input_tokens: /],
      [
        [{ content: [{ type: 'tool_use', id: '', name: 'a', input: {} }] }],
        /^script \(turn 1\): content\.0\.id: /,
      ],
      [[{ text: 'a' }, { text: 'b' }, { error: { status: 'x' } }], /^script \(turn 3\): error\.status: /],
      [[{ stop_reason: 'end_turn' }], /^script \(turn 1\): .*needs `content` or `text`/],
      [[{ abort: false }], /^script \(turn 1\): abort: /],
    ];
    for (const [turns, message] of cases) {
      let thrown: unknown;
      try {
        parseScript({ turns }, undefined);
      } catch (e) {
        thrown = e;
      }
      expect(thrown, JSON.stringify(turns)).toBeInstanceOf(ScriptError);
      expect((thrown as Error).message, JSON.stringify(turns)).toMatch(message);
    }
  });

  it('a script running out: model_error naming the turn; nothing written before is lost', async () => {
    const h = await scriptedSession([tools([toolUse('t1', 'echo', { text: 'x' })])]);
    const res = await h.session.submit('go');
    const records = await spec.expectRun(h, res, [
      'query_built',
      'tool_use_requested',
      'tool_result_continuation',
      'query_built',
      'model_error',
    ]);
    expect(res.error).toMatch(/turn 2/);
    expect(res.error).toMatch(/the script has 1 turns/);
    const types = records.map((r) => r.type);
    for (const t of [
      'user.message',
      'model.responded',
      'tool.started',
      'tool.finished',
      'model.failed',
    ] as const) {
      expect(types, t).toContain(t);
    }
    expect(types.at(-1)).toBe('run.ended');
    expect(await h.store.lastSeq(h.session.id)).toBe(h.session.state.lastSeq);
    expect(h.session.state.messages.length).toBe(3);
  });

  it('a response scripted for a compaction request but reached by a turn request: model_error', async () => {
    const client = new ScriptedModelClient(parseScript({ turns: [{ text: 'S', for: 'compaction' }] }), {
      file: 'demo.json',
    });
    const h = await scriptedSession([], { model: client });
    const res = await h.session.submit('go');
    await spec.expectRun(h, res, ['query_built', 'model_error']);
    expect(res.error).toMatch(/^script \(demo\.json, turn 1\): scripted for a compaction request/);
  });
});

spec.ownedReasonsAsserted();
