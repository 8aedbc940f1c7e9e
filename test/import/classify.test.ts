import { describe, expect, it } from 'vitest';
import { classifyLine } from '../../src/import/claudeCode/classify.ts';
import { parseTranscript } from '../../src/import/claudeCode/readTranscript.ts';

const classify = (line: Record<string, unknown>) => classifyLine(line, 1, () => JSON.stringify(line));
const kinds = (line: Record<string, unknown>) => classify(line).map((e) => e.kind);
const user = (content: unknown, extra: Record<string, unknown> = {}) => ({
  type: 'user',
  message: { role: 'user', content },
  timestamp: '2026-01-05T09:00:00.000Z',
  ...extra,
});
const assistant = (
  content: unknown,
  extra: Record<string, unknown> = {},
  message: Record<string, unknown> = {},
) => ({
  type: 'assistant',
  message: {
    id: 'msg_1',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content,
    stop_reason: null,
    ...message,
  },
  ...extra,
});

describe('what each transcript line means', () => {
  it.each([
    ['a typed prompt', user('fix it'), 'prompt'],
    ['a prompt as text blocks', user([{ type: 'text', text: 'fix it' }]), 'prompt'],
    ['tool results', user([{ type: 'tool_result', tool_use_id: 't', content: 'x' }]), 'toolResults'],
    ['isMeta text', user('Caveat: local commands below', { isMeta: true }), 'userMeta'],
    ['a slash command', user('<command-name>/model</command-name>'), 'userMeta'],
    ['local command output', user('<local-command-stdout>ok</local-command-stdout>'), 'userMeta'],
    ['bash mode', user('<bash-input>ls</bash-input>'), 'userMeta'],
    ['an interrupt', user([{ type: 'text', text: '[Request interrupted by user]' }]), 'interrupt'],
    ['an interrupt during tools', user('[Request interrupted by user for tool use]'), 'interrupt'],
    ['stop hook feedback', user('Stop hook feedback:\n[x]: no', { isMeta: true }), 'stopFeedback'],
    ['isCompactSummary', user('Summary…', { isCompactSummary: true }), 'compactSummary'],
    [
      'the compaction preamble',
      user('This session is being continued from a previous conversation that ran out of context.'),
      'compactSummary',
    ],
    ['a response chunk', assistant([{ type: 'text', text: 'hi' }]), 'assistant'],
    [
      'isApiErrorMessage',
      assistant([{ type: 'text', text: 'API Error: 529' }], { isApiErrorMessage: true }),
      'apiError',
    ],
    [
      'a synthetic message',
      assistant([{ type: 'text', text: 'No response requested.' }], {}, { model: '<synthetic>' }),
      'syntheticAssistant',
    ],
    [
      'compact_boundary',
      { type: 'system', subtype: 'compact_boundary', compactMetadata: { trigger: 'auto' } },
      'compactBoundary',
    ],
    [
      'stop_hook_summary',
      { type: 'system', subtype: 'stop_hook_summary', preventedContinuation: false },
      'stopHookSummary',
    ],
    [
      'api_error (a retry)',
      { type: 'system', subtype: 'api_error', retryAttempt: 1, error: { status: 529 } },
      'apiRetry',
    ],
    ['turn_duration', { type: 'system', subtype: 'turn_duration' }, 'bookkeeping'],
    ['informational', { type: 'system', subtype: 'informational' }, 'bookkeeping'],
    ['away_summary', { type: 'system', subtype: 'away_summary' }, 'bookkeeping'],
    ['local_command', { type: 'system', subtype: 'local_command' }, 'bookkeeping'],
    ['progress', { type: 'progress', data: { type: 'hook_progress' } }, 'bookkeeping'],
    ['file-history-snapshot', { type: 'file-history-snapshot', snapshot: {} }, 'bookkeeping'],
    ['queue-operation', { type: 'queue-operation', operation: 'enqueue' }, 'bookkeeping'],
    ['summary', { type: 'summary', summary: 'x', leafUuid: 'u' }, 'bookkeeping'],
    ['ai-title', { type: 'ai-title', aiTitle: 'x' }, 'bookkeeping'],
    ['custom-title', { type: 'custom-title', customTitle: 'x' }, 'bookkeeping'],
    ['agent-name', { type: 'agent-name', agentName: 'x' }, 'bookkeeping'],
    ['last-prompt', { type: 'last-prompt', lastPrompt: 'x' }, 'bookkeeping'],
    ['permission-mode', { type: 'permission-mode', permissionMode: 'plan' }, 'bookkeeping'],
    ['attachment', { type: 'attachment', attachment: { type: 'file' } }, 'bookkeeping'],
    ['an unknown type', { type: 'telepathy' }, 'unmapped'],
    ['an unknown system subtype', { type: 'system', subtype: 'quantum' }, 'unmapped'],
    ['no type at all', { hello: 1 }, 'unmapped'],
    ['a user line without a message', { type: 'user' }, 'unmapped'],
  ])('%s → %s', (_name, line, kind) => {
    expect(kinds(line)).toEqual([kind]);
  });

  it('reads the usage, stop reason and model of a response chunk', () => {
    const [e] = classify(
      assistant(
        [{ type: 'text', text: 'hi' }],
        {},
        {
          stop_reason: 'end_turn',
          usage: {
            input_tokens: 3,
            output_tokens: 4,
            cache_read_input_tokens: 5,
            cache_creation_input_tokens: 6,
          },
        },
      ),
    );
    expect(e).toMatchObject({
      kind: 'assistant',
      id: 'msg_1',
      stopReason: 'end_turn',
      usage: { inputTokens: 3, outputTokens: 4, cacheReadInputTokens: 5, cacheCreationInputTokens: 6 },
    });
  });

  it('keeps a retry line’s status, delay and attempt', () => {
    const [e] = classify({
      type: 'system',
      subtype: 'api_error',
      error: { status: 503, error: { error: { message: 'unavailable' } } },
      retryInMs: 558.9,
      retryAttempt: 2,
      maxRetries: 10,
    });
    expect(e).toMatchObject({
      kind: 'apiRetry',
      status: 503,
      message: 'unavailable',
      retryInMs: 558.9,
      attempt: 2,
    });
  });

  it('leaves out a content block reloop cannot hold, and says so', () => {
    const events = classify(
      assistant([
        { type: 'text', text: 'a' },
        { type: 'hologram', data: 1 },
      ]),
    );
    expect(events.map((e) => e.kind)).toEqual(['assistant', 'unmapped']);
    expect(events[1]).toMatchObject({
      why: "content block of type hologram has no place in reloop's message schema",
    });
    expect(events[0]).toMatchObject({ blocks: [{ type: 'text', text: 'a' }] });
  });

  it('links a Task result to the sub-agent it names', () => {
    const [e] = classify(
      user([{ type: 'tool_result', tool_use_id: 'toolu_t', content: 'done' }], {
        toolUseResult: { status: 'completed', agentId: 'a9' },
      }),
    );
    expect(e).toMatchObject({ kind: 'toolResults', agentIds: [['toolu_t', 'a9']] });
  });
});

