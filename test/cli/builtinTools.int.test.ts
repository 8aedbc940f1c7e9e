import { createHash } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';
import { scriptedRun } from '../support/scriptedRun.ts';
import { removeDir, tempDir } from '../tools/toolHarness.ts';

let root: string;
let cwd: string;
let work: string;

beforeAll(async () => {
  root = await tempDir('reloop-cli-tools-');
  cwd = path.join(root, 'project');
  work = path.join(root, 'work');
  await mkdir(cwd);
});
afterAll(() => removeDir(root));

const shellId = (toolUseId: string) =>
  `bash_${createHash('sha256').update(toolUseId).digest('hex').slice(0, 7)}`;

describe('reloop run with TodoWrite and background shells', () => {
  it('runs them, `reloop log` shows the todo list, and replay --verify passes', async () => {
    const todos = [
      { content: 'Start the server', status: 'completed', activeForm: 'Starting the server' },
      { content: 'Check its output', status: 'in_progress', activeForm: 'Checking its output' },
      { content: 'Stop it', status: 'pending', activeForm: 'Stopping it' },
    ];
    const id = shellId('t1_0');
    const run = await scriptedRun(
      [
        [{ name: 'TodoWrite', input: { todos } }],
        [{ name: 'Bash', input: { command: 'echo listening; sleep 30', run_in_background: true } }],
        [{ name: 'Bash', input: { command: 'sleep 0.3' } }],
        [{ name: 'BashOutput', input: { bash_id: id } }],
        [{ name: 'KillShell', input: { shell_id: id } }],
      ],
      { cwd, work, args: ['--allow', 'Bash'] },
    );
    expect(run.status).toBe('completed');
    expect(run.result('t0_0').content).toMatch(
      /^Todos have been modified successfully \(3 todos: 1 completed/,
    );
    expect(run.result('t1_0').content).toContain(`Command running in background with ID: ${id}.`);
    expect(run.result('t3_0').content).toContain('listening');
    expect(run.result('t4_0').content).toBe(
      `Killed shell ${id} (echo listening; sleep 30) and every process it started.`,
    );
    const store = path.join(work, 'store');
    const log = await runCli(['log', run.sessionId, '--store', store], { cwd: work });
    expect(log.code).toBe(0);
    expect(log.stdout).toMatch(
      /todos \(TodoWrite at seq \d+\):\n {2}\[x\] Start the server\n {2}\[>\] Checking its output\n {2}\[ \] Stop it\n$/,
    );
    const verify = await runCli(['replay', run.sessionId, '--verify', '--store', store], { cwd: work });
    expect(verify.code).toBe(0);
  });
});
