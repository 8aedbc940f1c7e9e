import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { HooksOption } from '../../src/hooks/types.ts';
import { queryLoopMachine } from '../../src/machines/queryLoop.machine.ts';
import { ReplayMismatchError } from '../../src/replay/errors.ts';
import { recordedModel } from '../../src/replay/recordedModel.ts';
import { type RerunOptions, rerun } from '../../src/replay/rerun.ts';
import { Session } from '../../src/runtime/session.ts';
import { MemoryEventStore } from '../../src/store/memoryStore.ts';
import type { LogRecord } from '../../src/store/records.ts';
import { createPermissionPolicy } from '../../src/tools/permissions/index.ts';
import type { Tool } from '../../src/tools/types.ts';
import { scriptedSession, textTurn, toolTurn } from '../support/harness.ts';

const tickets: Record<string, string> = { 'T-1': 'open', 'T-2': 'closed' };

function lookupTicket(
  answer = (id: string) => `ticket ${id}: ${tickets[id] ?? 'unknown'}`,
): Tool<{ id: string }> {
  return {
    name: 'lookupTicket',
    description: 'Looks a ticket up by its id.',
    inputSchema: z.object({ id: z.string() }),
    isReadOnly: true,
    isConcurrencySafe: () => true,
    async call(input) {
      return { content: answer(input.id) };
    },
  };
}

const system = 'You answer questions about tickets.';
const hooks = (deny = false): HooksOption => ({
  PreToolUse: [
    {
      matcher: 'lookupTicket',
      hooks: [
        async () =>
          deny
            ? { hookSpecificOutput: { permissionDecision: 'deny', permissionDecisionReason: 'no lookups' } }
            : { hookSpecificOutput: { additionalContext: 'lookups are cheap' } },
      ],
    },
  ],
});

/** What the agent of the day is made of; each test changes one part. */
function agent(change: Partial<RerunOptions> = {}): RerunOptions {
  return {
    tools: [lookupTicket()],
    settings: { system },
    hooks: hooks(),
    canUseTool: createPermissionPolicy({ mode: 'default', cwd: process.cwd() }),
    cwd: process.cwd(),
    ...change,
  };
}

async function recordedSession(): Promise<LogRecord[]> {
  const { tools, settings, hooks: h, canUseTool, cwd } = agent();
  const s = await scriptedSession(
    [
      toolTurn([{ name: 'lookupTicket', input: { id: 'T-1' }, id: 't1' }]),
      textTurn('T-1 is open.'),
      toolTurn([{ name: 'lookupTicket', input: { id: 'T-2' }, id: 't2' }]),
      textTurn('T-2 is closed.'),
    ],
    { tools, settings, hooks: h, canUseTool, cwd },
  );
  await s.session.submit('Is T-1 open?');
  await s.session.submit('And T-2?');
  return s.records();
}

const seqOf = (records: LogRecord[], type: LogRecord['type'], nth = 0) =>
  records.filter((r) => r.type === type)[nth]!.seq;

