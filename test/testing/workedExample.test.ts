import type { Tool } from 'reloop';
import { apiError, coverageOf, runSession, scriptedModel, text, toolUse } from 'reloop/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

// The agent under test has a tool of its own.
const add: Tool<{ a: number; b: number }> = {
  name: 'add',
  description: 'Adds two numbers.',
  inputSchema: z.object({ a: z.number(), b: z.number() }),
  isReadOnly: true,
  isConcurrencySafe: () => true,
  async call({ a, b }) {
    return { content: String(a + b) };
  },
};

describe('the adding agent', () => {
  it('calls its tool, gets the sum back, then answers', async () => {
    const { result, reasons, records } = await runSession({
      model: scriptedModel([toolUse('add', { a: 2, b: 3 }), text('2 + 3 = 5')]),
      prompt: 'What is 2 + 3?',
      tools: [add],
    });
    expect(result).toMatchObject({ status: 'completed', reason: 'completed', turns: 2 });
    expect(reasons).toEqual([
      'query_built',
      'tool_use_requested',
      'tool_result_continuation',
      'query_built',
      'finish_requested',
      'completed',
    ]);
    const finished = records.find((r) => r.type === 'tool.finished');
    expect(finished?.data).toMatchObject({ name: 'add', outcome: 'ok', result: { content: '5' } });
  });

  it('retries an overloaded API, and gives up on a bad request', async () => {
    const overloaded = await runSession({
      model: scriptedModel([apiError(529, 'overloaded_error', 'Overloaded'), text('hello')]),
      prompt: 'hi',
    });
    expect(overloaded.reasons).toContain('transport_retry');
    expect(overloaded.result.status).toBe('completed');

    const rejected = await runSession({
      model: scriptedModel([apiError(400, 'invalid_request_error', 'messages: bad')]),
      prompt: 'hi',
    });
    expect(rejected.result).toMatchObject({ status: 'failed', reason: 'model_error' });

    // Together, the three paths cover these reasons of the chart, and not yet max_turns_reached.
    const paths = await runSession({
      model: scriptedModel([toolUse('add', { a: 1, b: 1 }), text('2')]),
      prompt: '1 + 1?',
      tools: [add],
    });
    const coverage = coverageOf([overloaded.records, rejected.records, paths.records]);
    expect(coverage.reasons.covered).toEqual(
      expect.arrayContaining(['transport_retry', 'model_error', 'tool_result_continuation']),
    );
    expect(coverage.reasons.missing).toContain('max_turns_reached');
    expect(coverage.edges.covered).toBeLessThan(coverage.edges.total);
  });
});
