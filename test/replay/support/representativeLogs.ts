import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { HooksOption } from '../../../src/hooks/types.ts';
import { parseScript } from '../../../src/model/script.ts';
import { ScriptedModelClient } from '../../../src/model/scripted.ts';
import { forkSession } from '../../../src/replay/fork.ts';
import { counterIds, seededRandom, VirtualClock } from '../../../src/runtime/determinism.ts';
import { Session } from '../../../src/runtime/session.ts';
import type { LogRecord } from '../../../src/store/records.ts';
import type { Tool } from '../../../src/tools/types.ts';
import { PROMPT_TOO_LONG, summary, text, tools, toolUse, usage } from '../../runtime/reasons/reasonSpec.ts';
import { echoTool, fixedStopHook, scriptedSession, textTurn, toolTurn } from '../../support/harness.ts';

/**
 * Real v2 logs written by the runtime, each going through a different part of the loop, for tests
 * that edit logs record by record. Deterministic: scripted model, virtual clock, counter ids.
 */
export async function representativeLogs(): Promise<Record<string, LogRecord[]>> {
  return {
    'tools, retries, max_tokens, stop hook, two runs': await toolsAndRetries(),
    'auto and reactive compaction': await compactions(),
    'denials, a tool error, refusal': await denials(),
    'resume after a crash mid-batch, then max turns': await resumed(),
    'hooks: context, blocks, stops, SessionEnd': await hooked(),
    'MCP tools, a second process referring to the tool list': await mcpTools(),
    'CLAUDE.md memory with an import and a warning, two runs': await memory(),
  };
}

