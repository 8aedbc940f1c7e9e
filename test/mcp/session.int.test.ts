import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { verifyReplay } from '../../src/replay/verify.ts';
import { Session } from '../../src/runtime/session.ts';
import { createPermissionPolicy } from '../../src/tools/permissions/index.ts';
import type { PreToolUseDecision } from '../../src/tools/types.ts';
import { scriptedSession, textTurn, toolTurn } from '../support/harness.ts';
import { HOSTILE, stdio } from '../support/mcpServers.ts';

/** An in-process server, as a library user hands tools over MCP without a subprocess. */
function notesServer() {
  const notes: string[] = [];
  const server = new McpServer({ name: 'notes', version: '1.2.3' });
  server.registerTool(
    'list',
    { description: 'Lists the notes.', annotations: { readOnlyHint: true } },
    async () => ({ content: [{ type: 'text', text: notes.join('\n') || '(none)' }] }),
  );
  server.registerTool(
    'add',
    { description: 'Adds a note.', inputSchema: { text: z.string() } },
    async ({ text }) => {
      notes.push(text);
      return { content: [{ type: 'text', text: `added ${text}` }] };
    },
  );
  return { server, notes };
}

const recordsOf = async (h: Awaited<ReturnType<typeof scriptedSession>>, type: string) =>
  (await h.records()).filter((r) => r.type === type);

describe('MCP tools in a session', () => {
  it('an in-process McpServer: tools offered with their schemas, called, logged, verified with the server gone', async () => {
    const { server, notes } = notesServer();
    const h = await scriptedSession(
      [
        toolTurn([{ name: 'mcp__notes__add', input: { text: 'buy milk' }, id: 'a1' }]),
        toolTurn([{ name: 'mcp__notes__list', input: {}, id: 'l1' }]),
        textTurn('done'),
      ],
      { tools: [], mcpServers: { notes: server } },
    );
    const res = await h.session.submit('take notes');
    expect(res.status).toBe('completed');
    expect(notes).toEqual(['buy milk']);
    const request = h.client.requests[0]!;
    expect(request.tools.map((t) => t.name)).toEqual(['mcp__notes__list', 'mcp__notes__add']);
    expect(request.tools[1]).toMatchObject({
      description: 'Adds a note.',
      input_schema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    });
    const [connected] = await recordsOf(h, 'mcp.server');
    expect(connected?.data).toMatchObject({
      event: 'connected',
      server: 'notes',
      transport: 'sdk',
      source: 'sdk',
      serverInfo: { name: 'notes', version: '1.2.3' },
      tools: [
        { name: 'list', description: 'Lists the notes.', annotations: { readOnlyHint: true } },
        { name: 'add', description: 'Adds a note.' },
      ],
    });
    const started = await recordsOf(h, 'tool.started');
    expect(
      started.map((r) => [(r.data as { name: string }).name, (r.data as { readOnly: boolean }).readOnly]),
    ).toEqual([
      ['mcp__notes__add', false],
      ['mcp__notes__list', true],
    ]);
    const finished = await recordsOf(h, 'tool.finished');
    expect(finished.map((r) => (r.data as { result: { content: unknown } }).result.content)).toEqual([
      'added buy milk',
      'buy milk',
    ]);
    expect(h.session.describeMcpServers()).toEqual([
      expect.objectContaining({ name: 'notes', status: 'connected', tools: expect.any(Array) }),
    ]);
    await h.session.close();
    // The server is closed: verify answers every call from the log.
    expect((await verifyReplay(await h.records())).ok).toBe(true);
  });

  it('a second process on the same session refers to the tool list already logged (stored once)', async () => {
    const first = notesServer();
    const h = await scriptedSession([textTurn('one'), textTurn('two')], {
      tools: [],
      mcpServers: { notes: first.server },
    });
    await h.session.submit('first');
    await h.session.close();
    const again = notesServer();
    const reopened = await Session.open(h.session.id, {
      store: h.store,
      model: h.client,
      mcpServers: { notes: again.server },
    });
    await reopened.submit('second');
    await reopened.close();
    const mcp = await recordsOf(h, 'mcp.server');
    expect(mcp).toHaveLength(2);
    expect(mcp[0]?.data).toHaveProperty('tools');
    expect(mcp[1]?.data).toMatchObject({ event: 'connected', toolsFrom: mcp[0]?.seq });
    expect(mcp[1]?.data).not.toHaveProperty('tools');
    expect(reopened.state.mcpServers.get('notes')?.tools).toHaveLength(2);
    expect((await verifyReplay(await h.records())).ok).toBe(true);
  });

  it('permission rules and PreToolUse hooks apply to MCP tools as to any tool', async () => {
    const { server, notes } = notesServer();
    const seen: string[] = [];
    const h = await scriptedSession(
      [
        toolTurn([
          { name: 'mcp__notes__list', input: {}, id: 'l1' },
          { name: 'mcp__notes__add', input: { text: 'denied by rule' }, id: 'a1' },
        ]),
        toolTurn([{ name: 'mcp__notes__add', input: { text: 'blocked by hook' }, id: 'a2' }]),
        textTurn('done'),
      ],
      {
        tools: [],
        mcpServers: { notes: server },
        unattendedAsk: 'deny',
        canUseTool: createPermissionPolicy({ mode: 'default', deny: [], allow: [], cwd: process.cwd() }),
        toolHooks: {
          async preToolUse(req): Promise<PreToolUseDecision> {
            seen.push(req.tool.name);
            return /^mcp__.*__add$/.test(req.tool.name) && req.toolUseId === 'a2'
              ? { decision: 'deny', reason: 'no more notes' }
              : { decision: 'continue' };
          },
        },
      },
    );
    await h.session.submit('go');
    await h.session.close();
    expect(notes).toEqual([]);
    expect(seen).toEqual(['mcp__notes__list', 'mcp__notes__add', 'mcp__notes__add']);
    const results = Object.fromEntries(
      (await recordsOf(h, 'tool.finished')).map((r) => [
        (r.data as { toolUseId: string }).toolUseId,
        (r.data as { outcome: string }).outcome,
      ]),
    );
    // list is read-only (readOnlyHint): default mode allows it; add asks, nobody answers: denied.
    expect(results).toEqual({ l1: 'ok', a1: 'denied', a2: 'denied' });
  });

  it('a server that failed to start: the run goes on, a call of its tool says why', async () => {
    const h = await scriptedSession(
      [toolTurn([{ name: 'mcp__gone__anything', input: {}, id: 'g1' }]), textTurn('done')],
      { tools: [], mcpServers: { gone: stdio(HOSTILE, '--exit-at-once') } },
    );
    const res = await h.session.submit('go');
    expect(res.status).toBe('completed');
    const [failed] = await recordsOf(h, 'mcp.server');
    expect(failed?.data).toMatchObject({
      event: 'failed',
      server: 'gone',
      transport: 'stdio',
      source: 'library',
    });
    const [result] = await recordsOf(h, 'tool.finished');
    expect(result?.data).toMatchObject({
      outcome: 'unknown_tool',
      result: {
        content:
          'mcp__gone__anything is not available: MCP server "gone" failed to start: its process exited (stderr: hostile: cannot open its database, exiting)',
        isError: true,
      },
    });
    expect((await verifyReplay(await h.records())).ok).toBe(true);
  });
});
