import {
  ReplayMismatchError,
  recordedModel,
  rerunSession,
  runSession,
  scriptedModel,
  text,
  toolUse,
} from 'reloop/testing';
import { describe, expect, it } from 'vitest';
import { echoTool } from '../support/harness.ts';

async function recorded() {
  const run = await runSession({
    prompt: 'echo hi',
    tools: [echoTool],
    model: scriptedModel([toolUse('echo', { text: 'hi' }), text('said hi')]),
  });
  return run.records;
}

describe('reloop/testing: recorded sessions as tests', () => {
  it('recordedModel answers the same code from the log, and fails the test on a changed request', async () => {
    const records = await recorded();
    const same = await runSession({ prompt: 'echo hi', tools: [echoTool], model: recordedModel(records) });
    expect(same.result.status).toBe('completed');
    const model = recordedModel(records);
    const changed = await runSession({ prompt: 'echo bye', tools: [echoTool], model });
    expect(changed.result.status).toBe('failed');
    const e = await model
      .stream({ model: 'x', messages: [], tools: [], maxTokens: 1 }, { signal: new AbortController().signal })
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ReplayMismatchError);
    expect((e as ReplayMismatchError).divergence).toMatchObject({
      kind: 'request',
      path: 'messages[0].content',
      recorded: 'echo hi',
      current: 'echo bye',
    });
  });

  it('rerunSession: identical for the same tools, a tool_result divergence for a changed one', async () => {
    const records = await recorded();
    expect(await rerunSession(records, { tools: [echoTool] })).toMatchObject({ identical: true, turns: 2 });
    const louder = { ...echoTool, call: async (i: { text: string }) => ({ content: `ECHO: ${i.text}` }) };
    const report = await rerunSession(records, { tools: [louder] });
    expect(report.divergence).toMatchObject({ kind: 'tool_result', path: 'result.content' });
    expect(report.diff).toContain('ECHO: hi');
  });
});
