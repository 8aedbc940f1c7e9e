import { describe, expect, it } from 'vitest';
import { Transcript, text, thinking, toolUse } from '../support/claudeCodeTranscript.ts';
import { mapLines, ofType, reasons, steps, types } from './support/map.ts';

const SID = 'aaaaaaaa-0000-4000-8000-000000000001';
const at = (t: number) => Date.UTC(2026, 0, 5, 9, 0, 0) + t * 1_000;

describe('responses', () => {
  it('merges streamed lines sharing message.id into one response, content in order', () => {
    const t = new Transcript({ sessionId: SID });
    t.prompt('go');
    t.assistant([thinking('plan'), text('Looking.'), toolUse('toolu_1', 'Read', { file_path: 'a' })], {
      usage: { input_tokens: 50, output_tokens: 7 },
    });
    t.toolResult('toolu_1', 'A');
    t.assistant([text('Done.')]);
    const m = mapLines(t);
    const responded = ofType(m, 'model.responded');
    expect(responded).toHaveLength(2);
    expect(responded[0]!.data.response.content.map((b) => b.type)).toEqual(['thinking', 'text', 'tool_use']);
    expect(responded[0]!.data.response.usage).toMatchObject({ inputTokens: 50, outputTokens: 7 });
    // Priced from the table: claude-sonnet-4-5 at $3 / $15 per million.
    expect(responded[0]!.data.response.usage.costUsd).toBeCloseTo((50 * 3 + 7 * 15) / 1e6, 9);
    expect(ofType(m, 'message.appended').filter((d) => d.data.origin === 'assistant')).toHaveLength(2);
  });

  it('lets content decide when every chunk says stop_reason null', () => {
    const t = new Transcript({ sessionId: SID });
    t.prompt('go');
    t.assistant([text('a'), toolUse('toolu_1', 'Bash', { command: 'ls' })]);
    t.toolResult('toolu_1', 'x');
    t.assistant([text('b')]);
    expect(reasons(mapLines(t))).toEqual([
      'query_built',
      'tool_use_requested',
      'tool_result_continuation',
      'query_built',
      'finish_requested',
      'completed',
    ]);
  });

  it('keeps the line timestamps as `at`, never going back', () => {
    const t = new Transcript({ sessionId: SID, stepMs: 1_000 });
    t.prompt('go');
    t.assistant([
      toolUse('toolu_1', 'Read', { file_path: 'a' }),
      toolUse('toolu_2', 'Read', { file_path: 'b' }),
    ]);
    t.toolResult('toolu_1', 'A');
    t.toolResult('toolu_2', 'B');
    t.assistant([text('ok')]);
    const m = mapLines(t);
    expect(m.drafts[0]!.at).toBe(at(0));
    expect(ofType(m, 'model.responded')[0]!.at).toBe(at(2));
    expect(ofType(m, 'tool.finished').map((d) => d.at)).toEqual([at(3), at(4)]);
    const ats = m.drafts.map((d) => d.at);
    expect(ats).toEqual([...ats].sort((a, b) => a - b));
  });
});

describe('tool results', () => {
  it('pairs each tool_result with its tool_use, in call order, whatever order they come in', () => {
    const t = new Transcript({ sessionId: SID });
    t.prompt('go');
    t.assistant([
      toolUse('toolu_1', 'Read', { file_path: 'a' }),
      toolUse('toolu_2', 'Bash', { command: 'x' }),
    ]);
    t.toolResult('toolu_2', 'boom', { isError: true, toolUseResult: { stdout: '', stderr: 'boom' } });
    t.toolResult('toolu_1', 'A');
    t.assistant([text('ok')]);
    const m = mapLines(t);
    expect(ofType(m, 'tool.started').map((d) => [d.data.toolUseId, d.data.readOnly])).toEqual([
      ['toolu_1', true],
      ['toolu_2', false],
    ]);
    const finished = ofType(m, 'tool.finished');
    expect(finished.map((d) => [d.data.toolUseId, d.data.outcome, d.data.result.isError])).toEqual([
      ['toolu_1', 'ok', false],
      ['toolu_2', 'error', true],
    ]);
    // From the line that streamed the call to the line with its result.
    expect(finished.map((d) => d.data.durationMs)).toEqual([3_000, 1_000]);
    const results = ofType(m, 'message.appended').find((d) => d.data.origin === 'tool_results')!;
    expect(results.data.message?.content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_1', content: 'A' },
      { type: 'tool_result', tool_use_id: 'toolu_2', content: 'boom', is_error: true },
    ]);
  });

  it('records a call the person rejected as a permission denied by the user', () => {
    const t = new Transcript({ sessionId: SID });
    t.prompt('go');
    t.assistant([toolUse('toolu_1', 'Bash', { command: 'rm -rf /' })]);
    t.toolResult(
      'toolu_1',
      "The user doesn't want to proceed with this tool use. The tool use was rejected.",
      {
        isError: true,
      },
    );
    t.assistant([text('ok, stopping')]);
    const m = mapLines(t);
    expect(ofType(m, 'permission.decided').map((d) => d.data)).toEqual([
      expect.objectContaining({ toolUseId: 'toolu_1', decision: 'ask', resolved: 'deny', by: 'user' }),
    ]);
    expect(ofType(m, 'tool.started')).toHaveLength(0);
    expect(ofType(m, 'tool.finished')[0]!.data.outcome).toBe('denied');
  });

  it('names a tool_result that answers no open tool_use instead of dropping it', () => {
    const t = new Transcript({ sessionId: SID });
    t.prompt('go');
    t.toolResult('toolu_ghost', 'x');
    const m = mapLines(t);
    expect(ofType(m, 'import.unmapped').map((d) => d.data.why)).toEqual([
      'tool_result for toolu_ghost, which no open tool_use asked for',
    ]);
  });
});

