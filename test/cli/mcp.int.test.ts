// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${VAR} in MCP configurations is the subject here
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_BIN, runCli } from '../support/cli.ts';
import { EVERYTHING, everythingHttp, HOSTILE } from '../support/mcpServers.ts';
import { readRun, scriptFor } from '../support/scriptedRun.ts';
import { removeDir, tempDir } from '../tools/toolHarness.ts';

let root: string;
beforeAll(async () => {
  root = await tempDir('reloop-cli-mcp-');
});
afterAll(() => removeDir(root));

interface Project {
  cwd: string;
  store: string;
  script: (batches: Parameters<typeof scriptFor>[0], name?: string) => Promise<string>;
  settings: (json: unknown) => Promise<string>;
}

async function project(name: string, mcp: unknown): Promise<Project> {
  const cwd = path.join(root, name, 'project');
  const work = path.join(root, name, 'work');
  await mkdir(cwd, { recursive: true });
  await mkdir(work, { recursive: true });
  await writeFile(path.join(cwd, '.mcp.json'), JSON.stringify(mcp));
  return {
    cwd,
    store: path.join(work, 'store'),
    script: async (batches, file = 'script.json') => {
      const p = path.join(work, file);
      await writeFile(p, JSON.stringify(scriptFor(batches)));
      return p;
    },
    settings: async (json) => {
      const p = path.join(work, 'settings.json');
      await writeFile(p, JSON.stringify(json));
      return p;
    },
  };
}

const node = process.execPath;