/** CLAUDE.md memory read by two runs (a project file, its import, a refused cycle), then removed. */
async function memory(): Promise<LogRecord[]> {
  const dir = await mkdtemp(path.join(tmpdir(), 'reloop-tamper-memory-'));
  try {
    await mkdir(path.join(dir, '.git'));
    await writeFile(path.join(dir, 'CLAUDE.md'), 'Use pnpm. @notes.md\n');
    await writeFile(path.join(dir, 'notes.md'), 'Tabs. @CLAUDE.md\n');
    const h = await scriptedSession(
      [toolTurn([{ name: 'echo', input: { text: 'a' } }]), textTurn('one'), textTurn('two')],
      {
        cwd: dir,
        memory: { sources: ['project'] },
      },
    );
    await h.session.submit('first');
    await h.session.submit('second');
    return h.records();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Hooks of every kind deciding things (in-process callbacks, so the log is deterministic):
 * context before the first request and on tool results, a PreToolUse block, PostToolUse
 * feedback, a Stop block, a blocked prompt, a PostToolUse stop, and SessionEnd.
 */
async function hooked(): Promise<LogRecord[]> {
  const context = (text: string) => async () => ({ hookSpecificOutput: { additionalContext: text } });
  let stopped = false;
  const hooks: HooksOption = {
    SessionStart: [{ hooks: [context('use bun')], source: 'projectSettings' }],
    UserPromptSubmit: [
      {
        hooks: [
          async (input) =>
            String(input.prompt).includes('secret')
              ? { decision: 'block', reason: 'no secrets in prompts' }
              : { hookSpecificOutput: { additionalContext: `prompt length ${String(input.prompt).length}` } },
        ],
      },
    ],
    PreToolUse: [
      {
        matcher: 'echo',
        hooks: [
          async (input) =>
            (input.tool_input as { text: string }).text === 'b'
              ? { hookSpecificOutput: { permissionDecision: 'deny', permissionDecisionReason: 'not b' } }
              : { hookSpecificOutput: { additionalContext: 'echo is cheap' } },
        ],
      },
    ],
    PostToolUse: [
      {
        matcher: 'echo',
        hooks: [
          async (input) =>
            (input.tool_input as { text: string }).text === 'halt'
              ? { continue: false, stopReason: 'halt requested' }
              : { decision: 'block', reason: 'check the output' },
        ],
      },
    ],
    Stop: [
      {
        hooks: [
          async () => {
            if (stopped) return undefined;
            stopped = true;
            return { decision: 'block', reason: 'say what you did' };
          },
        ],
      },
    ],
    SessionEnd: [{ hooks: [async () => ({ systemMessage: 'bye' })] }],
  };
  const h = await scriptedSession(
    [
      toolTurn([
        { name: 'echo', input: { text: 'a' } },
        { name: 'echo', input: { text: 'b' } },
      ]),
      textTurn('done'),
      textTurn('I echoed a'),
      toolTurn([{ name: 'echo', input: { text: 'halt' } }]),
    ],
    { hooks },
  );
  await h.session.submit('echo a and b');
  await h.session.submit('the secret is 42');
  await h.session.submit('halt');
  await h.session.end();
  return h.records();
}

/** An in-process MCP server: one read-only tool, one not; a second process reconnects. */
function notesServer(): McpServer {
  const server = new McpServer({ name: 'notes', version: '1.0.0' });
  server.registerTool(
    'list',
    { description: 'Lists notes.', annotations: { readOnlyHint: true } },
    async () => ({
      content: [{ type: 'text', text: '(none)' }],
    }),
  );
  server.registerTool(
    'add',
    { description: 'Adds a note.', inputSchema: { text: z.string() } },
    async ({ text }) => ({
      content: [{ type: 'text', text: `added ${text}` }],
      isError: text === 'bad',
    }),
  );
  return server;
}

async function mcpTools(): Promise<LogRecord[]> {
  const h = await scriptedSession(
    [
      toolTurn([
        { name: 'mcp__notes__list', input: {} },
        { name: 'mcp__notes__add', input: { text: 'bad' } },
      ]),
      textTurn('done'),
      textTurn('second run done'),
    ],
    { mcpServers: { notes: notesServer() } },
  );
  await h.session.submit('take notes');
  await h.session.close();
  const again = await Session.open(h.session.id, {
    store: h.store,
    model: h.client,
    mcpServers: { notes: notesServer() },
    // Without the first process's echo tool, on purpose.
    acceptSetupChange: true,
  });
  await again.submit('and again');
  await again.close();
  return h.records();
}

async function toolsAndRetries(): Promise<LogRecord[]> {
  const h = await scriptedSession(
    [
      toolTurn([
        { name: 'echo', input: { text: 'a' } },
        { name: 'echo', input: { text: 'b' } },
      ]),
      { error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } },
      { error: { status: 429, type: 'rate_limit_error', message: 'slow down', retry_after_ms: 300 } },
      { text: 'partial', stop_reason: 'max_tokens', usage: { input_tokens: 10, output_tokens: 8192 } },
      { text: 'partial again', stop_reason: 'max_tokens', usage: { input_tokens: 10, output_tokens: 64000 } },
      textTurn('done'),
      textTurn('really done'),
      textTurn('second run done'),
    ],
    { stopHooks: [fixedStopHook([{ decision: 'block', reason: 'run the tests' }, { decision: 'allow' }])] },
  );
  await h.session.submit('fix it');
  await h.session.submit('and now this');
  return h.records();
}

async function compactions(): Promise<LogRecord[]> {
  const big = 'z'.repeat(2_000);
  const h = await scriptedSession(
    [
      tools([toolUse('a', 'echo', { text: big })], 'tool_use', usage(100, 20)),
      tools([toolUse('b', 'echo', { text: 'b' })], 'tool_use', usage(1_500, 20)),
      summary('SUMMARY one'),
      PROMPT_TOO_LONG,
      summary('SUMMARY two'),
      text('done'),
    ],
    { settings: { autoCompactThreshold: 1_000 }, compactTailTokens: 600 },
  );
  await h.session.submit('a task');
  return h.records();
}

async function denials(): Promise<LogRecord[]> {
  const failing: Tool<{ text: string }> = {
    ...echoTool,
    name: 'fails',
    async call() {
      throw new Error('disk on fire');
    },
  };
  const h = await scriptedSession(
    [
      tools([toolUse('d1', 'echo', { text: 'no' }), toolUse('d2', 'fails', { text: 'x' })]),
      tools([toolUse('d3', 'nope', {})]),
      { text: 'I will not', stop_reason: 'refusal', usage: usage(10, 1) },
    ],
    {
      tools: [echoTool, failing],
      canUseTool: (req) =>
        req.toolUseId === 'd1'
          ? { behavior: 'deny', message: 'not this one', by: 'rule:deny' }
          : { behavior: 'allow', by: 'default' },
    },
  );
  await h.session.submit('go');
  return h.records();
}

/** A run cut after its tools started (a fork taken there is a crashed session), then resumed. */
async function resumed(): Promise<LogRecord[]> {
  const h = await scriptedSession(
    [
      toolTurn([
        { name: 'echo', input: { text: 'a' }, id: 't1' },
        { name: 'write', input: { text: 'b' }, id: 't2' },
      ]),
      textTurn('done'),
    ],
    {
      tools: [echoTool, { ...echoTool, name: 'write', isReadOnly: false }],
    },
  );
  await h.session.submit('go');
  const started = (await h.records()).filter((r) => r.type === 'tool.started').at(-1)!;
  const forkId = await forkSession(h.store, h.session.id, started.seq, counterIds('f_'));
  const s = await Session.open(forkId, {
    store: h.store,
    model: new ScriptedModelClient(
      parseScript({ turns: [toolTurn([{ name: 'echo', input: { text: 'c' }, id: 't3' }]), textTurn('x')] }),
    ),
    clock: new VirtualClock(),
    random: seededRandom(1),
    ids: counterIds('f_'),
    tools: [echoTool],
    settings: { maxTurns: 1 },
    // Resumed with one of its two tools on purpose.
    acceptSetupChange: true,
  });
  await s.submit(null);
  const out: LogRecord[] = [];
  for await (const r of h.store.read(forkId)) out.push(r);
  return out;
}