describe('compaction', () => {
  it('maps compact_boundary + isCompactSummary after tool results to auto_compact, compacted', () => {
    const t = new Transcript({ sessionId: SID });
    t.prompt('go');
    t.assistant([toolUse('toolu_1', 'Read', { file_path: 'a' })]);
    t.toolResult('toolu_1', 'A');
    t.compaction('the summary', { preTokens: 170_000, postTokens: 8_000 });
    t.assistant([text('continuing')]);
    const m = mapLines(t);
    expect(steps(m).slice(2, 5)).toEqual([
      'dispatchingTools → compacting (auto_compact)',
      'compacting → building (compacted)',
      'building → requesting (query_built)',
    ]);
    const [c] = ofType(m, 'compaction.finished');
    expect(c!.data).toMatchObject({ ok: true, mode: 'auto', tokensBefore: 170_000, tokensAfter: 8_000 });
    if (!c!.data.ok) throw new Error('unreachable');
    expect(c!.data.summary).toContain('the summary');
    expect(c!.data.messages).toHaveLength(1);
    // The request after the compaction sees the summary only.
    expect(ofType(m, 'model.requested')[1]!.data.messageCount).toBe(1);
  });

  it('keeps the prompt after the summary when the compaction comes at the prompt, with no transition', () => {
    const t = new Transcript({ sessionId: SID });
    t.prompt('first');
    t.assistant([text('one')]);
    t.prompt('second');
    t.compaction('sum');
    t.assistant([text('two')]);
    const m = mapLines(t);
    const [c] = ofType(m, 'compaction.finished');
    expect(c!.run).toBe('r2');
    if (!c!.data.ok) throw new Error('unreachable');
    expect(c!.data.messages?.map((x) => x.content)).toEqual([expect.stringContaining('sum'), 'second']);
    expect(reasons(m).filter((r) => r.includes('compact'))).toEqual([]);
  });

  it('records a manual compaction between runs outside any run', () => {
    const t = new Transcript({ sessionId: SID });
    t.prompt('first');
    t.assistant([text('one')]);
    t.user('<command-name>/compact</command-name>');
    t.compaction('sum', { trigger: 'manual' });
    const m = mapLines(t);
    expect(ofType(m, 'compaction.finished')[0]!.run).toBeNull();
    expect(ofType(m, 'message.appended').at(-1)!.run).toBeNull();
  });

  it('reads a summary message without a boundary (older versions) as a compaction', () => {
    const t = new Transcript({ sessionId: SID });
    t.user(
      'This session is being continued from a previous conversation that ran out of context. Earlier: x.',
    );
    t.prompt('go on');
    const m = mapLines(t);
    expect(ofType(m, 'compaction.finished')).toHaveLength(1);
    expect(ofType(m, 'user.message')).toHaveLength(1);
  });

  it('names a boundary that no summary follows', () => {
    const t = new Transcript({ sessionId: SID });
    t.system('compact_boundary', { compactMetadata: { trigger: 'auto' } });
    t.prompt('go');
    const m = mapLines(t);
    expect(ofType(m, 'compaction.finished')).toHaveLength(0);
    expect(ofType(m, 'import.unmapped')[0]!.data).toMatchObject({
      lineType: 'system:compact_boundary',
      why: 'compact_boundary with no summary message after it',
    });
  });
});

