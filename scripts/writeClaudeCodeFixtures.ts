/**
 * Writes the synthetic Claude Code projects folder the importer's tests read
 * (test/fixtures/claude-code/projects). Every line is made up here — no real transcript is
 * copied — in the layout Claude Code uses. Run after changing a scenario, then check the diff:
 *
 *   node --import tsx scripts/writeClaudeCodeFixtures.ts
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { AGENT, PROJECT, SID, subagentFile, transcriptFile } from '../test/import/support/fixtures.ts';
import { Transcript, text, thinking, toolUse } from '../test/support/claudeCodeTranscript.ts';

const files = new Map<string, string>();
const put = (file: string, t: Transcript | string) => files.set(file, typeof t === 'string' ? t : t.jsonl());

// 1. A tool round, every bookkeeping line type, stop hook allowing, a second run after a slash command.
{
  const t = new Transcript({ sessionId: SID.tools, salt: 1 });
  t.bare({ type: 'permission-mode', permissionMode: 'acceptEdits', sessionId: SID.tools });
  t.bare({
    type: 'file-history-snapshot',
    messageId: 'm0',
    snapshot: { trackedFileBackups: {} },
    isSnapshotUpdate: false,
  });
  t.prompt('The test in sum.test.js fails. Fix it.');
  t.line({
    type: 'attachment',
    attachment: { type: 'nested_memory', path: 'CLAUDE.md', content: 'be brief' },
  });
  t.assistant(
    [
      thinking('The test probably checks sum().'),
      text('Let me look at the code and run the test.'),
      toolUse('toolu_t1', 'Read', { file_path: '/work/demo/sum.js' }),
      toolUse('toolu_t2', 'Bash', { command: 'npm test' }),
    ],
    { usage: { input_tokens: 1200, output_tokens: 80, cache_read_input_tokens: 3000 } },
  );
  t.line({
    type: 'progress',
    data: { type: 'hook_progress', hookEvent: 'PreToolUse' },
    toolUseID: 'toolu_t2',
  });
  t.toolResult('toolu_t1', '1\tmodule.exports = (a, b) => a - b;', {
    toolUseResult: { type: 'text', file: { filePath: '/work/demo/sum.js', numLines: 1 } },
  });
  t.toolResult('toolu_t2', 'FAIL sum.test.js: expected 3, got -1', {
    isError: true,
    toolUseResult: { stdout: '', stderr: 'FAIL', interrupted: false },
  });
  t.assistant([
    toolUse('toolu_t3', 'Edit', { file_path: '/work/demo/sum.js', old_string: 'a - b', new_string: 'a + b' }),
  ]);
  t.toolResult('toolu_t3', 'The file /work/demo/sum.js has been updated successfully.');
  t.assistant([text('Fixed: sum() subtracted instead of adding.')], {
    usage: { input_tokens: 1500, output_tokens: 30 },
  });
  t.stopHookSummary({ command: 'npm test' });
  t.system('turn_duration', { durationMs: 42_000, messageCount: 9 });
  t.bare({
    type: 'queue-operation',
    operation: 'enqueue',
    timestamp: '2026-01-05T09:01:00.000Z',
    content: 'also add a test',
    sessionId: SID.tools,
  });
  t.bare({
    type: 'queue-operation',
    operation: 'remove',
    timestamp: '2026-01-05T09:01:01.000Z',
    sessionId: SID.tools,
  });
  t.bare({ type: 'ai-title', aiTitle: 'Fix sum() in sum.js', sessionId: SID.tools });
  t.bare({ type: 'summary', summary: 'Fixing sum', leafUuid: 'x' });
  t.bare({ type: 'last-prompt', lastPrompt: 'The test in sum.test.js fails. Fix it.', sessionId: SID.tools });
  t.bare({ type: 'agent-name', agentName: 'main', sessionId: SID.tools });
  t.user(
    '<command-name>/model</command-name>\n<command-message>model</command-message>\n<command-args></command-args>',
  );
  t.user('<local-command-stdout>Set model to claude-opus-4-6</local-command-stdout>');
  t.system('local_command', {
    content: '<local-command-stdout>Set model to claude-opus-4-6</local-command-stdout>',
  });
  t.system('informational', { content: 'Model changed' });
  t.prompt('Now add a test for negative numbers.');
  t.assistant([toolUse('toolu_t4', 'Write', { file_path: '/work/demo/neg.test.js', content: 'test()' })], {
    model: 'claude-opus-4-6',
  });
  t.toolResult('toolu_t4', 'File created successfully at: /work/demo/neg.test.js');
  t.assistant([text('Added neg.test.js.')], { model: 'claude-opus-4-6' });
  t.system('away_summary', { content: 'Added a test' });
  put(transcriptFile(SID.tools), t);
}

// 2. Compaction: auto after tools, at a prompt, manual between runs; the summariser's own transcript.
const SUMMARY_1 = 'Summary: the user wants sum() fixed; sum.js was read; the test was run and failed.';
{
  const t = new Transcript({ sessionId: SID.compaction, salt: 2 });
  t.prompt('Refactor the parser.');
  t.assistant([toolUse('toolu_c1', 'Grep', { pattern: 'parse' })], {
    usage: { input_tokens: 165_000, output_tokens: 40 },
  });
  t.toolResult('toolu_c1', 'src/parser.js:1:function parse() {}');
  t.compaction(SUMMARY_1, { trigger: 'auto', preTokens: 168_000, postTokens: 9_000 });
  t.assistant([text('Continuing: the parser is in src/parser.js. Done.')]);
  t.prompt('And the lexer?');
  t.compaction('Summary: parser refactored; the user now asks about the lexer.', {
    trigger: 'auto',
    preTokens: 170_000,
  });
  t.assistant([text('The lexer is fine.')]);
  t.user('<command-name>/compact</command-name>\n<command-message>compact</command-message>');
  t.compaction('Summary: parser and lexer reviewed.', {
    trigger: 'manual',
    preTokens: 40_000,
    postTokens: 2_000,
  });
  t.user('<local-command-stdout>Compacted</local-command-stdout>');
  t.prompt('Thanks. Anything else?');
  t.assistant([text('No.')]);
  put(transcriptFile(SID.compaction), t);

  const s = new Transcript({
    sessionId: SID.compaction,
    agentId: AGENT.compact,
    salt: 3,
    start: Date.UTC(2026, 0, 5, 9, 0, 2),
  });
  s.prompt('Your task is to create a detailed summary of the conversation so far.');
  s.assistant([text(SUMMARY_1)], {
    model: 'claude-sonnet-4-5-20250929',
    usage: { input_tokens: 160_000, output_tokens: 900 },
  });
  put(subagentFile(SID.compaction, AGENT.compact), s);
}

// 3. Model errors: retries Claude Code logged, a retried API error, reactive compaction, fatal errors.
{
  const t = new Transcript({ sessionId: SID.errors, salt: 4 });
  t.prompt('Run the build.');
  t.system('api_error', {
    level: 'error',
    error: {
      status: 529,
      error: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
    },
    retryInMs: 523.4,
    retryAttempt: 1,
    maxRetries: 10,
  });
  t.system('api_error', {
    level: 'error',
    error: { status: 529, message: 'overloaded' },
    retryInMs: 1104,
    retryAttempt: 2,
    maxRetries: 10,
  });
  t.assistant([text('The build passes.')]);
  t.prompt('Now deploy it.');
  t.assistant([toolUse('toolu_e1', 'Bash', { command: 'make deploy' })]);
  t.toolResult('toolu_e1', 'deployed');
  t.line({
    type: 'assistant',
    isApiErrorMessage: true,
    error: 'unknown',
    message: {
      id: 'err1',
      role: 'assistant',
      model: '<synthetic>',
      content: [text('API Error: Connection lost mid-response. The response above may be incomplete.')],
      stop_reason: 'stop_sequence',
      usage: { input_tokens: 0, output_tokens: 0 },
    },
  });
  t.wait(2_000);
  t.assistant([text('Deployed.')]);
  t.prompt('Summarise the whole log file.');
  t.line({
    type: 'assistant',
    isApiErrorMessage: true,
    apiErrorStatus: 400,
    error: 'invalid_request',
    message: {
      id: 'err2',
      role: 'assistant',
      model: '<synthetic>',
      content: [text('API Error: 400 prompt is too long: 210000 tokens > 200000 maximum')],
      stop_reason: 'stop_sequence',
      usage: { input_tokens: 0, output_tokens: 0 },
    },
  });
  t.compaction('Summary: build and deploy done; the log is huge.', {
    trigger: 'auto',
    preTokens: 210_000,
    postTokens: 5_000,
  });
  t.assistant([text('The log shows three warnings.')]);
  t.prompt('Check the status page.');
  t.line({
    type: 'assistant',
    isApiErrorMessage: true,
    apiErrorStatus: 429,
    error: 'rate_limit',
    message: {
      id: 'err3',
      role: 'assistant',
      model: '<synthetic>',
      content: [text("You've hit your limit · resets 1:20am")],
      stop_reason: 'stop_sequence',
      usage: { input_tokens: 0, output_tokens: 0 },
    },
  });
  t.prompt('Try once more with everything.');
  t.line({
    type: 'assistant',
    isApiErrorMessage: true,
    message: {
      id: 'err4',
      role: 'assistant',
      model: '<synthetic>',
      content: [text('Prompt is too long')],
      stop_reason: 'stop_sequence',
      usage: { input_tokens: 0, output_tokens: 0 },
    },
  });
  put(transcriptFile(SID.errors), t);
}

// 4. Stop hooks: a block with its feedback, then allowed; a hook that prevents continuation.
{
  const t = new Transcript({ sessionId: SID.stopHooks, salt: 5 });
  t.prompt('Fix the lint errors.');
  t.assistant([text('Done, I think.')]);
  t.stopHookSummary({ command: 'npm run lint' });
  t.user([text('Stop hook feedback:\n[npm run lint]: 2 lint errors remain in src/a.ts')], { isMeta: true });
  t.assistant([
    toolUse('toolu_s1', 'Edit', { file_path: 'src/a.ts', old_string: 'var', new_string: 'const' }),
  ]);
  t.toolResult('toolu_s1', 'The file src/a.ts has been updated successfully.');
  t.assistant([text('Lint is clean now.')]);
  t.stopHookSummary({ command: 'npm run lint' });
  t.prompt('Push it.');
  t.assistant([text('Pushing is not allowed here.')]);
  t.stopHookSummary({ command: 'guard.sh', prevented: true, stopReason: 'pushing is blocked by policy' });
  put(transcriptFile(SID.stopHooks), t);
}

// 5. Interrupts: while streaming, while a tool runs, a rejected call, before any answer, between runs.
{
  const t = new Transcript({ sessionId: SID.interrupts, salt: 6 });
  t.prompt('Write a long essay.');
  t.assistant([text('Once upon a time')]);
  t.interrupt();
  t.prompt('Run the slow tests.');
  t.assistant([toolUse('toolu_i1', 'Bash', { command: 'npm run test:slow' })]);
  t.toolResult('toolu_i1', '[Request interrupted by user for tool use]', { isError: true });
  t.interrupt(true);
  t.prompt('Delete the build folder.');
  t.assistant([toolUse('toolu_i2', 'Bash', { command: 'rm -rf build' })]);
  t.toolResult(
    'toolu_i2',
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.",
    { isError: true },
  );
  t.interrupt(true);
  t.prompt('What time is it?');
  t.interrupt();
  t.prompt('Say hi.');
  t.assistant([text('Hi.')]);
  t.interrupt();
  put(transcriptFile(SID.interrupts), t);
}

// 6. Sub-agents: three Task calls, linked by meta file, by their result, by progress lines and by prompt.
{
  const t = new Transcript({ sessionId: SID.subagents, salt: 7 });
  t.prompt('Survey the repository.');
  t.assistant([
    text('I will ask three agents.'),
    toolUse('toolu_task_a', 'Task', {
      description: 'List modules',
      prompt: 'List the modules of the repo.',
      subagent_type: 'Explore',
    }),
    toolUse('toolu_task_b', 'Task', {
      description: 'Find TODOs',
      prompt: 'Find every TODO.',
      subagent_type: 'general-purpose',
    }),
    toolUse('toolu_task_c', 'Task', { description: 'Count lines', prompt: 'Count the lines of code.' }),
  ]);
  t.line({
    type: 'progress',
    data: { type: 'agent_progress', agentId: AGENT.byResult, prompt: 'Find every TODO.' },
    parentToolUseID: 'toolu_task_b',
    toolUseID: 'agent_msg_1',
  });
  t.toolResult('toolu_task_a', [text('Modules: core, cli.')], {
    toolUseResult: {
      status: 'completed',
      agentId: AGENT.explore,
      content: [text('Modules: core, cli.')],
      totalTokens: 900,
    },
  });
  t.toolResult('toolu_task_b', [text('2 TODOs.')], {
    toolUseResult: { status: 'completed', content: [text('2 TODOs.')] },
  });
  t.toolResult('toolu_task_c', [text('1200 lines.')], {
    toolUseResult: { status: 'completed', content: [text('1200 lines.')] },
  });
  t.assistant([text('Modules core and cli, 2 TODOs, 1200 lines.')]);
  put(transcriptFile(SID.subagents), t);

  const agent = (agentId: string, salt: number, prompt: string, answer: string, tool?: [string, string]) => {
    const s = new Transcript({
      sessionId: SID.subagents,
      agentId,
      salt,
      start: Date.UTC(2026, 0, 5, 9, 0, 3),
    });
    s.prompt(prompt);
    if (tool) {
      s.assistant([toolUse(`toolu_${agentId}`, tool[0], { pattern: '**/*' })], {
        model: 'claude-haiku-4-5-20251001',
      });
      s.toolResult(`toolu_${agentId}`, tool[1]);
    }
    s.assistant([text(answer)], { model: 'claude-haiku-4-5-20251001' });
    return s;
  };
  put(
    subagentFile(SID.subagents, AGENT.explore),
    agent(AGENT.explore, 8, 'List the modules of the repo.', 'Modules: core, cli.', ['Glob', 'core/\ncli/']),
  );
  files.set(
    subagentFile(SID.subagents, AGENT.explore).replace(/\.jsonl$/, '.meta.json'),
    `${JSON.stringify({ agentType: 'Explore', description: 'List modules', toolUseId: 'toolu_task_a' })}\n`,
  );
  put(
    subagentFile(SID.subagents, AGENT.byResult),
    agent(AGENT.byResult, 9, 'Find every TODO.', '2 TODOs.', ['Grep', 'a.ts:1: TODO\nb.ts:9: TODO']),
  );
  put(
    subagentFile(SID.subagents, AGENT.byPrompt),
    agent(AGENT.byPrompt, 10, 'Count the lines of code.', '1200 lines.'),
  );
  put(
    subagentFile(SID.subagents, AGENT.suggestion),
    agent(AGENT.suggestion, 11, 'Suggest the next prompt.', 'Run the tests.'),
  );
  // Not a transcript: a workflow journal inside the session folder.
  files.set(
    path.join(PROJECT, SID.subagents, 'subagents', 'workflows', 'wf_1', 'journal.jsonl'),
    '{"step":1}\n',
  );
}