describe('reloop run with a project .mcp.json', () => {
  it('a stdio and an HTTP server: mcp__ tools called, rules and PreToolUse hooks apply, verify and viz without the servers', async () => {
    const http = await everythingHttp();
    let p: Project;
    try {
      p = await project('both', {
        mcpServers: {
          h: { command: node, args: [HOSTILE] },
          web: { type: 'http', url: http.url.replace('127.0.0.1', '${MCP_HOST:-127.0.0.1}') },
        },
      });
      const script = await p.script([
        [
          { name: 'mcp__h__echo', input: { text: 'over stdio' } },
          { name: 'mcp__web__get-sum', input: { a: 20, b: 22 } },
        ],
        [{ name: 'mcp__h__fails', input: {} }],
        [{ name: 'mcp__web__echo', input: { message: 'denied by a rule' } }],
        [{ name: 'mcp__h__sticky_write', input: { marker: path.join(root, 'never') } }],
      ]);
      const settings = await p.settings({
        enabledMcpjsonServers: ['h', 'web'],
        hooks: {
          PreToolUse: [
            {
              matcher: 'mcp__h__sticky.*',
              hooks: [{ type: 'command', command: 'echo "no sticky calls" >&2; exit 2' }],
            },
          ],
        },
      });
      const cli = await runCli(
        [
          'run',
          '--script',
          script,
          '--store',
          p.store,
          '--cwd',
          p.cwd,
          '--json',
          '--on-ask',
          'deny',
          '--settings',
          settings,
          '--allow',
          'mcp__h__fails',
          '--deny',
          'mcp__web__echo',
          'go',
        ],
        { cwd: p.cwd, timeoutMs: 60_000 },
      );
      expect(cli.stderr).toBe('');
      const run = await readRun(cli, p.store);
      expect(run.status).toBe('completed');
      expect(run.result('t0_0')).toEqual({ content: 'echo: over stdio', isError: false, outcome: 'ok' });
      expect(run.result('t0_1').content).toContain('42');
      expect(run.result('t1_0')).toEqual({ content: 'the thing is broken', isError: true, outcome: 'error' });
      expect(run.result('t2_0')).toMatchObject({
        outcome: 'denied',
        content: expect.stringContaining('mcp__web__echo'),
      });
      expect(run.result('t3_0')).toMatchObject({
        outcome: 'denied',
        content: expect.stringContaining('no sticky calls'),
      });
      expect(existsSync(path.join(root, 'never'))).toBe(false);
      const servers = run.records.filter((r) => r.type === 'mcp.server').map((r) => r.data);
      expect(servers).toEqual([
        expect.objectContaining({ event: 'connected', server: 'h', transport: 'stdio', source: 'project' }),
        expect.objectContaining({ event: 'connected', server: 'web', transport: 'http', source: 'project' }),
      ]);
    } finally {
      await http.stop();
    }
    // No server is running now, and the project's .mcp.json is gone too.
    await rm(path.join(p.cwd, '.mcp.json'));
    const log = await readdir(path.join(p.store, 'sessions'));
    const session = log[0]!.replace(/\.jsonl$/, '');
    const verify = await runCli(['replay', session, '--verify', '--store', p.store], { cwd: root });
    expect(verify.code).toBe(0);
    const out = path.join(root, 'both', 'session.html');
    const viz = await runCli(['viz', session, '--format', 'html', '--out', out, '--store', p.store], {
      cwd: root,
    });
    expect(viz.code).toBe(0);
    const logText = await runCli(['log', session, '--store', p.store], { cwd: root });
    expect(logText.stdout).toMatch(
      /mcp\.server\s+MCP server h connected over stdio \(hostile 6\.6\.6\): \d+ tools/,
    );
    expect(logText.stdout).toContain('tool mcp__h__echo ok');
  });

  it('a project server nobody approved is a warning naming how to approve it; --mcp-config is approved by being given', async () => {
    const p = await project('unapproved', { mcpServers: { h: { command: node, args: [HOSTILE] } } });
    const script = await p.script([[{ name: 'mcp__h__echo', input: { text: 'x' } }]]);
    const args = ['run', '--script', script, '--store', p.store, '--cwd', p.cwd, '--json', 'go'];
    const cli = await runCli(args, { cwd: p.cwd, timeoutMs: 60_000 });
    expect(cli.stderr).toContain(
      `warning: MCP server "h" of ${path.join(p.cwd, '.mcp.json')} is not started: a project's servers need approval. Add "enabledMcpjsonServers": ["h"]`,
    );
    const run = await readRun(cli, p.store);
    expect(run.result('t0_0')).toMatchObject({
      outcome: 'unknown_tool',
      content: expect.stringMatching(/^mcp__h__echo is not available: MCP server "h"/),
    });
    const flagged = await runCli(
      [
        ...args.slice(0, -1),
        '--strict-mcp-config',
        '--mcp-config',
        JSON.stringify({ mcpServers: { h: { command: node, args: [HOSTILE] } } }),
        'go',
      ],
      { cwd: p.cwd, timeoutMs: 60_000 },
    );
    expect(flagged.stderr).toBe('');
    expect((await readRun(flagged, p.store)).result('t0_0')).toMatchObject({
      outcome: 'ok',
      content: 'echo: x',
    });
  });

  it('bad input: a malformed .mcp.json warns and the run goes on; a bad --mcp-config or an unset variable is exit 2', async () => {
    const p = await project('bad', {});
    await writeFile(path.join(p.cwd, '.mcp.json'), '{ "mcpServers": { "h": { "command": 3 } } }');
    const script = await p.script([]);
    const base = ['run', '--script', script, '--store', p.store, '--cwd', p.cwd, '--json'];
    const malformed = await runCli([...base, 'go'], { cwd: p.cwd });
    expect(malformed.code).toBe(0);
    expect(malformed.stderr).toBe(
      `warning: ${path.join(p.cwd, '.mcp.json')}: MCP server "h": command: Invalid input: expected string, received number; the project's MCP servers are not started\n`,
    );
    const badFlag = await runCli([...base, '--mcp-config', '{"mcpServers": {"x": {}}}', 'go'], {
      cwd: p.cwd,
    });
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr).toMatch(
      /^reloop: --mcp-config <json>: MCP server "x": command: .* \[MCP_CONFIG_INVALID\]\n$/,
    );
    const unset = await runCli(
      [
        ...base,
        '--mcp-config',
        JSON.stringify({ mcpServers: { x: { command: '${RELOOP_TEST_UNSET_BIN}' } } }),
        'go',
      ],
      { cwd: p.cwd, env: { RELOOP_TEST_UNSET_BIN: undefined } },
    );
    expect(unset.code).toBe(2);
    expect(unset.stderr).toContain(
      'MCP server "x": the environment variable RELOOP_TEST_UNSET_BIN is not set',
    );
    expect(existsSync(p.store)).toBe(true); // the first run made it; the bad ones wrote nothing more
  });
});

