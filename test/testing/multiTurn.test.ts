/** `runSession({ prompts })`: one session, one run per prompt, the history carried over. */
import { describe, expect, it } from 'vitest';
import type { LogRecord } from '../../src/store/records.ts';
import { runSession, scriptedModel, text, toolUse } from '../../src/testing/index.ts';
import { echoTool } from '../support/harness.ts';

const of = <T extends LogRecord['type']>(records: LogRecord[], type: T) =>
  records.filter((r): r is Extract<LogRecord, { type: T }> => r.type === type);

const conversation = () =>
  runSession({
    model: scriptedModel([toolUse('echo', { text: 'a' }), text('echoed a'), text('and again: a')]),
    prompts: ['echo a', 'once more?'],
    tools: [echoTool],
  });

describe('runSession({ prompts })', () => {
  it('runs each prompt as a new run of the same session, the model seeing the whole history', async () => {
    const { result, results, records, reasons } = await conversation();
    expect(results.map((r) => [r.status, r.turns])).toEqual([
      ['completed', 2],
      ['completed', 1],
    ]);
    expect(result).toBe(results[1]);
    expect(new Set(results.map((r) => r.sessionId)).size).toBe(1);
    expect(of(records, 'run.started')).toHaveLength(2);
    expect(of(records, 'user.message').map((r) => r.data.message.content)).toEqual(['echo a', 'once more?']);
    // The second run's request holds the first run's four messages and the new prompt.
    expect(of(records, 'model.requested').map((r) => r.data.messageCount)).toEqual([1, 3, 5]);
    expect(reasons.filter((r) => r === 'completed')).toHaveLength(2);
  });

  it('is deterministic on the virtual clock: the same conversation writes the same records', async () => {
    const a = await conversation();
    const b = await conversation();
    expect(b.records).toEqual(a.records);
    expect(new Set(a.records.map((r) => r.at)).size).toBe(1);
  });

  it('stops after a run that parks on an approval; prompt alone still works', async () => {
    const parked = await runSession({
      model: scriptedModel([toolUse('echo', { text: 'may I?' }), text('never asked')]),
      prompts: ['first', 'second'],
      tools: [echoTool],
      canUseTool: () => ({ behavior: 'ask' }),
    });
    expect(parked.results.map((r) => r.status)).toEqual(['paused']);
    expect(of(parked.records, 'user.message')).toHaveLength(1);

    const single = await runSession({ model: scriptedModel([text('hi')]), prompt: 'hello' });
    expect(single.results).toEqual([single.result]);
    expect(single.result.status).toBe('completed');
  });

  it('refuses an empty list of prompts, and needs a prompt or prompts', async () => {
    await expect(runSession({ model: scriptedModel([text('x')]), prompts: [] })).rejects.toThrow(
      /prompts is empty/,
    );
    // @ts-expect-error a prompt or prompts is required
    const missing = () => runSession({ model: scriptedModel([text('x')]) });
    void missing;
  });
});
