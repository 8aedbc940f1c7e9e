/**
 * Counterfactual forks (`forkWithReplacement`): a model response or a tool result replaced, the
 * chart's next steps re-driven from the log, the run closed where it needs a live answer; the fork
 * then resumes with a script and verifies.
 */
import { describe, expect, it } from 'vitest';
import { parseScript } from '../../src/model/script.ts';
import { ScriptedModelClient } from '../../src/model/scripted.ts';
import { ForkReplacementError, forkWithReplacement } from '../../src/replay/fork.ts';
import {
  parseResponseFile,
  parseToolResultFile,
  ReplacementFileError,
} from '../../src/replay/replacement.ts';
import { verifyReplay } from '../../src/replay/verify.ts';
import { counterIds, VirtualClock } from '../../src/runtime/determinism.ts';
import { Session } from '../../src/runtime/session.ts';
import { MemoryEventStore } from '../../src/store/memoryStore.ts';
import type { LogRecord } from '../../src/store/records.ts';
import { runSession, scriptedModel, text, toolUse } from '../../src/testing/index.ts';
import { forkDiff } from '../../src/viz/forkDiff.ts';
import { echoTool } from '../support/harness.ts';
import { readLog } from '../support/logRecords.ts';

async function source() {
  const store = new MemoryEventStore();
  const run = await runSession({
    model: scriptedModel([toolUse('echo', { text: 'a' }), text('echoed a')]),
    prompt: 'echo a',
    tools: [echoTool],
    store,
  });
  return { store, id: run.result.sessionId, records: run.records };
}

const seqOf = (records: LogRecord[], type: LogRecord['type'], nth = 0) =>
  records.filter((r) => r.type === type)[nth]!.seq;

async function resume(store: MemoryEventStore, id: string, turns: unknown[]) {
  const session = await Session.open(id, {
    store,
    model: new ScriptedModelClient(parseScript({ turns })),
    tools: [echoTool],
    clock: new VirtualClock(),
    ids: counterIds('resumed-'),
  });
  const result = await session.submit();
  return { result, records: await readLog(store, id) };
}

