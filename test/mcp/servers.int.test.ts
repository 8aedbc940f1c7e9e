import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type McpServerEvent, McpServers } from '../../src/mcp/servers.ts';
import type { AnyTool, ToolContext } from '../../src/tools/types.ts';
import { EVERYTHING, everythingHttp, FILESYSTEM, HOSTILE, MEMORY, stdio } from '../support/mcpServers.ts';
import { removeDir, tempDir } from '../tools/toolHarness.ts';

let dir: string;
beforeAll(async () => {
  dir = await tempDir('reloop-mcp-servers-');
});
afterAll(() => removeDir(dir));

function ctx(signal = new AbortController().signal): ToolContext {
  return { signal, cwd: dir, toolUseId: 't', session: { sessionId: 's', fileRead: () => undefined } };
}

async function start(entries: Parameters<typeof McpServers.start>[0], limits = {}) {
  const events: McpServerEvent[] = [];
  const servers = await McpServers.start(entries, {
    cwd: dir,
    env: { PATH: process.env.PATH },
    limits,
    onEvent: (e) => events.push(e),
  });
  const tool = (name: string): AnyTool => {
    const t = servers.tools().find((x) => x.name === name);
    if (!t)
      throw new Error(
        `no tool ${name}: ${servers
          .tools()
          .map((x) => x.name)
          .join(', ')}`,
      );
    return t;
  };
  return { servers, events, tool };
}

