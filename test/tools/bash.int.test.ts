import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bashTool } from '../../src/tools/builtin/bash.ts';
import { processGroupAlive } from '../../src/tools/processGroup.ts';
import { callTool, contextFor, removeDir, tempDir, textOf } from './toolHarness.ts';

let cwd: string;
const bash = bashTool({ killGraceMs: 300 });

beforeAll(async () => {
  cwd = await tempDir('reloop-bash-');
});
afterAll(() => removeDir(cwd));

/** Alive and not a zombie (an unreaped zombie is dead for our purpose). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = execFileSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' }).trim();
  return stat !== '' && !stat.startsWith('Z');
}

function pidsIn(text: string): number[] {
  return [...text.matchAll(/pid=(\d+)/g)].map((m) => Number(m[1]));
}

describe('Bash', () => {
  it('runs in cwd and returns combined output with the exit code', async () => {
    const { ctx } = contextFor(cwd);
    const out = await callTool(bash, { command: 'pwd; echo out; echo err >&2' }, ctx);
    expect(out.isError).toBe(false);
    expect(textOf(out)).toBe(`${cwd}\nout\nerr\n[exit code: 0]`);
  });

  it('marks a non-zero exit as an error and reports the code', async () => {
    const { ctx } = contextFor(cwd);
    const out = await callTool(bash, { command: 'echo failing; exit 3' }, ctx);
    expect(out.isError).toBe(true);
    expect(textOf(out)).toBe('failing\n[exit code: 3]');
  });

  it('says when there is no output', async () => {
    const { ctx } = contextFor(cwd);
    expect(textOf(await callTool(bash, { command: 'true' }, ctx))).toBe('(no output)\n[exit code: 0]');
  });

  it('keeps the head and tail of huge output with a truncation note', async () => {
    const { ctx } = contextFor(cwd);
    const out = await callTool(
      bash,
      { command: "echo START; head -c 100000 /dev/zero | tr '\\0' a; echo; echo END" },
      ctx,
    );
    const text = textOf(out);
    expect(text.length).toBeLessThan(31_000);
    expect(text).toMatch(/^START\na+\n\[… \d+ characters truncated …\]\na+\nEND\n\[exit code: 0\]$/);
  });

  it('times out, kills the whole group and reports an error', async () => {
    const { ctx } = contextFor(cwd);
    const started = Date.now();
    const out = await callTool(
      bash,
      { command: 'echo pid=$$; sleep 30 & echo pid=$!; sleep 30', timeout: 300 },
      ctx,
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(out.isError).toBe(true);
    expect(textOf(out)).toMatch(/timed out after 0.3 s/);
    const pids = pidsIn(textOf(out));
    expect(pids).toHaveLength(2);
    for (const pid of pids) expect(running(pid)).toBe(false);
    expect(processGroupAlive(pids[0] as number)).toBe(false);
  });

  it('escalates to SIGKILL when the group ignores SIGTERM', async () => {
    const { ctx } = contextFor(cwd);
    const out = await callTool(bash, { command: "trap '' TERM; echo pid=$$; sleep 30", timeout: 200 }, ctx);
    expect(textOf(out)).toMatch(/timed out/);
    const [pid] = pidsIn(textOf(out));
    expect(running(pid as number)).toBe(false);
    expect(processGroupAlive(pid as number)).toBe(false);
  });

  it('on abort kills the shell and its background jobs, leaving no orphan', async () => {
    const ac = new AbortController();
    const { ctx } = contextFor(cwd, undefined, ac.signal);
    const pending = callTool(
      bash,
      { command: 'echo pid=$$; sleep 30 & echo pid=$!; sleep 30 & echo pid=$!; wait' },
      ctx,
    );
    setTimeout(() => ac.abort(), 400);
    const out = await pending;
    expect(out.isError).toBe(true);
    expect(textOf(out)).toMatch(/aborted/);
    const pids = pidsIn(textOf(out));
    expect(pids).toHaveLength(3);
    for (const pid of pids) expect(running(pid)).toBe(false);
    expect(processGroupAlive(pids[0] as number)).toBe(false);
  });

  it('does not start when already aborted', async () => {
    const ac = new AbortController();
    ac.abort();
    const { ctx } = contextFor(cwd, undefined, ac.signal);
    const out = await callTool(bash, { command: 'sleep 30' }, ctx);
    expect([out.isError, textOf(out)]).toEqual([true, expect.stringMatching(/aborted/)]);
  });

  it('kills background jobs that keep the output open after the shell exits', async () => {
    const { ctx } = contextFor(cwd);
    const out = await callTool(bash, { command: 'sleep 30 & echo pid=$!' }, ctx);
    expect(textOf(out)).toMatch(/Background processes .* were killed.*\n\[exit code: 0\]$/s);
    expect(running(pidsIn(textOf(out))[0] as number)).toBe(false);
  });

  it('leaves a background job with redirected output running', async () => {
    const { ctx } = contextFor(cwd);
    const out = await callTool(bash, { command: 'sleep 30 > /dev/null 2>&1 & echo pid=$!' }, ctx);
    const [pid] = pidsIn(textOf(out));
    try {
      expect(textOf(out)).not.toMatch(/Background processes/);
      expect(running(pid as number)).toBe(true);
    } finally {
      process.kill(pid as number, 'SIGKILL');
    }
  });

  it('reports a working directory that does not exist', async () => {
    const { ctx } = contextFor(`${cwd}/missing`);
    const out = await callTool(bash, { command: 'true' }, ctx);
    expect([out.isError, textOf(out)]).toEqual([
      true,
      expect.stringMatching(/^Could not start bash in .*missing/),
    ]);
  });

  it('validates its input: timeout in ms, at most 600 000', () => {
    expect(bash.inputSchema.safeParse({ command: 'x', timeout: 600_001 }).success).toBe(false);
    expect(bash.inputSchema.safeParse({ command: '' }).success).toBe(false);
    expect(bash.isReadOnly || bash.isConcurrencySafe({ command: 'ls' })).toBe(false);
  });
});