// 7. Lines the importer cannot map or parse, a run the next prompt cuts short, a run the file cuts short.
{
  const t = new Transcript({ sessionId: SID.malformed, salt: 12 });
  t.prompt('Start.');
  t.stopHookSummary();
  t.raw('{"type":"user","message":{"role":"user","content":"broken');
  t.raw('[1, 2, 3]');
  t.line({ type: 'telepathy', thought: 'hello' });
  t.system('quantum_flux', { content: 'unknown subtype' });
  t.line({ note: 'a line without a type' });
  t.assistant([text('Answer with a block reloop does not know.'), { type: 'mystery_block', data: 'x' }]);
  t.toolResult('toolu_nowhere', 'a result nobody asked for');
  t.system('compact_boundary', { compactMetadata: { trigger: 'auto', preTokens: 1 } });
  t.prompt('Run it.');
  t.assistant([
    toolUse('toolu_m1', 'Bash', { command: 'sleep 100' }),
    toolUse('toolu_m2', 'Read', { file_path: 'x' }),
  ]);
  t.toolResult('toolu_m2', 'x contents');
  t.prompt('Forget that; read y.');
  t.assistant([toolUse('toolu_m3', 'Read', { file_path: 'y' })]);
  t.raw('{"type":"user","message":{"role":"user","content":[{"type":"tool_res');
  put(transcriptFile(SID.malformed), t.jsonl().replace(/\n$/, ''));
}