describe('MCP servers from npm', () => {
  it('server-everything over stdio: tools listed with schemas and hints, text, images and resource links mapped', async () => {
    const { servers, events, tool } = await start([
      { name: 'everything', spec: stdio(EVERYTHING, 'stdio'), source: 'flag' },
    ]);
    try {
      expect(events[0]).toMatchObject({
        event: 'connected',
        server: 'everything',
        transport: 'stdio',
        serverInfo: { name: 'mcp-servers/everything' },
      });
      const echo = tool('mcp__everything__echo');
      expect(echo.jsonSchema).toMatchObject({ type: 'object', properties: { message: { type: 'string' } } });
      expect(echo.description).toBe('Echoes back the input string');
      expect(echo.isReadOnly).toBe(true);
      expect(await echo.call({ message: 'hi' }, ctx())).toEqual({ content: 'Echo: hi', isError: false });
      const image = await tool('mcp__everything__get-tiny-image').call({}, ctx());
      expect(image.content).toEqual([
        expect.objectContaining({ type: 'text' }),
        {
          type: 'image',
          source: { type: 'base64', media_type: 'image/png', data: expect.stringMatching(/^iVBOR/) },
        },
        expect.objectContaining({ type: 'text' }),
      ]);
      const links = await tool('mcp__everything__get-resource-links').call({ count: 1 }, ctx());
      expect(links.content).toMatch(/\[Resource link: .+ \(demo:\/\/resource\/.+\)/);
      const embedded = await tool('mcp__everything__get-resource-reference').call(
        { resourceType: 'Text', resourceId: 1 },
        ctx(),
      );
      expect(JSON.stringify(embedded.content)).toContain('[Resource: ');
    } finally {
      await servers.close();
    }
  });

  it('server-everything over streamable HTTP', async () => {
    const http = await everythingHttp();
    try {
      const { servers, events, tool } = await start([
        { name: 'web', spec: { type: 'http', url: http.url }, source: 'flag' },
      ]);
      try {
        expect(events[0]).toMatchObject({ event: 'connected', transport: 'http' });
        expect(await tool('mcp__web__get-sum').call({ a: 2, b: 3 }, ctx())).toMatchObject({
          content: expect.stringContaining('5'),
          isError: false,
        });
      } finally {
        await servers.close();
      }
    } finally {
      await http.stop();
    }
  });

  it('server-filesystem and server-memory over stdio', async () => {
    const { servers, tool } = await start([
      { name: 'fs', spec: stdio(FILESYSTEM, dir), source: 'flag' },
      {
        name: 'memory',
        spec: { ...stdio(MEMORY), env: { MEMORY_FILE_PATH: `${dir}/memory.jsonl` } },
        source: 'flag',
      },
    ]);
    try {
      const write = await tool('mcp__fs__write_file').call(
        { path: `${dir}/note.txt`, content: 'from mcp' },
        ctx(),
      );
      expect(write.isError).toBe(false);
      expect((await tool('mcp__fs__read_text_file').call({ path: `${dir}/note.txt` }, ctx())).content).toBe(
        'from mcp',
      );
      const outside = await tool('mcp__fs__read_text_file').call({ path: '/etc/hostname' }, ctx());
      expect(outside.isError).toBe(true);
      await tool('mcp__memory__create_entities').call(
        { entities: [{ name: 'reloop', entityType: 'project', observations: ['logs every transition'] }] },
        ctx(),
      );
      expect(JSON.stringify((await tool('mcp__memory__read_graph').call({}, ctx())).content)).toContain(
        'logs every transition',
      );
    } finally {
      await servers.close();
    }
  });
});

describe('hostile MCP servers: one line naming the server, the rest unharmed', () => {
  it('a server that exits at once, one never answering initialize, a missing command: failed, the others go on', async () => {
    const { servers, events, tool } = await start(
      [
        { name: 'gone', spec: stdio(HOSTILE, '--exit-at-once'), source: 'flag' },
        { name: 'mute', spec: stdio(HOSTILE, '--never-initialize'), source: 'flag' },
        { name: 'nope', spec: { command: 'reloop-no-such-command' }, source: 'flag' },
        { name: 'ok', spec: stdio(HOSTILE), source: 'flag' },
      ],
      { startupTimeoutMs: 1500 },
    );
    try {
      const by = Object.fromEntries(events.map((e) => [e.server, e]));
      expect(by.gone).toMatchObject({
        event: 'failed',
        message:
          'MCP server "gone" failed to start: its process exited (stderr: hostile: cannot open its database, exiting)',
      });
      expect(by.mute).toMatchObject({
        event: 'failed',
        message: 'MCP server "mute" failed to start: no answer within 1500 ms (MCP_TIMEOUT)',
      });
      expect(by.nope).toMatchObject({
        event: 'failed',
        message: 'MCP server "nope" failed to start: command not found: reloop-no-such-command',
      });
      expect(by.ok).toMatchObject({ event: 'connected', serverInfo: { name: 'hostile', version: '6.6.6' } });
      expect(servers.unavailable().map((u) => u.prefix)).toEqual([
        'mcp__gone__',
        'mcp__mute__',
        'mcp__nope__',
      ]);
      expect((await tool('mcp__ok__echo').call({ text: 'still here' }, ctx())).content).toBe(
        'echo: still here',
      );
    } finally {
      await servers.close();
    }
  });

  it('isError becomes is_error; a 50 MB result and malformed JSON-RPC disconnect that server with a clear error', async () => {
    const a = await start([{ name: 'h', spec: stdio(HOSTILE), source: 'flag' }]);
    try {
      expect(await a.tool('mcp__h__fails').call({}, ctx())).toEqual({
        content: 'the thing is broken',
        isError: true,
      });
      const big = await a.tool('mcp__h__big').call({}, ctx());
      expect(big.isError).toBe(true);
      expect(big.content).toMatch(
        /^MCP server "h" went away during the call: it broke the protocol: ReadBuffer exceeded maximum size of 16777216 bytes/,
      );
      expect(a.events.at(-1)).toMatchObject({ event: 'closed', server: 'h' });
      expect(await a.tool('mcp__h__echo').call({ text: 'x' }, ctx())).toMatchObject({
        content: expect.stringMatching(/^MCP server "h" is not connected: it broke the protocol/),
        isError: true,
      });
    } finally {
      await a.servers.close();
    }
    const b = await start([{ name: 'h', spec: stdio(HOSTILE), source: 'flag' }]);
    try {
      const garbage = await b.tool('mcp__h__garbage').call({}, ctx());
      expect(garbage.isError).toBe(true);
      expect(garbage.content).toMatch(/^MCP server "h" went away during the call: it broke the protocol: /);
    } finally {
      await b.servers.close();
    }
  });

  it('a server that dies mid-call fails that call naming it; abort cancels a call; the call timeout holds', async () => {
    const { servers, tool, events } = await start([{ name: 'h', spec: stdio(HOSTILE), source: 'flag' }], {
      toolTimeoutMs: 800,
    });
    try {
      const timedOut = await tool('mcp__h__slow').call({}, ctx());
      expect(timedOut).toEqual({
        content: 'MCP server "h" did not answer within 800 ms (MCP_TOOL_TIMEOUT); the call was cancelled.',
        isError: true,
      });
      const controller = new AbortController();
      const pending = tool('mcp__h__slow').call({}, ctx(controller.signal));
      setTimeout(() => controller.abort(new Error('stop')), 100);
      expect(await pending).toEqual({ content: 'MCP server "h": the call was cancelled.', isError: true });
      const died = await tool('mcp__h__die').call({}, ctx());
      expect(died).toEqual({
        content:
          'MCP server "h" went away during the call: its process exited (stderr: hostile: dying mid-call).',
        isError: true,
      });
      expect(events.at(-1)).toEqual({
        event: 'closed',
        server: 'h',
        message: 'MCP server "h" went away: its process exited (stderr: hostile: dying mid-call)',
      });
    } finally {
      await servers.close();
    }
  });

  it('caps a result at MAX_MCP_OUTPUT_TOKENS with a note', async () => {
    const { servers, tool } = await start(
      [{ name: 'everything', spec: stdio(EVERYTHING, 'stdio'), source: 'flag' }],
      {
        maxOutputTokens: 5,
      },
    );
    try {
      const out = await tool('mcp__everything__echo').call(
        { message: 'a long message of many words' },
        ctx(),
      );
      expect(out.content).toBe(
        'Echo: a long message\n[Output truncated: the result of mcp__everything__echo was about 9 tokens, over the limit of 5 (MAX_MCP_OUTPUT_TOKENS). If the server has a way to ask for less (pagination, a filter, a narrower query), use it.]',
      );
    } finally {
      await servers.close();
    }
  });
});