describe('model errors', () => {
  it('maps system api_error lines to transport_retry and backoff_elapsed, with their delay and attempt', () => {
    const t = new Transcript({ sessionId: SID });
    t.prompt('go');
    t.system('api_error', { error: { status: 529, message: 'overloaded' }, retryInMs: 500, retryAttempt: 1 });
    t.system('api_error', { error: { status: 500, message: 'boom' }, retryInMs: 1000, retryAttempt: 2 });
    t.assistant([text('ok')]);
    const m = mapLines(t);
    expect(reasons(m).slice(0, 6)).toEqual([
      'query_built',
      'transport_retry',
      'backoff_elapsed',
      'transport_retry',
      'backoff_elapsed',
      'finish_requested',
    ]);
    expect(ofType(m, 'model.failed').map((d) => [d.data.failure.kind, d.data.failure.overloaded])).toEqual([
      ['retryable', true],
      ['retryable', false],
    ]);
    expect(ofType(m, 'backoff.scheduled').map((d) => [d.data.attempt, d.data.delayMs])).toEqual([
      [1, 500],
      [2, 1000],
    ]);
    expect(ofType(m, 'model.requested').map((d) => d.data.attempt)).toEqual([1, 2, 3]);
  });

  it('reads an isApiErrorMessage line followed by a response as a failed call and its retry', () => {
    const t = new Transcript({ sessionId: SID });
    t.prompt('go');
    t.line({
      type: 'assistant',
      isApiErrorMessage: true,
      message: {
        id: 'e',
        role: 'assistant',
        model: '<synthetic>',
        content: [text('API Error: 529 Overloaded')],
      },
    });
    t.wait(4_000);
    t.assistant([text('ok')]);
    const m = mapLines(t);
    expect(reasons(m).slice(0, 4)).toEqual([
      'query_built',
      'transport_retry',
      'backoff_elapsed',
      'finish_requested',
    ]);
    expect(ofType(m, 'model.failed')[0]!.data.failure).toMatchObject({ kind: 'retryable', status: 529 });
    expect(ofType(m, 'backoff.scheduled')[0]!.data.delayMs).toBe(5_000);
  });

  it('ends the run model_error when no retry follows the API error, keeping its text', () => {
    const t = new Transcript({ sessionId: SID });
    t.prompt('go');
    t.line({
      type: 'assistant',
      isApiErrorMessage: true,
      apiErrorStatus: 401,
      message: {
        id: 'e',
        role: 'assistant',
        model: '<synthetic>',
        content: [text('API Error: 401 invalid key')],
      },
    });
    t.prompt('again');
    const m = mapLines(t);
    expect(steps(m)).toContain('requesting → failed (model_error)');
    expect(ofType(m, 'model.failed')[0]!.data.failure).toMatchObject({ kind: 'fatal', status: 401 });
    expect(ofType(m, 'run.ended')[0]!.data).toMatchObject({
      status: 'failed',
      reason: 'model_error',
      error: 'API Error: 401 invalid key',
    });
    // The API error text is no model output: it stays out of the history.
    expect(ofType(m, 'message.appended')).toHaveLength(0);
  });

  it('maps a prompt-too-long error followed by a compaction to compact_retry (reactive)', () => {
    const t = new Transcript({ sessionId: SID });
    t.prompt('go');
    t.line({
      type: 'assistant',
      isApiErrorMessage: true,
      message: {
        id: 'e',
        role: 'assistant',
        model: '<synthetic>',
        content: [text('API Error: 400 prompt is too long: 210000 tokens > 200000 maximum')],
      },
    });
    t.compaction('sum');
    t.assistant([text('ok')]);
    const m = mapLines(t);
    expect(steps(m).slice(1, 3)).toEqual([
      'requesting → compacting (compact_retry)',
      'compacting → building (compacted)',
    ]);
    expect(ofType(m, 'model.failed')[0]!.data.failure).toMatchObject({
      kind: 'prompt_too_long',
      promptTokens: 210_000,
      maxPromptTokens: 200_000,
    });
    expect(ofType(m, 'compaction.finished')[0]!.data.mode).toBe('reactive');
  });
});