// 8. Stop reasons older versions wrote on the last chunk: refusal, max_tokens (recovery, escalation, exhausted), pause_turn, window exceeded.
{
  const t = new Transcript({ sessionId: SID.stopReasons, salt: 13, version: '1.0.80' });
  t.prompt('Do something forbidden.');
  t.assistant([text('I cannot help with that.')], { stopReason: 'refusal' });
  t.prompt('Write the full report.');
  t.assistant([text('Report part one…')], { stopReason: 'max_tokens' });
  t.user('Output token limit hit. Resume directly from where you stopped.', { isMeta: true });
  t.assistant([text('…part two.')], { stopReason: 'end_turn' });
  t.prompt('Write the appendix.');
  t.assistant([text('Appendix…')], { stopReason: 'max_tokens' });
  t.assistant([text('Appendix, in full.')], { stopReason: 'end_turn' });
  t.prompt('Write the index.');
  t.assistant([text('Index…')], { stopReason: 'max_tokens' });
  t.prompt('Search the web for it.');
  t.assistant([{ type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'x' } }], {
    stopReason: 'pause_turn',
  });
  t.assistant([text('Found it.')], { stopReason: 'end_turn' });
  t.prompt('Read everything.');
  t.assistant([text('…')], { stopReason: 'model_context_window_exceeded' });
  t.compaction('Summary: reports written.', { preTokens: 200_000, postTokens: 3_000 });
  t.assistant([text('Read, summarised.')], { stopReason: 'end_turn' });
  put(transcriptFile(SID.stopReasons), t);
}