describe('a crash in the middle of an MCP call', () => {
  async function crashMidCall(tool: string) {
    const p = await project(`crash-${tool}`, { mcpServers: { h: { command: node, args: [HOSTILE] } } });
    const marker = path.join(root, `marker-${tool}`);
    const script = await p.script([[{ name: `mcp__h__${tool}`, input: { marker } }]]);
    const settings = await p.settings({ enabledMcpjsonServers: ['h'] });
    const common = [
      '--store',
      p.store,
      '--cwd',
      p.cwd,
      '--json',
      '--settings',
      settings,
      '--permission-mode',
      'bypassPermissions',
    ];
    const proc: ChildProcess = spawn(node, [CLI_BIN, 'run', '--script', script, ...common, 'go'], {
      cwd: p.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // Killed once the call is running (the server wrote its marker, so it has the call).
    for (let i = 0; i < 400 && !existsSync(marker); i++) await new Promise((r) => setTimeout(r, 25));
    proc.kill('SIGKILL');
    await new Promise((r) => proc.once('exit', r));
    const session = (await readdir(path.join(p.store, 'sessions')))[0]!.replace(/\.jsonl$/, '');
    const resumeScript = path.join(path.dirname(script), 'resume.json');
    await writeFile(
      resumeScript,
      JSON.stringify({ turns: [{ text: 'resumed', usage: { input_tokens: 1, output_tokens: 1 } }] }),
    );
    const resumed = await runCli(['run', '--resume', session, '--script', resumeScript, ...common], {
      cwd: p.cwd,
      timeoutMs: 60_000,
    });
    const log = (await readFile(path.join(p.store, 'sessions', `${session}.jsonl`), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; data: Record<string, unknown> });
    const verify = await runCli(['replay', session, '--verify', '--store', p.store], { cwd: root });
    return { resumed, log, verify };
  }

  it('a read-only MCP tool (readOnlyHint) in flight is re-run on resume', async () => {
    const { resumed, log, verify } = await crashMidCall('sticky');
    expect(resumed.code).toBe(0);
    const ended = log.find((r) => r.type === 'run.ended' && r.data.reason === 'interrupted');
    expect((ended?.data.interrupted as { inFlight: string[] }).inFlight).toEqual([
      expect.stringMatching(/^tool mcp__h__sticky \(t0_0\), read-only: re-run$/),
    ]);
    const finished = log.filter((r) => r.type === 'tool.finished');
    expect(finished.at(-1)?.data).toMatchObject({
      outcome: 'ok',
      result: { content: expect.stringMatching(/^second call for /) },
    });
    expect(verify.code).toBe(0);
  });

  it('any other MCP tool in flight is not re-run: it gets an interrupted result', async () => {
    const { resumed, log, verify } = await crashMidCall('sticky_write');
    expect(resumed.code).toBe(0);
    const finished = log.filter((r) => r.type === 'tool.finished');
    expect(finished).toHaveLength(1);
    expect(finished[0]?.data).toMatchObject({
      outcome: 'interrupted',
      synthetic: true,
      result: {
        content: expect.stringMatching(
          /^\[interrupted\] mcp__h__sticky_write was running when the process stopped/,
        ),
      },
    });
    expect(verify.code).toBe(0);
  });
});

void EVERYTHING;