describe('stop hooks', () => {
  it('maps a stop_hook_summary that allowed the finish to hook.decided allow, completed', () => {
    const t = new Transcript({ sessionId: SID });
    t.prompt('go');
    t.assistant([text('done')]);
    t.stopHookSummary({ command: 'npm test' });
    const m = mapLines(t);
    expect(ofType(m, 'hook.decided').map((d) => d.data)).toEqual([
      { hook: 'Stop', decision: 'allow', command: 'npm test', durationMs: 1200 },
    ]);
    expect(reasons(m).at(-1)).toBe('completed');
  });

  it('maps a block (summary + "Stop hook feedback") to stop_hook_continuation with the feedback appended', () => {
    const t = new Transcript({ sessionId: SID });
    t.prompt('go');
    t.assistant([text('done?')]);
    t.stopHookSummary({ command: 'lint' });
    t.user([text('Stop hook feedback:\n[lint]: 2 errors')], { isMeta: true });
    t.assistant([text('fixed')]);
    t.stopHookSummary({ command: 'lint' });
    const m = mapLines(t);
    expect(reasons(m)).toEqual([
      'query_built',
      'finish_requested',
      'stop_hook_continuation',
      'query_built',
      'finish_requested',
      'completed',
    ]);
    expect(ofType(m, 'hook.decided').map((d) => [d.data.decision, d.data.reason])).toEqual([
      ['block', '[lint]: 2 errors'],
      ['allow', undefined],
    ]);
    expect(ofType(m, 'message.appended').map((d) => d.data.origin)).toEqual([
      'assistant',
      'stop_hook_feedback',
      'assistant',
    ]);
  });

  it('maps preventedContinuation to stop_hook_prevented, the run failed with the stop reason', () => {
    const t = new Transcript({ sessionId: SID });
    t.prompt('go');
    t.assistant([text('done')]);
    t.stopHookSummary({ prevented: true, stopReason: 'policy says no' });
    const m = mapLines(t);
    expect(steps(m).at(-1)).toBe('awaitingStopHook → failed (stop_hook_prevented)');
    expect(ofType(m, 'run.ended')[0]!.data).toMatchObject({ status: 'failed', error: 'policy says no' });
  });
});

describe('interrupts', () => {
  it('maps an interrupt while the response streamed to an aborted call, keeping the partial text', () => {
    const t = new Transcript({ sessionId: SID });
    t.prompt('go');
    t.assistant([text('Once upon')]);
    t.interrupt();
    const m = mapLines(t);
    expect(steps(m)).toEqual(['building → requesting (query_built)', 'requesting → aborted (aborted)']);
    expect(types(m).slice(-5)).toEqual([
      'model.failed',
      'transition',
      'message.appended',
      'message.appended',
      'run.ended',
    ]);
    expect(ofType(m, 'model.failed')[0]!.data.failure.kind).toBe('aborted');
    expect(ofType(m, 'message.appended').map((d) => d.data.origin)).toEqual(['assistant', 'interrupted']);
  });

  it('maps an interrupt while tools ran to dispatchingTools → aborted, every call answered', () => {
    const t = new Transcript({ sessionId: SID });
    t.prompt('go');
    t.assistant([
      toolUse('toolu_1', 'Bash', { command: 'sleep 9' }),
      toolUse('toolu_2', 'Bash', { command: 'ls' }),
    ]);
    t.toolResult('toolu_1', '[Request interrupted by user for tool use]', { isError: true });
    t.interrupt(true);
    const m = mapLines(t);
    expect(steps(m).at(-1)).toBe('dispatchingTools → aborted (aborted)');
    expect(ofType(m, 'abort.requested')).toHaveLength(1);
    expect(ofType(m, 'tool.finished').map((d) => [d.data.outcome, d.data.synthetic ?? false])).toEqual([
      ['interrupted', false],
      ['interrupted', true],
    ]);
    expect(ofType(m, 'run.ended')[0]!.data).toMatchObject({ status: 'aborted', reason: 'aborted' });
  });

  it('maps an interrupt before any answer to a request that was aborted', () => {
    const t = new Transcript({ sessionId: SID });
    t.prompt('go');
    t.interrupt();
    const m = mapLines(t);
    expect(types(m)).toEqual([
      'run.started',
      'user.message',
      'transition',
      'model.requested',
      'abort.requested',
      'model.failed',
      'transition',
      'message.appended',
      'run.ended',
    ]);
  });
});