// 9. An older transcript with its sub-agent inline (isSidechain lines in the main file).
{
  const t = new Transcript({ sessionId: SID.inlineSidechain, salt: 14, version: '1.0.30' });
  t.prompt('Ask an agent for the license.');
  t.assistant([
    toolUse('toolu_in1', 'Task', { description: 'License', prompt: 'Which license does the repo use?' }),
  ]);
  const s = new Transcript({
    sessionId: SID.inlineSidechain,
    agentId: 'inline',
    salt: 15,
    start: Date.UTC(2026, 0, 5, 9, 0, 2),
    version: '1.0.30',
  });
  s.prompt('Which license does the repo use?');
  s.assistant([toolUse('toolu_in2', 'Read', { file_path: 'LICENSE' })]);
  s.toolResult('toolu_in2', 'MIT License');
  s.assistant([text('MIT.')]);
  // Inline sidechain lines of that era carry no agentId: drop it, keep isSidechain.
  for (const line of s.lines) {
    const { agentId: _, ...rest } = JSON.parse(line) as Record<string, unknown>;
    t.raw(JSON.stringify(rest));
  }
  t.toolResult('toolu_in1', [text('MIT.')]);
  t.assistant([text('The repo is MIT licensed.')]);
  put(transcriptFile(SID.inlineSidechain), t);
}

await rm(path.dirname(PROJECT), { recursive: true, force: true });
for (const [file, body] of files) {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, body);
}
console.log(`wrote ${files.size} files under ${path.dirname(PROJECT)}`);
