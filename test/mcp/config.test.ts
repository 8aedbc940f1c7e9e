// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${VAR} in MCP configurations is the subject here
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approveServers } from '../../src/mcp/approval.ts';
import {
  expandServerConfig,
  McpConfigError,
  parseMcpConfig,
  parseMcpConfigText,
} from '../../src/mcp/config.ts';
import { loadMcpConfig } from '../../src/mcp/load.ts';
import { resolveMcpServers } from '../../src/mcp/resolve.ts';
import { mcpLimitsFromEnv } from '../../src/mcp/servers.ts';
import { mcpToolName } from '../../src/mcp/tools.ts';
import { removeDir, tempDir } from '../tools/toolHarness.ts';

let dir: string;
beforeAll(async () => {
  dir = await tempDir('reloop-mcp-config-');
});
afterAll(() => removeDir(dir));

describe('MCP configuration as Claude Code reads it', () => {
  it('takes the wrapped and the unwrapped form, stdio (type omitted), http (and its alias) and sse; unknown keys ignored', () => {
    const servers = {
      local: { command: 'node', args: ['s.js'], env: { A: '1' }, note: 'ignored' },
      remote: { type: 'http', url: 'http://127.0.0.1:1/mcp', headers: { Authorization: 'Bearer x' } },
      alias: { type: 'streamable-http', url: 'http://127.0.0.1:1/mcp' },
      old: { type: 'sse', url: 'http://127.0.0.1:1/sse' },
    };
    const wrapped = parseMcpConfig({ mcpServers: servers }, 'f');
    expect(parseMcpConfig(servers, 'f')).toEqual(wrapped);
    expect(wrapped.local).toEqual({ command: 'node', args: ['s.js'], env: { A: '1' } });
    expect(wrapped.remote).toMatchObject({ type: 'http', headers: { Authorization: 'Bearer x' } });
  });

  it('a bad entry is one line naming the file and the server', () => {
    expect(() => parseMcpConfig({ mcpServers: { x: { type: 'http' } } }, '/p/.mcp.json')).toThrow(
      '/p/.mcp.json: MCP server "x": url: Invalid input: expected string, received undefined',
    );
    expect(() => parseMcpConfig({ mcpServers: { x: { type: 'ws', url: 'u' } } }, 'f')).toThrow(
      'f: MCP server "x": unknown type "ws" (stdio, http or sse)',
    );
    expect(() => parseMcpConfig({ mcpServers: { 'a b': { command: 'x' } } }, 'f')).toThrow(/letters, digits/);
    expect(() => parseMcpConfigText('{ "mcpServers": ', 'f')).toThrow(/^f: not valid JSON: /);
    expect(() => parseMcpConfig([], 'f')).toThrow(McpConfigError);
  });

  it('expands ${VAR} and ${VAR:-default} in command, args, env, url and headers; an unset one without default names the server and the variable', () => {
    const env = { HOME: '/home/u', TOKEN: 't0k', EMPTY: '' };
    expect(
      expandServerConfig(
        {
          command: '${HOME}/bin/s',
          args: ['--port', '${PORT:-8080}'],
          env: { K: '${TOKEN}', E: '${EMPTY:-d}' },
        },
        env,
        'local',
        'f',
      ),
    ).toEqual({ command: '/home/u/bin/s', args: ['--port', '8080'], env: { K: 't0k', E: 'd' } });
    expect(
      expandServerConfig(
        { type: 'http', url: 'http://${HOST:-127.0.0.1}/mcp', headers: { A: 'Bearer ${TOKEN}' } },
        env,
        'r',
        'f',
      ),
    ).toEqual({ type: 'http', url: 'http://127.0.0.1/mcp', headers: { A: 'Bearer t0k' } });
    expect(() =>
      expandServerConfig({ command: 'x', args: ['${NOPE}'] }, env, 'local', '/p/.mcp.json'),
    ).toThrow(
      '/p/.mcp.json: MCP server "local": the environment variable NOPE is not set and ${NOPE} has no default (write ${NOPE:-default})',
    );
  });

  it('names tools mcp__<server>__<tool>, other characters as _', () => {
    expect(mcpToolName('my-server', 'get.thing')).toBe('mcp__my-server__get_thing');
  });

  it('reads MCP_TIMEOUT, MCP_TOOL_TIMEOUT and MAX_MCP_OUTPUT_TOKENS; a bad one is an error', () => {
    expect(mcpLimitsFromEnv({ MCP_TIMEOUT: '5000', MAX_MCP_OUTPUT_TOKENS: '100' })).toMatchObject({
      startupTimeoutMs: 5000,
      toolTimeoutMs: 600_000,
      maxOutputTokens: 100,
    });
    expect(() => mcpLimitsFromEnv({ MCP_TOOL_TIMEOUT: 'soon' })).toThrow(
      'MCP_TOOL_TIMEOUT must be a whole number ≥ 1, got "soon"',
    );
  });
});