describe('runs', () => {
  it('counts bookkeeping lines by type and writes no record for them', () => {
    const t = new Transcript({ sessionId: SID });
    t.bare({ type: 'file-history-snapshot', messageId: 'm', snapshot: {} });
    t.bare({ type: 'queue-operation', operation: 'enqueue', content: 'x' });
    t.bare({ type: 'progress', data: { type: 'hook_progress' } });
    t.bare({ type: 'progress', data: { type: 'hook_progress' } });
    t.system('turn_duration', { durationMs: 1 });
    const m = mapLines(t);
    expect(m.drafts).toEqual([]);
    expect(m.bookkeeping).toEqual({
      'file-history-snapshot': 1,
      'queue-operation': 1,
      progress: 2,
      'system:turn_duration': 1,
    });
  });

  it('closes a run the next prompt cuts short as interrupted, and the next run answers its open calls', () => {
    const t = new Transcript({ sessionId: SID });
    t.prompt('go');
    t.assistant([toolUse('toolu_1', 'Bash', { command: 'sleep 9' })]);
    t.prompt('never mind');
    const m = mapLines(t);
    const ended = ofType(m, 'run.ended')[0]!;
    expect(ended.data).toMatchObject({
      status: 'aborted',
      reason: 'interrupted',
      interrupted: { state: 'dispatchingTools', inFlight: ['tool Bash (toolu_1)'] },
    });
    const repair = ofType(m, 'message.appended').find((d) => d.data.origin === 'interrupted')!;
    expect(repair.run).toBe('r2');
    expect(types(m).slice(-4)).toEqual(['run.started', 'tool.finished', 'message.appended', 'user.message']);
  });

  it('leaves a run the file cuts short open, as a crashed session is', () => {
    const t = new Transcript({ sessionId: SID });
    t.prompt('go');
    t.assistant([toolUse('toolu_1', 'Bash', { command: 'sleep 9' })]);
    const m = mapLines(t);
    expect(ofType(m, 'run.ended')).toHaveLength(0);
    expect(steps(m).at(-1)).toBe('requesting → dispatchingTools (tool_use_requested)');
  });

  it('joins prompts that come before any answer into one run', () => {
    const t = new Transcript({ sessionId: SID });
    t.prompt('one');
    t.prompt('two');
    t.assistant([text('ok')]);
    const m = mapLines(t);
    expect(ofType(m, 'run.started')).toHaveLength(1);
    expect(ofType(m, 'user.message')).toHaveLength(2);
  });

  it('opens a run for a response no prompt came before (a slash command expanded in a meta line)', () => {
    const t = new Transcript({ sessionId: SID });
    t.user('<command-message>review is running…</command-message>\n<command-name>/review</command-name>');
    t.user('Review the diff.', { isMeta: true });
    t.assistant([text('Looks good.')]);
    const m = mapLines(t);
    expect(types(m).slice(0, 4)).toEqual([
      'message.appended',
      'message.appended',
      'run.started',
      'transition',
    ]);
    expect(ofType(m, 'user.message')).toHaveLength(0);
  });

  it('maps the stop reasons older versions wrote on the last chunk', () => {
    const t = new Transcript({ sessionId: SID });
    t.prompt('a');
    t.assistant([text('no')], { stopReason: 'refusal' });
    t.prompt('b');
    t.assistant([text('part')], { stopReason: 'max_tokens' });
    t.user('Output token limit hit. Resume directly.', { isMeta: true });
    t.assistant([text('rest')], { stopReason: 'end_turn' });
    t.prompt('c');
    t.assistant([text('cut')], { stopReason: 'max_tokens' });
    t.assistant([text('whole')], { stopReason: 'end_turn' });
    t.prompt('d');
    t.assistant([text('cut again')], { stopReason: 'max_tokens' });
    t.prompt('e');
    t.assistant([text('searching')], { stopReason: 'pause_turn' });
    t.assistant([text('found')], { stopReason: 'end_turn' });
    const r = reasons(mapLines(t));
    for (const reason of [
      'refused',
      'max_tokens_recovery',
      'max_tokens_escalation',
      'max_tokens_exhausted',
      'pause_turn_continuation',
    ]) {
      expect(r).toContain(reason);
    }
  });

  it('records Task calls and the sub-agents their results and progress lines name', () => {
    const t = new Transcript({ sessionId: SID });
    t.prompt('go');
    t.assistant([
      toolUse('toolu_a', 'Task', { prompt: 'A?', subagent_type: 'Explore' }),
      toolUse('toolu_b', 'Agent', { prompt: 'B?' }),
    ]);
    t.bare({
      type: 'progress',
      data: { type: 'agent_progress', agentId: 'agent-b' },
      parentToolUseID: 'toolu_b',
    });
    t.toolResult('toolu_a', 'A.', { toolUseResult: { status: 'completed', agentId: 'agent-a' } });
    t.toolResult('toolu_b', 'B.');
    const { links } = mapLines(t);
    expect([...links.tasks]).toEqual([
      ['toolu_a', { run: 'r1', agent: 'Explore', prompt: 'A?' }],
      ['toolu_b', { run: 'r1', agent: null, prompt: 'B?' }],
    ]);
    expect(Object.fromEntries(links.agents)).toEqual({ 'agent-a': 'toolu_a', 'agent-b': 'toolu_b' });
  });
});