describe('rerun: the recorded model, the current code', () => {
  it('a session recorded with a custom tool reruns identical', async () => {
    const records = await recordedSession();
    const report = await rerun(records, agent());
    expect(report.divergence).toBeNull();
    expect(report).toMatchObject({ identical: true, turns: 4, diff: null });
  });

  it("a changed tool output: tool_result at the call's tool.finished", async () => {
    const records = await recordedSession();
    const report = await rerun(records, agent({ tools: [lookupTicket((id) => `ticket ${id}: archived`)] }));
    expect(report.divergence).toEqual({
      seq: seqOf(records, 'tool.finished'),
      kind: 'tool_result',
      path: 'result.content',
      recorded: 'ticket T-1: open\n\nPreToolUse hook additional context: lookups are cheap',
      current: 'ticket T-1: archived\n\nPreToolUse hook additional context: lookups are cheap',
    });
    expect(report.diff).toContain('-     "content": "ticket T-1: open');
    expect(report.diff).toContain('+     "content": "ticket T-1: archived');
  });

  it("a changed input schema: request, at the first request, naming the tool's schema", async () => {
    const records = await recordedSession();
    const changed = { ...lookupTicket(), inputSchema: z.object({ id: z.string(), verbose: z.boolean() }) };
    const report = await rerun(records, agent({ tools: [changed as never] }));
    expect(report.divergence).toMatchObject({
      seq: seqOf(records, 'model.requested'),
      kind: 'request',
      path: 'tools[lookupTicket].input_schema.properties.verbose',
      recorded: undefined,
      current: { type: 'boolean' },
    });
  });

  it('a changed system prompt: request, path system', async () => {
    const records = await recordedSession();
    const report = await rerun(records, agent({ settings: { system: 'You are terse.' } }));
    expect(report.divergence).toEqual({
      seq: seqOf(records, 'model.requested'),
      kind: 'request',
      path: 'system',
      recorded: system,
      current: 'You are terse.',
    });
  });

  it('a changed permission rule: permission, at the call it decides', async () => {
    const records = await recordedSession();
    const canUseTool = createPermissionPolicy({
      mode: 'default',
      deny: ['lookupTicket'],
      cwd: process.cwd(),
    });
    const report = await rerun(records, agent({ canUseTool }));
    expect(report.divergence).toMatchObject({
      seq: seqOf(records, 'permission.decided'),
      kind: 'permission',
      path: 'decision',
      recorded: 'allow',
      current: 'deny',
    });
  });

  it("a changed hook decision: hook, at the hook's record", async () => {
    const records = await recordedSession();
    const report = await rerun(records, agent({ hooks: hooks(true) }));
    expect(report.divergence).toMatchObject({
      seq: seqOf(records, 'hook.decided'),
      kind: 'hook',
      path: 'decision',
    });
  });

  it('a changed guard of the chart: transition, at the first edge taken otherwise', async () => {
    const records = await recordedSession();
    const machine = queryLoopMachine.provide({ guards: { maxTurnsReached: () => true } });
    const report = await rerun(records, agent({ machine }));
    const continued = records.find(
      (r) => r.type === 'transition' && r.data.reason === 'tool_result_continuation',
    )!;
    expect(report.divergence).toMatchObject({
      seq: continued.seq,
      kind: 'transition',
      path: 'to',
      recorded: 'building',
    });
  });

  it('a later change is found at its own seq: the second question', async () => {
    const records = await recordedSession();
    const report = await rerun(
      records,
      agent({ tools: [lookupTicket((id) => (id === 'T-2' ? 'gone' : `ticket ${id}: ${tickets[id]}`))] }),
    );
    expect(report.divergence).toMatchObject({ seq: seqOf(records, 'tool.finished', 1), kind: 'tool_result' });
    // The first question's two turns and the second's first (it asked for the lookup).
    expect(report.turns).toBe(3);
  });

  it('--tools recorded: a changed tool is not run, the log answers it (only policy, hooks, prompt and chart count)', async () => {
    const records = await recordedSession();
    const report = await rerun(records, {
      ...agent({ tools: [lookupTicket(() => 'never asked')] }),
      toolMode: 'recorded',
    });
    expect(report.identical).toBe(true);
    // With no tools given at all, the tools are the ones the log offered.
    const { tools: _t, ...rest } = agent();
    expect((await rerun(records, { ...rest, toolMode: 'recorded' })).identical).toBe(true);
  });

  it('recordedModel fails a test on a changed request (ReplayMismatchError with the divergence)', async () => {
    const records = await recordedSession();
    const { tools, settings, hooks: h, canUseTool, cwd } = agent();
    const same = await Session.create({
      store: new MemoryEventStore(),
      model: recordedModel(records),
      tools,
      settings,
      hooks: h,
      canUseTool,
      cwd,
    });
    expect((await same.submit('Is T-1 open?')).status).toBe('completed');
    const model = recordedModel(records);
    const changed = await Session.create({
      store: new MemoryEventStore(),
      model,
      tools,
      settings: { system: 'other' },
      cwd,
    });
    const result = await changed.submit('Is T-1 open?');
    expect(result.status).toBe('failed');
    const e = await model
      .stream({ model: 'x', messages: [], tools: [], maxTokens: 1 }, { signal: new AbortController().signal })
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ReplayMismatchError);
    expect((e as ReplayMismatchError).divergence).toMatchObject({
      kind: 'request',
      path: 'system',
      current: 'other',
    });
  });
});

/** An in-process MCP server whose tool counts its calls, and how often one was connected. */
function counterServer(counts: { calls: number; connects: number }) {
  const server = new McpServer({ name: 'counter', version: '1.0.0' });
  server.registerTool(
    'count',
    { description: 'Counts its calls.', annotations: { readOnlyHint: true } },
    async () => {
      counts.calls++;
      return { content: [{ type: 'text', text: 'counted' }] };
    },
  );
  const connect = server.connect.bind(server);
  server.connect = async (transport) => {
    counts.connects++;
    return connect(transport);
  };
  return server;
}

describe('rerun: MCP tools', () => {
  it("toolMode 'recorded' answers MCP calls from the log and starts no server; 'live' calls the server", async () => {
    const recording = { calls: 0, connects: 0 };
    const h = await scriptedSession(
      [toolTurn([{ name: 'mcp__counter__count', input: {}, id: 'c1' }]), textTurn('counted once')],
      { tools: [], settings: { system }, mcpServers: { counter: counterServer(recording) } },
    );
    expect((await h.session.submit('count')).status).toBe('completed');
    await h.session.close();
    const records = await h.records();
    expect(recording).toEqual({ calls: 1, connects: 1 });

    const recorded = { calls: 0, connects: 0 };
    const quiet = await rerun(records, {
      tools: [],
      settings: { system },
      cwd: process.cwd(),
      mcpServers: { counter: counterServer(recorded) },
      toolMode: 'recorded',
    });
    expect(quiet.divergence).toBeNull();
    expect(quiet.identical).toBe(true);
    expect(recorded).toEqual({ calls: 0, connects: 0 });
    expect(quiet.records.filter((r) => r.type === 'mcp.server')).toEqual([]);
    expect(quiet.records.find((r) => r.type === 'tool.finished')?.data).toMatchObject({
      toolUseId: 'c1',
      result: { content: 'counted' },
    });

    const live = { calls: 0, connects: 0 };
    const loud = await rerun(records, {
      tools: [],
      settings: { system },
      cwd: process.cwd(),
      mcpServers: { counter: counterServer(live) },
      toolMode: 'live',
    });
    expect(loud.identical).toBe(true);
    expect(live).toEqual({ calls: 1, connects: 1 });
  });
});
