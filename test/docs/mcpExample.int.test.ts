import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.ts';

it('examples/mcpAndClaudeCodeTools.ts runs: TodoWrite, a background shell, an in-process MCP server, verified', async () => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', path.join(REPO_ROOT, 'examples/mcpAndClaudeCodeTools.ts')],
    { cwd: REPO_ROOT, timeout: 60_000 },
  );
  expect(stdout).toBe(
    [
      'completed completed 5 turns',
      "todos: [ 'completed Check the forecast' ]",
      "MCP servers: [ 'weather connected (1 tools)' ]",
      'replays identically, no server needed',
      '',
    ].join('\n'),
  );
});