describe('forkWithReplacement', () => {
  it('replaces a response: the fork runs the new tool calls on resume, and verifies', async () => {
    const src = await source();
    const at = seqOf(src.records, 'model.responded');
    const response = parseResponseFile(
      JSON.stringify({
        content: [{ type: 'tool_use', id: 'toolu_b', name: 'echo', input: { text: 'b' } }],
        stop_reason: 'tool_use',
      }),
      'b.json',
      { id: 'msg_fork', model: 'claude-sonnet-4-6' },
    );
    const fork = await forkWithReplacement(src.store, src.id, { response }, at, counterIds('fork-'));
    expect(fork).toMatchObject({
      replacedSeq: at,
      type: 'model.responded',
      state: 'dispatchingTools',
      toolsPending: true,
    });

    const forked = await readLog(src.store, fork.sessionId);
    // The source up to the response, the new response, what the chart did with it, the run closed.
    expect(forked.slice(0, at - 1).map((r) => r.type)).toEqual(
      src.records.slice(0, at - 1).map((r) => r.type),
    );
    expect(forked.slice(at - 1).map((r) => r.type)).toEqual([
      'model.responded',
      'transition',
      'message.appended',
      'run.ended',
    ]);
    expect(forked[0]!.type === 'session.created' && forked[0]!.data.forkedFrom).toEqual({
      session: src.id,
      seq: at - 1,
    });
    expect((await verifyReplay(forked)).ok).toBe(true);
    // The source is untouched.
    expect(await readLog(src.store, src.id)).toEqual(src.records);

    // A prompt now would follow tool calls that have no results: refused, nothing written.
    const early = await Session.open(fork.sessionId, {
      store: src.store,
      model: new ScriptedModelClient(parseScript({ turns: [] })),
      tools: [echoTool],
    });
    await expect(early.submit('and now?')).rejects.toMatchObject({
      code: 'OPEN_TOOL_CALLS',
      message: expect.stringContaining('(toolu_b): continue it without a prompt'),
    });
    expect(await readLog(src.store, fork.sessionId)).toEqual(forked);

    const resumed = await resume(src.store, fork.sessionId, [{ text: 'echoed b', stop_reason: 'end_turn' }]);
    expect(resumed.result).toMatchObject({ status: 'completed' });
    const results = resumed.records
      .filter((r) => r.type === 'tool.finished')
      .map((r) => r.type === 'tool.finished' && r.data.result.content);
    expect(results).toEqual(['echo: b']);
    const reasons = resumed.records
      .filter((r) => r.type === 'transition' && r.seq > at)
      .map((r) => r.type === 'transition' && r.data.reason);
    expect(reasons).toEqual([
      'tool_use_requested',
      'tool_batch_resumed',
      'tool_result_continuation',
      'query_built',
      'finish_requested',
      'completed',
    ]);
    const report = await verifyReplay(resumed.records);
    expect(report.divergence).toBeNull();

    // The viewer's fork diff starts at the replaced response and shows both histories.
    const diff = forkDiff(resumed.records, src.records)!;
    expect(diff.firstDifference?.seq).toBe(at);
    expect(diff.firstDifference?.content).toEqual({
      source: '[{"type":"tool_use","id":"toolu_1","name":"echo","input":{"text":"a"}}]',
      fork: '[{"type":"tool_use","id":"toolu_b","name":"echo","input":{"text":"b"}}]',
    });
    expect(diff.messages.source.map((m) => m.text).join('\n')).toContain('echo: a');
    expect(diff.messages.fork.map((m) => m.text).join('\n')).toContain('echo: b');
  });

  it('replaces a tool result: the fork asks the model next with the new result', async () => {
    const src = await source();
    const fork = await forkWithReplacement(
      src.store,
      src.id,
      { toolUseId: 'toolu_1', toolResult: parseToolResultFile('ticket closed', 'result.txt') },
      undefined,
      counterIds('fork-'),
    );
    expect(fork).toMatchObject({ type: 'tool.finished', state: 'building', toolsPending: false });
    const resumed = await resume(src.store, fork.sessionId, [
      { text: 'it is closed', stop_reason: 'end_turn' },
    ]);
    expect(resumed.result.status).toBe('completed');
    const finished = resumed.records.find((r) => r.type === 'tool.finished');
    expect(finished?.data).toMatchObject({
      outcome: 'ok',
      result: { content: 'ticket closed', isError: false },
    });
    expect((await verifyReplay(resumed.records)).divergence).toBeNull();
  });

  it('refuses a seq that is not a response, an unknown tool call, and bad files, naming them', async () => {
    const src = await source();
    const response = parseResponseFile('{"text":"x"}', 'x.json', { id: 'm', model: 'claude-sonnet-4-6' });
    await expect(forkWithReplacement(src.store, src.id, { response }, 1)).rejects.toThrow(
      /cannot fork .* at seq 1: seq 1 is a session.created record, not a model.responded/,
    );
    await expect(
      forkWithReplacement(src.store, src.id, {
        toolUseId: 'nope',
        toolResult: parseToolResultFile('x', 'x.txt'),
      }),
    ).rejects.toBeInstanceOf(ForkReplacementError);

    const bad =
      (text: string, file = 'r.json') =>
      () =>
        parseResponseFile(text, file, { id: 'm', model: 'claude-sonnet-4-6' });
    expect(bad('{')).toThrow(ReplacementFileError);
    expect(bad('{')).toThrow(/^r\.json: not valid JSON/);
    expect(bad('{"stop_reason":"end_turn"}')).toThrow(/r\.json: .*a response needs `content` or `text`/);
    expect(bad('{"text":"x","stop_reason":"maybe"}')).toThrow(/r\.json: stop_reason: /);
    expect(bad('{"content":[{"type":"widget"}],"stop_reason":"end_turn"}')).toThrow(/r\.json: content/);
    expect(bad('{"error":{"status":500}}')).toThrow(/is not a response/);
    expect(bad('[1]')).toThrow(/a model response is a JSON object/);
    expect(
      bad(
        '{"content":[{"type":"tool_use","id":"t","name":"a","input":{}},{"type":"tool_use","id":"t","name":"b","input":{}}],"stop_reason":"tool_use"}',
      ),
    ).toThrow(/r\.json: .*t/);
    expect(() => parseToolResultFile('{"text":"x"}', 'res.json')).toThrow(
      /res\.json: a \.json tool result is/,
    );
    expect(parseToolResultFile('{"content":"boom","is_error":true}', 'res.json')).toEqual({
      result: { content: 'boom', isError: true },
      outcome: 'error',
    });
    // The log's own shape (as `reloop log --json` prints a response) is a response too.
    const logged = src.records.find((r) => r.type === 'model.responded')!;
    const own = parseResponseFile(
      JSON.stringify(logged.type === 'model.responded' && logged.data.response),
      'own.json',
      {
        id: 'm',
        model: 'x',
      },
    );
    expect(own).toEqual(logged.type === 'model.responded' && logged.data.response);
  });
});