describe('loading and approving', () => {
  const write = async (sub: string, json: unknown) => {
    const root = path.join(dir, sub);
    await mkdir(root, { recursive: true });
    await writeFile(path.join(root, '.mcp.json'), typeof json === 'string' ? json : JSON.stringify(json));
    return root;
  };

  it('a project server starts only when approved outside the repository; disabled wins; flags are approved by being given', async () => {
    const root = await write('p1', {
      mcpServers: { a: { command: 'x' }, b: { command: 'y' }, c: { command: 'z' } },
    });
    const loaded = await loadMcpConfig({ cwd: root, flags: ['{"mcpServers":{"f":{"command":"w"}}}'] });
    const decide = (layers: Parameters<typeof approveServers>[1]) =>
      Object.fromEntries(
        approveServers(loaded.servers, layers).map((d) => [d.server.name, d.approved ? d.by : 'no']),
      );
    expect(decide([])).toEqual({ a: 'no', b: 'no', c: 'no', f: '--mcp-config' });
    expect(
      decide([
        {
          source: 'projectSettings',
          file: null,
          root,
          json: { enableAllProjectMcpServers: true, disabledMcpjsonServers: ['c'] },
        },
        { source: 'localSettings', file: null, root, json: { enabledMcpjsonServers: ['a', 'c'] } },
      ]),
    ).toEqual({ a: 'localSettings enabledMcpjsonServers', b: 'no', c: 'no', f: '--mcp-config' });
    expect(
      decide([{ source: 'userSettings', file: null, root, json: { enableAllProjectMcpServers: true } }]),
    ).toMatchObject({
      a: 'userSettings enableAllProjectMcpServers',
    });
    const [first] = approveServers(loaded.servers, []);
    expect(first?.message).toContain('MCP server "a" of');
    expect(first?.message).toContain(
      'is not started: a project\'s servers need approval. Add "enabledMcpjsonServers": ["a"]',
    );
  });

  it('--strict-mcp-config reads only the flags; a later flag overrides a server of the same name', async () => {
    const root = await write('p2', { mcpServers: { a: { command: 'project' } } });
    const file = path.join(root, 'extra.json');
    await writeFile(file, JSON.stringify({ a: { command: 'flag' } }));
    expect((await loadMcpConfig({ cwd: root, strict: true })).servers).toEqual([]);
    const both = await loadMcpConfig({ cwd: root, flags: ['extra.json'] });
    expect(both.servers).toEqual([
      { name: 'a', config: { command: 'flag' }, source: 'flag', where: `--mcp-config ${file}` },
    ]);
  });

  it('a malformed .mcp.json is a warning (the run goes on); a bad --mcp-config is an error', async () => {
    const root = await write('p3', '{ "mcpServers": { "a": ');
    const loaded = await loadMcpConfig({ cwd: root });
    expect(loaded.servers).toEqual([]);
    expect(loaded.warnings).toHaveLength(1);
    expect(loaded.warnings[0]).toMatch(
      /\.mcp\.json: not valid JSON: .*; the project's MCP servers are not started$/,
    );
    await expect(loadMcpConfig({ cwd: root, strict: true, flags: ['missing.json'] })).rejects.toThrow(
      /--mcp-config .*missing\.json: cannot read: /,
    );
  });

  it('resolve: unapproved servers come back as skipped with their warning; approved ones expanded', async () => {
    const root = await write('p4', {
      mcpServers: { a: { command: '${BIN:-node}' }, b: { command: '${UNSET_VAR}' } },
    });
    const r = await resolveMcpServers({
      cwd: root,
      layers: [{ source: 'localSettings', file: null, root, json: { enabledMcpjsonServers: ['a'] } }],
      env: {},
    });
    expect(r.entries).toEqual([
      { name: 'a', spec: { command: 'node' }, source: 'project' },
      expect.objectContaining({ name: 'b', approved: false, source: 'project' }),
    ]);
    expect(r.warnings).toHaveLength(1);
  });
});