describe('reading a transcript', () => {
  it('names malformed lines by number and goes on with the next', () => {
    const text = [
      JSON.stringify(user('one')),
      '{"type":"user", broken',
      '',
      '42',
      JSON.stringify(user('two')),
    ].join('\n');
    const t = parseTranscript(text, { file: 'x.jsonl' });
    expect(t.events.map((e) => [e.kind, e.line])).toEqual([
      ['prompt', 1],
      ['malformed', 2],
      ['malformed', 4],
      ['prompt', 5],
    ]);
    expect(t.info.lines).toBe(4);
  });

  it('gives a line without a timestamp its neighbour’s', () => {
    const text = [
      JSON.stringify({ type: 'file-history-snapshot' }),
      JSON.stringify(user('one', { timestamp: '2026-01-05T09:00:00.000Z' })),
      JSON.stringify({ type: 'summary', summary: 's' }),
    ].join('\n');
    const t = parseTranscript(text, { file: 'x.jsonl' });
    expect(t.events.map((e) => e.at)).toEqual([
      Date.UTC(2026, 0, 5, 9),
      Date.UTC(2026, 0, 5, 9),
      Date.UTC(2026, 0, 5, 9),
    ]);
  });

  it('takes the best title a line gives: the one the person set, then the generated one, then summary', () => {
    const text = [
      JSON.stringify({ type: 'custom-title', customTitle: 'Mine' }),
      JSON.stringify({ type: 'ai-title', aiTitle: 'Generated' }),
      JSON.stringify({ type: 'summary', summary: 'Old' }),
    ].join('\n');
    expect(parseTranscript(text, { file: 'x.jsonl' }).info.title).toBe('Mine');
  });

  it('puts sidechain lines of a main transcript aside, one group per sub-agent', () => {
    const side = (uuid: string, parentUuid: string | null, content: string) =>
      JSON.stringify(user(content, { isSidechain: true, uuid, parentUuid }));
    const text = [
      JSON.stringify(user('main')),
      side('s1', null, 'first agent'),
      side('s2', 's1', 'first agent, more'),
      side('t1', null, 'second agent'),
    ].join('\n');
    const t = parseTranscript(text, { file: 'x.jsonl' });
    expect(t.events).toHaveLength(1);
    expect(t.sidechains.map((g) => [g.key, g.events.length])).toEqual([
      ['s1', 2],
      ['t1', 1],
    ]);
    // A sub-agent's own file is all sidechain: nothing is put aside.
    expect(parseTranscript(text, { file: 'x.jsonl', asSidechain: true }).events).toHaveLength(4);
  });
});
