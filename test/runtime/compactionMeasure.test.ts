/**
 * The compaction record measures the context the way the trigger does: `tokensBefore` is the
 * size that crossed the threshold (last usage plus what was appended), `tokensAfter` the same
 * measure of the compacted context, which is what the next threshold check starts from.
 */
import { describe, expect, it } from 'vitest';
import { runSession, scriptedModel, text } from '../../src/testing/index.ts';
import { echoTool } from '../support/harness.ts';

const usage = (input: number, output: number) => ({ input_tokens: input, output_tokens: output });

describe('compaction.finished tokens', () => {
  it('before is what crossed the threshold; after is smaller when the summary replaces a long history', async () => {
    const long = 'x'.repeat(40_000); // ~10 000 estimated tokens: more than the tail keeps
    const { records, reasons } = await runSession({
      model: scriptedModel([
        {
          content: [{ type: 'tool_use', id: 'toolu_1', name: 'echo', input: { text: long } }],
          stop_reason: 'tool_use',
          usage: usage(12_500, 1_020),
        },
        { for: 'compaction', text: 'short summary', usage: usage(3_000, 10) },
        text('done'),
      ]),
      prompt: 'go',
      tools: [echoTool],
      settings: { autoCompactThreshold: 20_000 },
    });
    expect(reasons).toContain('auto_compact');
    const c = records.find((r) => r.type === 'compaction.finished');
    if (c?.type !== 'compaction.finished' || !c.data.ok) throw new Error('no successful compaction');
    // The trigger: 12 500 + 1 020 of usage, plus the ~10 000-token tool result appended after it.
    expect(c.data.tokensBefore).toBeGreaterThan(20_000);
    // The tool result is summarised away; the rest of the measure (system prompt, tools) stays.
    expect(c.data.tokensAfter).toBeLessThan(c.data.tokensBefore - 9_000);
    expect(c.data.tokensAfter).toBeGreaterThan(1_000);
  });
});
